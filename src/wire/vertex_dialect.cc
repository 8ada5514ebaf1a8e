// Vertex AI v1 `CustomJob` -> JobSpec (its REST reference: CustomJob, CustomJobSpec).
//
// Decisions where the spec leaves room (each enforced and tested):
// - A worker pool is a placeholder when every field it carries has its default value
//   (`{}`, or GAPIC-style `{"replicaCount": "0", "nfsMounts": []}`). Placeholders become
//   empty pools; pool [0] may not be one. A non-placeholder pool needs exactly one of
//   containerSpec / pythonPackageSpec, a machineSpec with a machineType, and
//   replicaCount > 0 (a missing replicaCount reads as 0 because GAPIC omits default
//   scalars, so it is an error rather than an implicit 1); pool [0] needs exactly 1.
// - `acceleratorCount` without an `acceleratorType` is reported on acceleratorCount;
//   an `acceleratorType` with count 0 likewise.
// - The 100,000-character limit on args counts code points of every `args` entry of
//   every pool; the error names the `args` field where the total went over.
// - `scheduling.timeout` of "0s" means unset (7 days); `maxWaitDuration` defaults to
//   24 h only for the FLEX_START strategy, as the spec says, and is otherwise unset.
// - `disableRetries` forces `restartJobOnWorkerRestart` off in the internal spec.
// - Label key errors name `labels`; label value errors name `labels.KEY`.
// - Rarely used messages (`pscInterfaceConfig`) are checked to be objects and kept
//   verbatim; everything else is parsed field by field.
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/text.h"
#include "model/machine_types.h"
#include "model/spec_limits.h"
#include "wire/dialect.h"
#include "wire/study_json.h"
#include "wire/wire_json.h"

