// The jobs list `filter` of both dialects, parsed and matched against a job.
#include "fuzz/fuzz_input.h"
#include "model/job.h"
#include "wire/list_filter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ty::model::Job job;
  job.uid = "123";
  job.spec.display_name = "job";
  job.spec.labels = {{"team", "a"}};
  for (ty::model::Dialect d : {ty::model::Dialect::kVertex, ty::model::Dialect::kMlV1}) {
    auto filter = ty::wire::ListFilter::Parse(d, ty::fuzz::Text(data, size));
    if (filter.ok()) {
      job.dialect = d;
      (void)filter->Matches(job);
    }
  }
  return 0;
}
