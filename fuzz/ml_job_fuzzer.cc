// ml v1 request bodies (jobs, tuning jobs) and their stored JSON: a result or an
// error for any bytes, and what was accepted reads back.
#include "fuzz/fuzz_input.h"
#include "model/spec_limits.h"
#include "wire/dialect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json body = ty::fuzz::Json(data, size);
  if (body.is_discarded()) return 0;
  ty::Result<ty::wire::ParsedJob> parsed = ty::wire::ParseMlJob(body);
  if (!parsed.ok()) return 0;
  (void)ty::model::CheckSpecLimits(parsed->spec, ty::model::SpecLimits{});
  if (!ty::wire::ParseStoredSpec(ty::model::Dialect::kMlV1, parsed->kind, parsed->spec_json).ok()) {
    __builtin_trap();
  }
  return 0;
}