namespace ty::wire {

using namespace model;  // The domain the wire dialects read and write.

using internal::IndexPath;
using internal::WireObject;

namespace {

constexpr size_t kMaxArgsChars = 100000;
constexpr size_t kMaxDisplayNameChars = 128;
constexpr int32_t kMinBootDiskGb = 100;
constexpr int32_t kMaxBootDiskGb = 64000;
constexpr DurationMicros kFlexStartDefaultWait = 24LL * 3600 * 1000000;

// Running total of argument characters in the job (the 100,000 limit is per job).
struct ArgsBudget {
  size_t used = 0;
  Status Add(const std::vector<std::string>& args, const std::string& path) {
    for (const std::string& a : args) used += internal::Utf8Length(a);
    if (used > kMaxArgsChars) {
      return FieldError(path, "all args of a job together must not exceed 100000 characters");
    }
    return Status::Ok();
  }
};

// Reads an array field whose items are messages; `parse_item` validates one item and
// returns its canonical form. Absent or null: nothing recorded.
template <typename F>
Status ReadMessageArray(WireObject& obj, std::string_view field, size_t max_items, F parse_item) {
  const nlohmann::json* v = obj.Find(field);
  if (v == nullptr) return Status::Ok();
  const std::string path = obj.PathOf(field);
  if (!v->is_array()) return FieldError(path, "must be an array");
  if (v->size() > max_items) {
    return FieldError(path, "must have at most " + std::to_string(max_items) + " entries");
  }
  nlohmann::json canon = nlohmann::json::array();
  for (size_t i = 0; i < v->size(); ++i) {
    ASSIGN_OR_RETURN(nlohmann::json item, parse_item((*v)[i], IndexPath(path, i)));
    canon.push_back(std::move(item));
  }
  obj.SetCanonical(field, std::move(canon));
  return Status::Ok();
}

// A required string field of `obj` that must be non-empty.
Status RequireString(WireObject& obj, std::string_view field, std::string* out) {
  RETURN_IF_ERROR(obj.String(field, out));
  if (out->empty()) return FieldError(obj.PathOf(field), "is required");
  return Status::Ok();
}

Status ReadEnv(WireObject& obj, std::vector<EnvVar>* out) {
  return ReadMessageArray(
      obj, "env", kMaxEnvEntries,
      [out](const nlohmann::json& item, const std::string& path) -> Result<nlohmann::json> {
        ASSIGN_OR_RETURN(WireObject e, WireObject::Open(item, path, {"name", "value"}));
        EnvVar var;
        RETURN_IF_ERROR(RequireString(e, "name", &var.name));
        if (!internal::IsCIdentifier(var.name)) {
          return FieldError(e.PathOf("name"),
                            "\"" + var.name + "\" is not a valid environment variable name");
        }
        RETURN_IF_ERROR(e.String("value", &var.value));
        out->push_back(std::move(var));
        return e.canonical();
      });
}

Result<nlohmann::json> ParseContainerSpec(const nlohmann::json& v, const std::string& path,
                                          ArgsBudget* budget, ContainerSpec* out) {
  ASSIGN_OR_RETURN(WireObject o, WireObject::Open(v, path, {"imageUri", "command", "args", "env"}));
  RETURN_IF_ERROR(RequireString(o, "imageUri", &out->image_uri));
  RETURN_IF_ERROR(o.StringList("command", &out->command, kMaxArgvListEntries));
  RETURN_IF_ERROR(o.StringList("args", &out->args, kMaxArgvListEntries));
  RETURN_IF_ERROR(budget->Add(out->args, o.PathOf("args")));
  RETURN_IF_ERROR(ReadEnv(o, &out->env));
  return o.canonical();
}

Result<nlohmann::json> ParsePythonPackageSpec(const nlohmann::json& v, const std::string& path,
                                              ArgsBudget* budget, PythonPackageSpec* out) {
  ASSIGN_OR_RETURN(WireObject o, WireObject::Open(v, path,
                                                  {"executorImageUri", "packageUris",
                                                   "pythonModule", "args", "env"}));
  RETURN_IF_ERROR(RequireString(o, "executorImageUri", &out->executor_image_uri));
  RETURN_IF_ERROR(o.StringList("packageUris", &out->package_uris, kMaxPackageUris));
  if (out->package_uris.empty()) return FieldError(o.PathOf("packageUris"), "is required");
  for (size_t i = 0; i < out->package_uris.size(); ++i) {
    RETURN_IF_ERROR(internal::CheckGcsUri(out->package_uris[i],
                                          IndexPath(o.PathOf("packageUris"), i), /*object=*/true));
  }
  RETURN_IF_ERROR(RequireString(o, "pythonModule", &out->python_module));
  RETURN_IF_ERROR(o.StringList("args", &out->args, kMaxArgvListEntries));
  RETURN_IF_ERROR(budget->Add(out->args, o.PathOf("args")));
  RETURN_IF_ERROR(ReadEnv(o, &out->env));
  return o.canonical();
}

Result<nlohmann::json> ParseReservationAffinity(const nlohmann::json& v, const std::string& path) {
  ASSIGN_OR_RETURN(WireObject o,
                   WireObject::Open(v, path, {"reservationAffinityType", "key", "values"}));
  std::string type, key;
  std::vector<std::string> values;
  RETURN_IF_ERROR(
      o.Enum("reservationAffinityType", model::internal::VertexReservationAffinityTypes(), &type));
  RETURN_IF_ERROR(o.String("key", &key));
  RETURN_IF_ERROR(o.StringList("values", &values, kMaxReservationValues));
  return o.canonical();
}

Result<nlohmann::json> ParseMachineSpec(const nlohmann::json& v, const std::string& path,
                                        MachineSpec* out) {
  ASSIGN_OR_RETURN(WireObject o,
                   WireObject::Open(v, path,
                                    {"machineType", "acceleratorType", "acceleratorCount",
                                     "gpuPartitionSize", "tpuTopology", "reservationAffinity"}));
  RETURN_IF_ERROR(RequireString(o, "machineType", &out->machine_type));
  if (!model::internal::IsVertexMachineType(out->machine_type)) {
    return FieldError(o.PathOf("machineType"),
                      "unknown machine type \"" + out->machine_type + "\"");
  }
  RETURN_IF_ERROR(
      o.Enum("acceleratorType", model::internal::VertexAcceleratorTypes(), &out->accelerator_type));
  if (out->accelerator_type == "ACCELERATOR_TYPE_UNSPECIFIED") out->accelerator_type.clear();
  RETURN_IF_ERROR(o.Int32("acceleratorCount", &out->accelerator_count));
  std::string partition, topology;
  RETURN_IF_ERROR(o.String("gpuPartitionSize", &partition));
  RETURN_IF_ERROR(o.String("tpuTopology", &topology));
  if (const nlohmann::json* ra = o.Find("reservationAffinity")) {
    ASSIGN_OR_RETURN(nlohmann::json canon,
                     ParseReservationAffinity(*ra, o.PathOf("reservationAffinity")));
    o.SetCanonical("reservationAffinity", std::move(canon));
  }

  const std::string count_path = o.PathOf("acceleratorCount");
  if (out->accelerator_count < 0) return FieldError(count_path, "must not be negative");
  if (out->accelerator_type.empty() && out->accelerator_count > 0) {
    return FieldError(count_path, "must be 0 when acceleratorType is not set");
  }
  if (!out->accelerator_type.empty() && out->accelerator_count == 0) {
    return FieldError(count_path, "must be greater than 0 when acceleratorType is set");
  }
  if (!partition.empty() && out->accelerator_count != 1) {
    return FieldError(count_path, "must be 1 when gpuPartitionSize is set");
  }
  RETURN_IF_ERROR(model::internal::CheckAcceleratorCount(out->machine_type, out->accelerator_type,
                                                         out->accelerator_count, count_path));
  return o.canonical();
}

Result<nlohmann::json> ParseDiskSpec(const nlohmann::json& v, const std::string& path,
                                     DiskSpec* out) {
  ASSIGN_OR_RETURN(WireObject o, WireObject::Open(v, path, {"bootDiskType", "bootDiskSizeGb"}));
  RETURN_IF_ERROR(o.String("bootDiskType", &out->boot_disk_type));
  const std::string& t = out->boot_disk_type;
  if (!t.empty() && t != "pd-ssd" && t != "pd-standard" && t != "hyperdisk-balanced") {
    return FieldError(o.PathOf("bootDiskType"),
                      "must be one of pd-ssd, pd-standard, hyperdisk-balanced");
  }
  RETURN_IF_ERROR(o.Int32("bootDiskSizeGb", &out->boot_disk_size_gb));
  // 0 is the proto3 default ("use 100"); anything else must be in range.
  if (out->boot_disk_size_gb != 0 &&
      (out->boot_disk_size_gb < kMinBootDiskGb || out->boot_disk_size_gb > kMaxBootDiskGb)) {
    return FieldError(o.PathOf("bootDiskSizeGb"), "must be between 100 and 64000");
  }
  return o.canonical();
}

Result<nlohmann::json> ParseNfsMount(const nlohmann::json& v, const std::string& path) {
  ASSIGN_OR_RETURN(WireObject o, WireObject::Open(v, path, {"server", "path", "mountPoint"}));
  std::string server, remote_path, mount_point;
  RETURN_IF_ERROR(RequireString(o, "server", &server));
  RETURN_IF_ERROR(RequireString(o, "path", &remote_path));
  if (remote_path[0] != '/') return FieldError(o.PathOf("path"), "must start with '/'");
  RETURN_IF_ERROR(RequireString(o, "mountPoint", &mount_point));
  return o.canonical();
}

Result<nlohmann::json> ParseLustreMount(const nlohmann::json& v, const std::string& path) {
  ASSIGN_OR_RETURN(
      WireObject o,
      WireObject::Open(v, path, {"instanceIp", "volumeHandle", "filesystem", "mountPoint"}));
  for (std::string_view field : {"instanceIp", "volumeHandle", "filesystem", "mountPoint"}) {
    std::string value;
    RETURN_IF_ERROR(RequireString(o, field, &value));
  }
  return o.canonical();
}

// proto3 default value: what a client omits (or GAPIC sends for an unset field).
bool IsDefaultValue(const nlohmann::json& v) {
  if (v.is_null()) return true;
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number()) return v.get<double>() == 0;
  if (v.is_string())
    return v.get_ref<const std::string&>().empty() || v.get_ref<const std::string&>() == "0";
  return v.empty();  // Array or object.
}

// Parses workerPoolSpecs[index]. A placeholder leaves `*out` empty (replica_count 0).
Result<nlohmann::json> ParseWorkerPool(const nlohmann::json& v, size_t index,
                                       const std::string& path, ArgsBudget* budget,
                                       WorkerPool* out) {
  ASSIGN_OR_RETURN(WireObject o,
                   WireObject::Open(v, path,
                                    {"containerSpec", "pythonPackageSpec", "machineSpec",
                                     "replicaCount", "diskSpec", "nfsMounts", "lustreMounts"}));
  bool placeholder = true;
  for (auto it = v.begin(); it != v.end(); ++it)
    placeholder = placeholder && IsDefaultValue(it.value());
  if (placeholder) {
    if (index == 0) return FieldError(path, "the first worker pool must not be empty");
    return nlohmann::json::object();
  }

  const nlohmann::json* container = o.Find("containerSpec");
  const nlohmann::json* package = o.Find("pythonPackageSpec");
  if (container != nullptr && package != nullptr) {
    return FieldError(o.PathOf("pythonPackageSpec"),
                      "only one of containerSpec and pythonPackageSpec may be set");
  }
  if (container != nullptr) {
    out->container.emplace();
    ASSIGN_OR_RETURN(nlohmann::json c, ParseContainerSpec(*container, o.PathOf("containerSpec"),
                                                          budget, &*out->container));
    o.SetCanonical("containerSpec", std::move(c));
  } else if (package != nullptr) {
    out->python_package.emplace();
    ASSIGN_OR_RETURN(nlohmann::json p,
                     ParsePythonPackageSpec(*package, o.PathOf("pythonPackageSpec"), budget,
                                            &*out->python_package));
    o.SetCanonical("pythonPackageSpec", std::move(p));
  } else {
    return FieldError(path, "one of containerSpec or pythonPackageSpec is required");
  }

  const nlohmann::json* machine = o.Find("machineSpec");
  if (machine == nullptr) return FieldError(o.PathOf("machineSpec"), "is required");
  ASSIGN_OR_RETURN(nlohmann::json m,
                   ParseMachineSpec(*machine, o.PathOf("machineSpec"), &out->machine));
  o.SetCanonical("machineSpec", std::move(m));

  RETURN_IF_ERROR(o.Int64("replicaCount", &out->replica_count));
  if (out->replica_count <= 0)
    return FieldError(o.PathOf("replicaCount"), "must be greater than 0");
  if (index == 0 && out->replica_count != 1) {
    return FieldError(o.PathOf("replicaCount"), "must be 1 for the first worker pool (the chief)");
  }

  if (const nlohmann::json* disk = o.Find("diskSpec")) {
    ASSIGN_OR_RETURN(nlohmann::json d, ParseDiskSpec(*disk, o.PathOf("diskSpec"), &out->disk));
    o.SetCanonical("diskSpec", std::move(d));
  }
  RETURN_IF_ERROR(ReadMessageArray(o, "nfsMounts", kMaxNfsMounts, ParseNfsMount));
  RETURN_IF_ERROR(ReadMessageArray(o, "lustreMounts", kMaxLustreMounts, ParseLustreMount));
  return o.canonical();
}

Result<nlohmann::json> ParseVertexScheduling(const nlohmann::json& v, const std::string& path,
                                             Scheduling* out) {
  ASSIGN_OR_RETURN(WireObject o,
                   WireObject::Open(v, path,
                                    {"timeout", "restartJobOnWorkerRestart", "strategy",
                                     "disableRetries", "maxWaitDuration"}));
  DurationMicros timeout = 0;
  RETURN_IF_ERROR(o.Duration("timeout", &timeout));
  if (timeout < 0) return FieldError(o.PathOf("timeout"), "must not be negative");
  if (timeout > 0) out->timeout = timeout;
  RETURN_IF_ERROR(o.Bool("restartJobOnWorkerRestart", &out->restart_job_on_worker_restart));
  std::string strategy;
  RETURN_IF_ERROR(o.Enum("strategy", model::internal::VertexSchedulingStrategies(), &strategy));
  out->spot = strategy == "SPOT";
  RETURN_IF_ERROR(o.Bool("disableRetries", &out->disable_retries));
  if (out->disable_retries) out->restart_job_on_worker_restart = false;
  RETURN_IF_ERROR(o.Duration("maxWaitDuration", &out->max_wait));
  if (out->max_wait < 0) return FieldError(o.PathOf("maxWaitDuration"), "must not be negative");
  if (strategy == "FLEX_START" && !o.Has("maxWaitDuration")) out->max_wait = kFlexStartDefaultWait;
  return o.canonical();
}

Result<nlohmann::json> ParseOutputDirectory(const nlohmann::json& v, const std::string& path,
                                            std::string* out) {
  ASSIGN_OR_RETURN(WireObject o, WireObject::Open(v, path, {"outputUriPrefix"}));
  std::string prefix;
  RETURN_IF_ERROR(RequireString(o, "outputUriPrefix", &prefix));
  RETURN_IF_ERROR(internal::CheckGcsUri(prefix, o.PathOf("outputUriPrefix"), /*object=*/false));
  if (prefix.back() != '/') prefix += '/';
  *out = prefix;
  return o.canonical();
}

// A job's tensorboard: Vertex's resource name, and somewhere for the logs it indexes
// (AIP_TENSORBOARD_LOG_DIR is <baseOutputDirectory>/logs/). Whether it exists and is
// the project's is the service's question (JobServiceOptions::check_tensorboard).
Status CheckTensorboardName(const JobSpec& spec, const std::string& path,
                            const std::string& base_path) {
  if (spec.tensorboard.empty()) return Status::Ok();
  const std::vector<std::string_view> parts = SplitOn(spec.tensorboard, '/');
  bool ok = parts.size() == 6 && parts[0] == "projects" && parts[2] == "locations" &&
            parts[4] == "tensorboards";
  for (size_t i = 1; ok && i < parts.size(); i += 2) ok = !parts[i].empty();
  if (!ok) {
    return FieldError(path, "must be projects/{project}/locations/{location}/tensorboards/{id}");
  }
  if (spec.base_output_directory.empty()) {
    return FieldError(base_path + ".outputUriPrefix",
                      "is required with tensorboard: the TensorBoard logs go to "
                      "<outputUriPrefix>/logs/ (AIP_TENSORBOARD_LOG_DIR)");
  }
  return Status::Ok();
}

Result<nlohmann::json> ParseJobSpec(const nlohmann::json& v, const std::string& path,
                                    JobSpec* spec) {
  ASSIGN_OR_RETURN(
      WireObject o,
      WireObject::Open(
          v, path,
          {"workerPoolSpecs", "scheduling", "serviceAccount", "network", "reservedIpRanges",
           "baseOutputDirectory", "tensorboard", "enableWebAccess", "enableDashboardAccess",
           "experiment", "experimentRun", "persistentResourceId", "protectedArtifactLocationId",
           "models", "pscInterfaceConfig"}));
  const nlohmann::json* pools = o.Find("workerPoolSpecs");
  const std::string pools_path = o.PathOf("workerPoolSpecs");
  if (pools == nullptr || (pools->is_array() && pools->empty()))
    return FieldError(pools_path, "is required");
  if (!pools->is_array()) return FieldError(pools_path, "must be an array");
  if (pools->size() > static_cast<size_t>(kMaxPools)) {
    return FieldError(
        pools_path, "must have at most 4 entries (chief, workers, parameter servers, evaluators)");
  }
  ArgsBudget budget;
  nlohmann::json pools_canon = nlohmann::json::array();
  spec->pools.clear();
  for (size_t i = 0; i < pools->size(); ++i) {
    WorkerPool pool;
    ASSIGN_OR_RETURN(nlohmann::json c,
                     ParseWorkerPool((*pools)[i], i, IndexPath(pools_path, i), &budget, &pool));
    pools_canon.push_back(std::move(c));
    spec->pools.push_back(std::move(pool));
  }
  while (!spec->pools.empty() && spec->pools.back().empty()) spec->pools.pop_back();
  o.SetCanonical("workerPoolSpecs", std::move(pools_canon));

  if (const nlohmann::json* s = o.Find("scheduling")) {
    ASSIGN_OR_RETURN(nlohmann::json c,
                     ParseVertexScheduling(*s, o.PathOf("scheduling"), &spec->scheduling));
    o.SetCanonical("scheduling", std::move(c));
  }
  std::string text;
  std::vector<std::string> list;
  bool flag = false;
  RETURN_IF_ERROR(o.String("serviceAccount", &text));
  RETURN_IF_ERROR(o.String("network", &text));
  RETURN_IF_ERROR(o.StringList("reservedIpRanges", &list, kMaxReservedIpRanges));
  if (const nlohmann::json* out_dir = o.Find("baseOutputDirectory")) {
    ASSIGN_OR_RETURN(nlohmann::json c,
                     ParseOutputDirectory(*out_dir, o.PathOf("baseOutputDirectory"),
                                          &spec->base_output_directory));
    o.SetCanonical("baseOutputDirectory", std::move(c));
  }
  RETURN_IF_ERROR(o.String("tensorboard", &spec->tensorboard));
  RETURN_IF_ERROR(
      CheckTensorboardName(*spec, o.PathOf("tensorboard"), o.PathOf("baseOutputDirectory")));
  RETURN_IF_ERROR(o.Bool("enableWebAccess", &spec->enable_web_access));
  RETURN_IF_ERROR(o.Bool("enableDashboardAccess", &flag));
  RETURN_IF_ERROR(o.String("experiment", &text));
  RETURN_IF_ERROR(o.String("experimentRun", &text));
  RETURN_IF_ERROR(o.String("persistentResourceId", &text));
  RETURN_IF_ERROR(o.String("protectedArtifactLocationId", &text));
  RETURN_IF_ERROR(o.StringList("models", &list, kMaxModels));
  RETURN_IF_ERROR(o.OpaqueObject("pscInterfaceConfig"));
  return o.canonical();
}

Result<nlohmann::json> ParseEncryptionSpec(const nlohmann::json& v, const std::string& path) {
  ASSIGN_OR_RETURN(WireObject o, WireObject::Open(v, path, {"kmsKeyName"}));
  std::string key;
  RETURN_IF_ERROR(o.String("kmsKeyName", &key));
  return o.canonical();
}

// displayName, required and at most 128 characters (both job kinds).
Status ParseDisplayName(WireObject& o, JobSpec* spec) {
  RETURN_IF_ERROR(RequireString(o, "displayName", &spec->display_name));
  if (internal::Utf8Length(spec->display_name) > kMaxDisplayNameChars) {
    return FieldError("displayName", "must be at most 128 characters");
  }
  // A name is shown in tables, logs and terminals: no NUL, no control characters, no
  // bidirectional controls (a right-to-left override makes a name read backwards).
  if (internal::HasDisplayControl(spec->display_name)) {
    return FieldError("displayName",
                      "must not hold control characters (C0, C1 or bidirectional controls)");
  }
  return Status::Ok();
}

// labels and encryptionSpec (both job kinds).
Status ParseLabelsAndEncryption(WireObject& o, JobSpec* spec) {
  RETURN_IF_ERROR(o.StringMap("labels", &spec->labels, kMaxLabelEntries));
  RETURN_IF_ERROR(internal::ValidateLabels("labels", spec->labels));
  if (const nlohmann::json* enc = o.Find("encryptionSpec")) {
    ASSIGN_OR_RETURN(nlohmann::json c, ParseEncryptionSpec(*enc, "encryptionSpec"));
    o.SetCanonical("encryptionSpec", std::move(c));
  }
  return Status::Ok();
}

}  // namespace

