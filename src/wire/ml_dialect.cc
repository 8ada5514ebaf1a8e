// AI Platform Training (ml v1) `Job` -> JobSpec (its REST reference: Job, TrainingInput).
//
// Decisions where the spec leaves room (each enforced and tested):
// - `jobId`: letters, digits and underscores, starting with a letter, at most 128
//   characters (the spec found no maximum; 128 matches Vertex display names).
// - `scaleTier` missing reads as BASIC: the spec calls it required, but it is proto3
//   enum value 0, so a client that omits it means BASIC and Google cannot tell.
// - ml v1 enums are accepted by name only: every ml v1 client sends names
//   (docs/contracts/client-wire.md §4) and the spec gives no numbers to map.
// - `trainingInput.hyperparameters` makes a tuning job (study_json.h has its rules);
//   `predictionInput` is rejected (batch prediction is out of scope); `etag` is
//   ignored on create.
// - Machine types (`masterType`, ...) and replica counts are only allowed with CUSTOM;
//   per-role `*Config` messages are allowed with any tier.
// - Machine categories: Compute Engine (docs/contracts/ml-v1.md §9 list), legacy (§9 table), and
//   `cloud_tpu`, which pairs with either (it is the TPU worker of both kinds of job).
//   `acceleratorConfig` is allowed on Compute Engine types (GPU types) and on
//   `cloud_tpu` (TPU types; default TPU_V2 x 8 when absent).
// - `workerConfig.imageUri` (etc.) defaults to `masterConfig.imageUri`; a role config
//   may set an image only in a custom-container job. A role's container command/args
//   default to the master's; args default to `trainingInput.args`.
// - `jobDir` and `packageUris` must be gs:// URIs (buckets are directories here).
// - Disk sizes follow the Vertex range (100..64000 GB, 0 = default) since both map
//   to the same internal disk.
// - `useChiefInTfConfig` is only allowed for custom-container jobs (docs/contracts/ml-v1.md §4).
//
// Predefined scale tiers (the spec leaves the composition to the implementation):
//
//   tier        master               workers                  parameter servers
//   BASIC       1 x standard         -                        -
//   STANDARD_1  1 x standard         4 x complex_model_s      2 x standard
//   PREMIUM_1   1 x complex_model_l  8 x complex_model_l      3 x large_model
//   BASIC_GPU   1 x standard_gpu     -                        -
//   BASIC_TPU   1 x standard         1 x cloud_tpu (TPU_V2x8) -
#include <cctype>
#include <nlohmann/json.hpp>

#include "images/runtimes.h"
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

constexpr size_t kMaxJobIdChars = 128;
constexpr DurationMicros kMinMaxWait = 1800LL * 1000000;
constexpr int32_t kMaxPriority = 1000;

constexpr internal::EnumValue kScaleTiers[] = {
    {"BASIC", 0},     {"STANDARD_1", 1}, {"PREMIUM_1", 3},
    {"BASIC_GPU", 6}, {"BASIC_TPU", 7},  {"CUSTOM", 5},
};

enum class Category { kNone, kComputeEngine, kLegacy, kCloudTpu };

Category CategoryOf(const std::string& type) {
  std::string accel;
  int count = 0;
  if (type.empty()) return Category::kNone;
  if (type == model::internal::kMlCloudTpu) return Category::kCloudTpu;
  if (model::internal::MlLegacyType(type, &accel, &count)) return Category::kLegacy;
  if (model::internal::IsMlComputeEngineType(type)) return Category::kComputeEngine;
  return Category::kNone;
}

// A parsed ReplicaConfig (docs/contracts/ml-v1.md §4).
struct ReplicaConfig {
  std::string path;  // Wire path of the config, for cross-field errors.
  std::string image_uri;
  bool has_accelerator = false;
  std::string accelerator_type;
  int64_t accelerator_count = 0;
  std::vector<std::string> command;
  std::vector<std::string> args;
  DiskSpec disk;
};

Result<nlohmann::json> ParseAcceleratorConfig(const nlohmann::json& v, const std::string& path,
                                              ReplicaConfig* out) {
  ASSIGN_OR_RETURN(WireObject o, WireObject::Open(v, path, {"count", "type"}));
  RETURN_IF_ERROR(o.Int64("count", &out->accelerator_count));
  if (out->accelerator_count <= 0) return FieldError(o.PathOf("count"), "must be greater than 0");
  // Numbers as the discovery document orders them: the public v1 proto predates most
  // accelerators (uncertain; no client here sends ml v1 enums as numbers).
  RETURN_IF_ERROR(o.Enum("type", model::internal::MlAcceleratorTypes(), &out->accelerator_type));
  if (out->accelerator_type.empty() || out->accelerator_type == "ACCELERATOR_TYPE_UNSPECIFIED") {
    return FieldError(o.PathOf("type"), "is required");
  }
  out->has_accelerator = true;
  return o.canonical();
}

