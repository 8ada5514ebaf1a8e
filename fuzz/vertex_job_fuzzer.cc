// The Vertex request bodies (CustomJob, HyperparameterTuningJob, TrainingPipeline) and
// the spec records
// and stored JSON read back at start-up: any bytes give a result or an error, never a
// crash, a sanitizer report or an exception.
#include "fuzz/fuzz_input.h"
#include "model/spec_limits.h"
#include "model/spec_record.h"
#include "wire/dialect.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json body = ty::fuzz::Json(data, size);
  if (body.is_discarded()) return 0;
  for (auto parse : {ty::wire::ParseVertexCustomJob, ty::wire::ParseVertexHyperparameterTuningJob,
                     ty::wire::ParseVertexTrainingPipeline}) {
    ty::Result<ty::wire::ParsedJob> parsed = parse(body);
    if (!parsed.ok()) continue;
    (void)ty::model::CheckSpecLimits(parsed->spec, ty::model::SpecLimits{});
    // What the store keeps must read back.
    std::string record = ty::model::EncodeSpecRecord(parsed->spec);
    if (!ty::model::DecodeSpecRecord(record).ok()) __builtin_trap();
    if (!ty::wire::ParseStoredSpec(ty::model::Dialect::kVertex, parsed->kind, parsed->spec_json)
             .ok()) {
      __builtin_trap();
    }
    // Every rendering of what was accepted, a pipeline's backing job too.
    ty::model::Job job;
    job.dialect = ty::model::Dialect::kVertex;
    job.kind = parsed->kind;
    job.spec_json = parsed->spec_json;
    job.spec = parsed->spec;
    (void)ty::wire::RenderJob(job, {.enum_as_int = true, .as_backing_custom_job = true});
  }
  (void)ty::model::DecodeSpecRecord(std::string(ty::fuzz::Text(data, size)));
  return 0;
}