Result<ParsedJob> ParseVertexCustomJob(const nlohmann::json& body) {
  ASSIGN_OR_RETURN(
      WireObject o,
      WireObject::Open(body, "", {"displayName", "jobSpec", "labels", "encryptionSpec"},
                       {"name", "state", "createTime", "startTime", "endTime", "updateTime",
                        "error", "webAccessUris", "satisfiesPzs", "satisfiesPzi"}));
  ParsedJob parsed;
  JobSpec& spec = parsed.spec;
  spec.dialect = Dialect::kVertex;

  RETURN_IF_ERROR(ParseDisplayName(o, &spec));
  const nlohmann::json* job_spec = o.Find("jobSpec");
  if (job_spec == nullptr) return FieldError("jobSpec", "is required");
  ASSIGN_OR_RETURN(nlohmann::json job_spec_canon, ParseJobSpec(*job_spec, "jobSpec", &spec));
  o.SetCanonical("jobSpec", std::move(job_spec_canon));
  RETURN_IF_ERROR(ParseLabelsAndEncryption(o, &spec));
  parsed.spec_json = o.canonical().dump();
  return parsed;
}

Result<ParsedJob> ParseVertexHyperparameterTuningJob(const nlohmann::json& body) {
  ASSIGN_OR_RETURN(
      WireObject o,
      WireObject::Open(body, "",
                       {"displayName", "studySpec", "maxTrialCount", "parallelTrialCount",
                        "maxFailedTrialCount", "trialJobSpec", "labels", "encryptionSpec"},
                       {"name", "state", "createTime", "startTime", "endTime", "updateTime",
                        "error", "trials", "satisfiesPzs", "satisfiesPzi"}));
  ParsedJob parsed;
  JobSpec& spec = parsed.spec;
  spec.dialect = Dialect::kVertex;
  RETURN_IF_ERROR(ParseDisplayName(o, &spec));
  StudySpec study;
  const nlohmann::json* study_spec = o.Find("studySpec");
  if (study_spec == nullptr) return FieldError("studySpec", "is required");
  ASSIGN_OR_RETURN(nlohmann::json study_canon,
                   ParseVertexStudySpec(*study_spec, "studySpec", &study));
  o.SetCanonical("studySpec", std::move(study_canon));
  for (const auto& [field, out, most] :
       {std::tuple{"maxTrialCount", &study.max_trials, kMaxStudyTrials},
        std::tuple{"parallelTrialCount", &study.parallel_trials, kMaxParallelTrials}}) {
    if (!o.Has(field)) return FieldError(field, "is required");
    RETURN_IF_ERROR(o.Int32(field, out));
    if (*out < 1 || *out > most) {
      return FieldError(field, "must be between 1 and " + std::to_string(most));
    }
  }
  RETURN_IF_ERROR(o.Int32("maxFailedTrialCount", &study.max_failed_trials));
  if (study.max_failed_trials < 0 || study.max_failed_trials > study.max_trials) {
    return FieldError("maxFailedTrialCount", "must be between 0 and maxTrialCount");
  }
  const nlohmann::json* trial_spec = o.Find("trialJobSpec");
  if (trial_spec == nullptr) return FieldError("trialJobSpec", "is required");
  ASSIGN_OR_RETURN(nlohmann::json trial_canon, ParseJobSpec(*trial_spec, "trialJobSpec", &spec));
  o.SetCanonical("trialJobSpec", std::move(trial_canon));
  RETURN_IF_ERROR(ParseLabelsAndEncryption(o, &spec));
  spec.study = std::make_shared<const StudySpec>(std::move(study));
  parsed.spec_json = o.canonical().dump();
  parsed.kind = JobKind::kStudy;
  return parsed;
}