Result<nlohmann::json> ParseDiskConfig(const nlohmann::json& v, const std::string& path,
                                       DiskSpec* out) {
  ASSIGN_OR_RETURN(WireObject o, WireObject::Open(v, path, {"bootDiskSizeGb", "bootDiskType"}));
  RETURN_IF_ERROR(o.Int32("bootDiskSizeGb", &out->boot_disk_size_gb));
  if (out->boot_disk_size_gb != 0 &&
      (out->boot_disk_size_gb < 100 || out->boot_disk_size_gb > 64000)) {
    return FieldError(o.PathOf("bootDiskSizeGb"), "must be between 100 and 64000");
  }
  RETURN_IF_ERROR(o.String("bootDiskType", &out->boot_disk_type));
  if (!out->boot_disk_type.empty() && out->boot_disk_type != "pd-ssd" &&
      out->boot_disk_type != "pd-standard") {
    return FieldError(o.PathOf("bootDiskType"), "must be pd-ssd or pd-standard");
  }
  return o.canonical();
}

// Reads `*Config` field `field` of `ti` into `*out` (untouched if unset).
Status ReadReplicaConfig(WireObject& ti, std::string_view field, ReplicaConfig* out) {
  out->path = ti.PathOf(field);
  const nlohmann::json* v = ti.Find(field);
  if (v == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(WireObject o,
                   WireObject::Open(*v, out->path,
                                    {"imageUri", "acceleratorConfig", "containerCommand",
                                     "containerArgs", "tpuTfVersion", "diskConfig"}));
  RETURN_IF_ERROR(o.String("imageUri", &out->image_uri));
  if (const nlohmann::json* a = o.Find("acceleratorConfig")) {
    ASSIGN_OR_RETURN(nlohmann::json c,
                     ParseAcceleratorConfig(*a, o.PathOf("acceleratorConfig"), out));
    o.SetCanonical("acceleratorConfig", std::move(c));
  }
  RETURN_IF_ERROR(o.StringList("containerCommand", &out->command, kMaxArgvListEntries));
  RETURN_IF_ERROR(o.StringList("containerArgs", &out->args, kMaxArgvListEntries));
  std::string tpu_tf_version;
  RETURN_IF_ERROR(o.String("tpuTfVersion", &tpu_tf_version));
  if (const nlohmann::json* d = o.Find("diskConfig")) {
    ASSIGN_OR_RETURN(nlohmann::json c, ParseDiskConfig(*d, o.PathOf("diskConfig"), &out->disk));
    o.SetCanonical("diskConfig", std::move(c));
  }
  ti.SetCanonical(field, o.canonical());
  return Status::Ok();
}

Result<nlohmann::json> ParseMlScheduling(const nlohmann::json& v, const std::string& path,
                                         Scheduling* out) {
  ASSIGN_OR_RETURN(WireObject o,
                   WireObject::Open(v, path, {"maxRunningTime", "maxWaitTime", "priority"}));
  DurationMicros running = 0;
  RETURN_IF_ERROR(o.Duration("maxRunningTime", &running));
  if (running < 0) return FieldError(o.PathOf("maxRunningTime"), "must not be negative");
  if (running > 0) out->timeout = running;  // "0s" is the proto3 default: unset.
  RETURN_IF_ERROR(o.Duration("maxWaitTime", &out->max_wait));
  if (o.Has("maxWaitTime") && out->max_wait < kMinMaxWait) {
    return FieldError(o.PathOf("maxWaitTime"), "must be at least 1800s");
  }
  RETURN_IF_ERROR(o.Int32("priority", &out->priority));
  if (out->priority < 0 || out->priority > kMaxPriority) {
    return FieldError(o.PathOf("priority"), "must be between 0 and 1000");
  }
  return o.canonical();
}

Result<nlohmann::json> ParseEncryptionConfig(const nlohmann::json& v, const std::string& path) {
  ASSIGN_OR_RETURN(WireObject o, WireObject::Open(v, path, {"kmsKeyName"}));
  std::string key;
  RETURN_IF_ERROR(o.String("kmsKeyName", &key));
  return o.canonical();
}

// One role (master, workers, parameter servers, evaluators) as the request states it.
struct Role {
  Role(const char* type, const char* count) : type_field(type), count_field(count) {}
  const char* type_field;
  const char* count_field;  // nullptr for the master.
  std::string type;
  int64_t count = 0;
  ReplicaConfig config;
};

// The four roles of trainingInput, index = pool.
struct Roles {
  Role master{"masterType", nullptr};
  Role worker{"workerType", "workerCount"};
  Role ps{"parameterServerType", "parameterServerCount"};
  Role evaluator{"evaluatorType", "evaluatorCount"};
  const Role* all[kMaxPools] = {&master, &worker, &ps, &evaluator};
  Roles() = default;
  Roles(const Roles&) = delete;  // `all` points into this object.
};

// What a Python package job runs (and what a container job's roles fall back to).
struct PackageFields {
  std::vector<std::string> uris;
  std::string module;
  std::vector<std::string> args;
  std::string runtime_version;
};

// The machine of one replica of `role`, from its type and config.
MachineSpec MachineOf(const Role& role) {
  MachineSpec m;
  m.machine_type = role.type;
  int count = 0;
  if (model::internal::MlLegacyType(role.type, &m.accelerator_type, &count)) {
    m.accelerator_count = count;
  } else if (role.config.has_accelerator) {
    m.accelerator_type = role.config.accelerator_type;
    m.accelerator_count = static_cast<int32_t>(role.config.accelerator_count);
  } else if (role.type == model::internal::kMlCloudTpu) {
    m.accelerator_type = "TPU_V2";
    m.accelerator_count = 8;
  }
  return m;
}

// Checks a role's type and config; `master_category` is the master's category.
Status CheckRole(const WireObject& ti, const Role& role, bool custom, Category master_category) {
  const std::string type_path = ti.PathOf(role.type_field);
  if (!custom) {
    if (!role.type.empty())
      return FieldError(type_path, "is only allowed when scaleTier is CUSTOM");
    if (role.count_field != nullptr && role.count != 0) {
      return FieldError(ti.PathOf(role.count_field), "is only allowed when scaleTier is CUSTOM");
    }
    return Status::Ok();
  }
  if (role.count_field != nullptr) {
    if (role.count < 0) return FieldError(ti.PathOf(role.count_field), "must not be negative");
    if (role.count > 0 && role.type.empty()) {
      return FieldError(type_path,
                        std::string("is required when ") + role.count_field + " is greater than 0");
    }
  } else if (role.type.empty()) {
    return FieldError(type_path, "is required when scaleTier is CUSTOM");
  }
  if (role.type.empty()) return Status::Ok();
  Category category = CategoryOf(role.type);
  if (category == Category::kNone)
    return FieldError(type_path, "unknown machine type \"" + role.type + "\"");
  if (role.count_field != nullptr && category != Category::kCloudTpu &&
      master_category != Category::kCloudTpu && category != master_category) {
    return FieldError(
        type_path,
        "must be the same kind of machine type (Compute Engine or legacy) as masterType");
  }
  return Status::Ok();
}

// Checks a role's acceleratorConfig against the machine type it runs on.
Status CheckAccelerator(const Role& role) {
  const ReplicaConfig& c = role.config;
  if (!c.has_accelerator) {
    if (CategoryOf(role.type) == Category::kComputeEngine) {
      return model::internal::CheckAcceleratorCount(role.type, "", 0,
                                                    c.path + ".acceleratorConfig.count");
    }
    return Status::Ok();
  }
  const std::string path = c.path + ".acceleratorConfig";
  const bool tpu = c.accelerator_type.rfind("TPU_", 0) == 0;
  switch (CategoryOf(role.type)) {
    case Category::kComputeEngine:
      if (tpu) return FieldError(path + ".type", "TPUs need the cloud_tpu machine type");
      return model::internal::CheckAcceleratorCount(role.type, c.accelerator_type,
                                                    c.accelerator_count, path + ".count");
    case Category::kCloudTpu:
      if (!tpu)
        return FieldError(path + ".type", "the cloud_tpu machine type takes only TPU accelerators");
      return Status::Ok();
    default:
      return FieldError(path, "is only allowed with Compute Engine machine types");
  }
}

// Fills in a predefined tier's roles (see the table at the top of this file).
void ApplyScaleTier(const std::string& tier, Role* master, Role* worker, Role* ps) {
  if (tier == "BASIC") {
    master->type = "standard";
  } else if (tier == "STANDARD_1") {
    master->type = "standard";
    worker->type = "complex_model_s";
    worker->count = 4;
    ps->type = "standard";
    ps->count = 2;
  } else if (tier == "PREMIUM_1") {
    master->type = "complex_model_l";
    worker->type = "complex_model_l";
    worker->count = 8;
    ps->type = "large_model";
    ps->count = 3;
  } else if (tier == "BASIC_GPU") {
    master->type = "standard_gpu";
  } else if (tier == "BASIC_TPU") {
    master->type = "standard";
    worker->type = std::string(model::internal::kMlCloudTpu);
    worker->count = 1;
  }
}

// A container job (masterConfig.imageUri) or a Python package job (runtimeVersion,
// packageUris, pythonModule), never a mix (docs/contracts/ml-v1.md §10).
Status CheckContainerOrPackage(const WireObject& ti, const Roles& roles, const PackageFields& pkg,
                               bool use_chief) {
  const Role& master = roles.master;
  const bool container = !master.config.image_uri.empty();
  const std::string runtime_path = ti.PathOf("runtimeVersion");
  if (container && !pkg.runtime_version.empty()) {
    return FieldError(runtime_path, "must not be set together with masterConfig.imageUri");
  }
  // Google picked a default runtime for a package job that names none (`gcloud ai-platform
  // jobs submit training --package-path … --scale-tier basic` without --runtime-version).
  if (!container && pkg.runtime_version.empty() && pkg.uris.empty()) {
    return FieldError(runtime_path, "one of runtimeVersion or masterConfig.imageUri is required");
  }
  if (!container) {
    for (const Role* r : {&roles.worker, &roles.ps, &roles.evaluator}) {
      if (!r->config.image_uri.empty()) {
        return FieldError(r->config.path + ".imageUri",
                          "requires masterConfig.imageUri (a custom container job)");
      }
    }
    if (pkg.uris.empty())
      return FieldError(ti.PathOf("packageUris"), "is required for non-container jobs");
    if (pkg.module.empty())
      return FieldError(ti.PathOf("pythonModule"), "is required for non-container jobs");
    if (use_chief) {
      return FieldError(ti.PathOf("useChiefInTfConfig"),
                        "is only allowed for custom container jobs");
    }
  }
  for (const Role* r : roles.all) {
    const ReplicaConfig& c = r->config;
    for (const auto& [list, name] :
         {std::pair{&c.command, "containerCommand"}, std::pair{&c.args, "containerArgs"}}) {
      if (list->empty()) continue;
      if (!container) return FieldError(c.path + "." + name, "requires an imageUri");
      if (!pkg.args.empty()) {
        return FieldError(ti.PathOf("args"), std::string("must not be set together with ") +
                                                 c.path.substr(c.path.find('.') + 1) + "." + name);
      }
    }
  }

  return Status::Ok();
}

// The pools, index = role: a container job's roles inherit the master's image,
// command and args; a package job's run the packages on the runtime image the service
// picks from runtimeVersion.
void BuildPools(const Roles& roles, const PackageFields& pkg, JobSpec* spec) {
  const Role& master = roles.master;
  const bool container = !master.config.image_uri.empty();
  spec->pools.clear();
  for (int i = 0; i < kMaxPools; ++i) {
    const Role& r = *roles.all[i];
    WorkerPool pool;
    pool.replica_count = (i == 0) ? 1 : r.count;
    if (pool.replica_count > 0) {
      pool.machine = MachineOf(r);
      pool.disk = r.config.disk;
      if (container) {
        ContainerSpec c;
        c.image_uri = r.config.image_uri.empty() ? master.config.image_uri : r.config.image_uri;
        c.command = r.config.command.empty() ? master.config.command : r.config.command;
        c.args = !r.config.args.empty()        ? r.config.args
                 : !master.config.args.empty() ? master.config.args
                                               : pkg.args;
        pool.container = std::move(c);
      } else {
        // The runtime image stands for runtimeVersion; it is not part of the request.
        pool.python_package =
            PythonPackageSpec{std::string(images::MlRuntime(pkg.runtime_version).local_image),
                              pkg.uris,
                              pkg.module,
                              pkg.args,
                              {}};
      }
    }
    spec->pools.push_back(std::move(pool));
  }
  while (!spec->pools.empty() && spec->pools.back().empty()) spec->pools.pop_back();
}

// The roles' types, configs and counts.
Status ReadRoles(WireObject& ti, Roles* roles) {
  RETURN_IF_ERROR(ti.String("masterType", &roles->master.type));
  RETURN_IF_ERROR(ReadReplicaConfig(ti, "masterConfig", &roles->master.config));
  for (Role* r : {&roles->worker, &roles->ps, &roles->evaluator}) {
    RETURN_IF_ERROR(ti.String(r->type_field, &r->type));
    std::string config_field =
        std::string(r->type_field, std::string_view(r->type_field).size() - 4) + "Config";
    RETURN_IF_ERROR(ReadReplicaConfig(ti, config_field, &r->config));
    RETURN_IF_ERROR(ti.Int64(r->count_field, &r->count));
  }
  return Status::Ok();
}

// packageUris (gs:// URIs, at most 100), pythonModule and args.
Status ReadPackage(WireObject& ti, PackageFields* pkg) {
  RETURN_IF_ERROR(ti.StringList("packageUris", &pkg->uris, kMaxPackageUris));
  for (size_t i = 0; i < pkg->uris.size(); ++i) {
    RETURN_IF_ERROR(internal::CheckGcsUri(pkg->uris[i], IndexPath(ti.PathOf("packageUris"), i),
                                          /*object=*/true));
  }
  RETURN_IF_ERROR(ti.String("pythonModule", &pkg->module));
  return ti.StringList("args", &pkg->args, kMaxArgvListEntries);
}

// The roles against the scale tier and each other (docs/contracts/ml-v1.md §10, in the order
// the spec lists them); a predefined tier fills in its roles.
Status CheckRoles(const WireObject& ti, const std::string& scale_tier, Roles* roles) {
  const bool custom = scale_tier == "CUSTOM";
  RETURN_IF_ERROR(CheckRole(ti, roles->master, custom, Category::kNone));
  const Category master_category = CategoryOf(roles->master.type);
  for (const Role* r : {&roles->worker, &roles->ps, &roles->evaluator}) {
    RETURN_IF_ERROR(CheckRole(ti, *r, custom, master_category));
  }
  if (!custom) ApplyScaleTier(scale_tier, &roles->master, &roles->worker, &roles->ps);
  for (const Role* r : roles->all) {
    // A config of a role with no replicas is accepted and unused.
    if (r == &roles->master || r->count > 0) RETURN_IF_ERROR(CheckAccelerator(*r));
  }
  return Status::Ok();
}

// Every field of TrainingInput (docs/contracts/ml-v1.md); any other is a 400.
const std::initializer_list<std::string_view> kTrainingInputFields = {
    "scaleTier",
    "masterType",
    "masterConfig",
    "workerType",
    "workerConfig",
    "workerCount",
    "parameterServerType",
    "parameterServerConfig",
    "parameterServerCount",
    "evaluatorType",
    "evaluatorConfig",
    "evaluatorCount",
    "packageUris",
    "pythonModule",
    "args",
    "hyperparameters",
    "region",
    "jobDir",
    "runtimeVersion",
    "pythonVersion",
    "scheduling",
    "network",
    "serviceAccount",
    "useChiefInTfConfig",
    "enableWebAccess",
    "encryptionConfig",
};

Result<nlohmann::json> ParseTrainingInput(const nlohmann::json& v, JobSpec* spec) {
  ASSIGN_OR_RETURN(WireObject ti, WireObject::Open(v, "trainingInput", kTrainingInputFields));
  spec->scale_tier = "BASIC";  // proto3 default (see the top of this file).
  RETURN_IF_ERROR(ti.Enum("scaleTier", kScaleTiers, &spec->scale_tier));
  Roles roles;
  RETURN_IF_ERROR(ReadRoles(ti, &roles));
  // Machine types without a scale tier mean CUSTOM, as Google reads them: the guides'
  // distributed command gives --master-machine-type and --worker-count without
  // --scale-tier. Recorded, so the job reads back as what it runs.
  if (!ti.Has("scaleTier")) {
    for (const Role* r : roles.all) {
      if (!r->type.empty()) spec->scale_tier = "CUSTOM";
    }
    if (spec->scale_tier == "CUSTOM") ti.SetCanonical("scaleTier", "CUSTOM");
  }
  PackageFields pkg;
  RETURN_IF_ERROR(ReadPackage(ti, &pkg));
  std::string python_version, text;
  if (const nlohmann::json* h = ti.Find("hyperparameters")) {
    StudySpec study;
    ASSIGN_OR_RETURN(nlohmann::json c,
                     ParseMlHyperparameters(*h, ti.PathOf("hyperparameters"), &study));
    ti.SetCanonical("hyperparameters", std::move(c));
    spec->study = std::make_shared<const StudySpec>(std::move(study));
  }
  RETURN_IF_ERROR(ti.String("region", &spec->region));
  RETURN_IF_ERROR(ti.String("jobDir", &spec->job_dir));
  if (!spec->job_dir.empty()) {
    RETURN_IF_ERROR(internal::CheckGcsUri(spec->job_dir, ti.PathOf("jobDir"), /*object=*/false));
  }
  RETURN_IF_ERROR(ti.String("runtimeVersion", &pkg.runtime_version));
  RETURN_IF_ERROR(ti.String("pythonVersion", &python_version));
  RETURN_IF_ERROR(images::CheckMlRuntimeVersion(pkg.runtime_version, python_version,
                                                ti.PathOf("runtimeVersion"),
                                                ti.PathOf("pythonVersion")));
  if (const nlohmann::json* s = ti.Find("scheduling")) {
    ASSIGN_OR_RETURN(nlohmann::json c,
                     ParseMlScheduling(*s, ti.PathOf("scheduling"), &spec->scheduling));
    ti.SetCanonical("scheduling", std::move(c));
  }
  RETURN_IF_ERROR(ti.String("network", &text));
  RETURN_IF_ERROR(ti.String("serviceAccount", &text));
  RETURN_IF_ERROR(ti.Bool("useChiefInTfConfig", &spec->use_chief_in_tf_config));
  RETURN_IF_ERROR(ti.Bool("enableWebAccess", &spec->enable_web_access));
  if (const nlohmann::json* e = ti.Find("encryptionConfig")) {
    ASSIGN_OR_RETURN(nlohmann::json c, ParseEncryptionConfig(*e, ti.PathOf("encryptionConfig")));
    ti.SetCanonical("encryptionConfig", std::move(c));
  }

  // Cross-field rules (docs/contracts/ml-v1.md §10), in the order the spec lists them.
  if (spec->region.empty()) return FieldError(ti.PathOf("region"), "is required");
  RETURN_IF_ERROR(CheckRoles(ti, spec->scale_tier, &roles));
  RETURN_IF_ERROR(CheckContainerOrPackage(ti, roles, pkg, spec->use_chief_in_tf_config));
  BuildPools(roles, pkg, spec);
  return ti.canonical();
}

}  // namespace

