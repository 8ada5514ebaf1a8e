// Cloud Logging `filter` text (entries:list), parsed, matched and asked for bounds.
#include "fuzz/fuzz_input.h"
#include "logs/log_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto filter = ty::logs::LogFilter::Parse(ty::fuzz::Text(data, size));
  if (!filter.ok()) return 0;
  static const nlohmann::json kEntry = {
      {"logName", "projects/p/logs/ml.googleapis.com%2F1"},
      {"severity", "INFO"},
      {"timestamp", "2026-11-25T10:00:00.000000000Z"},
      {"resource",
       {{"type", "ml_job"}, {"labels", {{"job_id", "1"}, {"task_name", "master-replica-0"}}}}},
      {"textPayload", "hello"}};
  (void)filter->Matches(kEntry);
  (void)filter->TimestampFloor();
  (void)filter->TimestampCeiling();
  (void)filter->RequiredValues("resource.labels.job_id");
  return 0;
}