namespace {

// The one training task this server runs (docs/contracts/vertex-v1.md; the SDK's
// schema.training_job.definition.custom_task).
constexpr char kCustomTaskSchema[] =
    "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml";

// The CustomJob a pipeline runs: its task inputs as the jobSpec, its display name and
// labels. Errors name the pipeline's fields (`trainingTaskInputs.workerPoolSpecs[0]…`).
Result<ParsedJob> BackingCustomJob(const nlohmann::json& pipeline_canonical) {
  ParsedJob parsed;
  JobSpec& spec = parsed.spec;
  spec.dialect = Dialect::kVertex;
  // Stored records are read back through here too: no member is trusted to exist or
  // to have its type.
  auto name = pipeline_canonical.find("displayName");
  if (name != pipeline_canonical.end() && name->is_string()) spec.display_name = *name;
  auto inputs = pipeline_canonical.find("trainingTaskInputs");
  if (inputs == pipeline_canonical.end()) return FieldError("trainingTaskInputs", "is required");
  ASSIGN_OR_RETURN(nlohmann::json job_spec, ParseJobSpec(*inputs, "trainingTaskInputs", &spec));
  nlohmann::json custom_job = {{"displayName", spec.display_name}, {"jobSpec", job_spec}};
  for (const char* key : {"labels", "encryptionSpec"}) {
    if (auto it = pipeline_canonical.find(key); it != pipeline_canonical.end()) {
      custom_job[key] = *it;
    }
  }
  if (auto labels = pipeline_canonical.find("labels");
      labels != pipeline_canonical.end() && labels->is_object()) {
    for (const auto& [key, value] : labels->items()) {
      if (value.is_string()) spec.labels[key] = value.get<std::string>();
    }
  }
  parsed.spec_json = custom_job.dump();
  return parsed;
}

}  // namespace