Result<ParsedJob> ParseMlJob(const nlohmann::json& body) {
  ASSIGN_OR_RETURN(
      WireObject o,
      WireObject::Open(body, "", {"jobId", "trainingInput", "predictionInput", "labels"},
                       {"createTime", "startTime", "endTime", "state", "errorMessage",
                        "trainingOutput", "predictionOutput", "etag", "jobPosition"}));
  ParsedJob parsed;
  JobSpec& spec = parsed.spec;
  spec.dialect = Dialect::kMlV1;

  RETURN_IF_ERROR(o.String("jobId", &spec.job_id));
  if (spec.job_id.empty()) return FieldError("jobId", "is required");
  if (spec.job_id.size() > kMaxJobIdChars)
    return FieldError("jobId", "must be at most 128 characters");
  bool id_ok = std::isalpha(static_cast<unsigned char>(spec.job_id[0])) != 0;
  for (char c : spec.job_id)
    id_ok = id_ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (!id_ok) {
    return FieldError(
        "jobId", "\"" + spec.job_id +
                     "\" is invalid: use letters, digits and underscores, starting with a letter");
  }
  if (o.Has("predictionInput"))
    return FieldError("predictionInput", "batch prediction jobs are not supported");
  const nlohmann::json* training = o.Find("trainingInput");
  if (training == nullptr) return FieldError("trainingInput", "is required");
  ASSIGN_OR_RETURN(nlohmann::json ti, ParseTrainingInput(*training, &spec));
  o.SetCanonical("trainingInput", std::move(ti));
  RETURN_IF_ERROR(o.StringMap("labels", &spec.labels, kMaxLabelEntries));
  RETURN_IF_ERROR(internal::ValidateLabels("labels", spec.labels));
  parsed.spec_json = o.canonical().dump();
  parsed.kind = spec.study ? JobKind::kStudy : JobKind::kJob;
  return parsed;
}

}  // namespace ty::wire