Result<ParsedJob> ParseVertexTrainingPipeline(const nlohmann::json& body) {
  ASSIGN_OR_RETURN(WireObject o,
                   WireObject::Open(body, "",
                                    {"displayName", "trainingTaskDefinition", "trainingTaskInputs",
                                     "modelToUpload", "inputDataConfig", "labels", "encryptionSpec",
                                     "parentModel", "modelId"},
                                    {"name", "state", "createTime", "startTime", "endTime",
                                     "updateTime", "error", "trainingTaskMetadata"}));
  JobSpec names;  // displayName and labels, checked as a CustomJob's.
  RETURN_IF_ERROR(ParseDisplayName(o, &names));
  std::string definition;
  RETURN_IF_ERROR(RequireString(o, "trainingTaskDefinition", &definition));
  if (definition != kCustomTaskSchema) {
    return FieldError("trainingTaskDefinition", std::string("only the custom training task (") +
                                                    kCustomTaskSchema +
                                                    ") runs here; AutoML tasks do not");
  }
  // No Model registry or datasets here: a trained model stays where the trainer wrote it
  // (baseOutputDirectory, AIP_MODEL_DIR), and trainers read their data from buckets.
  for (const char* field : {"modelToUpload", "parentModel", "modelId"}) {
    if (o.Has(field)) {
      return FieldError(field,
                        "is not supported: this server has no Model registry; the trainer's "
                        "model stays under baseOutputDirectory (AIP_MODEL_DIR)");
    }
  }
  if (o.Has("inputDataConfig")) {
    return FieldError("inputDataConfig",
                      "is not supported: this server has no managed datasets; read the data "
                      "from a bucket (/gcs/BUCKET in replicas)");
  }
  const nlohmann::json* inputs = o.Find("trainingTaskInputs");
  if (inputs == nullptr) return FieldError("trainingTaskInputs", "is required");
  RETURN_IF_ERROR(ParseLabelsAndEncryption(o, &names));
  nlohmann::json canonical = o.canonical();
  canonical["trainingTaskDefinition"] = definition;
  canonical["trainingTaskInputs"] = *inputs;  // A Struct: kept as the client wrote it.
  ASSIGN_OR_RETURN(ParsedJob parsed, BackingCustomJob(canonical));
  parsed.spec_json = canonical.dump();
  parsed.kind = JobKind::kPipeline;
  return parsed;
}

Result<std::string> BackingCustomJobJson(const std::string& pipeline_spec_json) {
  nlohmann::json pipeline =
      nlohmann::json::parse(pipeline_spec_json, nullptr, /*allow_exceptions=*/false);
  if (!pipeline.is_object() || !pipeline.contains("trainingTaskInputs")) {
    return Internal("stored training pipeline has no trainingTaskInputs");
  }
  ASSIGN_OR_RETURN(ParsedJob parsed, BackingCustomJob(pipeline));
  return parsed.spec_json;
}

}  // namespace ty::wire
