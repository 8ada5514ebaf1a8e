// A catalogue of invalid job bodies for both dialects. Each case starts from a valid
// body, breaks one rule, and asserts INVALID_ARGUMENT with the exact wire path of the
// offending field (what the API reports as a BadRequest field violation).
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "model/spec_record.h"
#include "wire/dialect.h"
#include "wire/study_json.h"

namespace ty::wire {

using namespace model;
namespace {

using nlohmann::json;

json VertexBase() {
  return json::parse(R"({"displayName": "train-1", "labels": {"team": "ml"},
    "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1},
       "replicaCount": "1",
       "containerSpec": {"imageUri": "img:1", "args": ["--epochs=10"], "env": [{"name": "MODE", "value": "x"}]}},
      {"machineSpec": {"machineType": "n1-standard-8"}, "replicaCount": "2",
       "pythonPackageSpec": {"executorImageUri": "exec:1", "packageUris": ["gs://b/p.tar.gz"],
                             "pythonModule": "trainer.task"}}],
      "scheduling": {"timeout": "7200s"},
      "baseOutputDirectory": {"outputUriPrefix": "gs://bucket/out/"}}})");
}

json MlBase() {
  return json::parse(R"({"jobId": "census_001", "labels": {"owner": "alice"},
    "trainingInput": {"scaleTier": "CUSTOM", "region": "us-central1", "masterType": "n1-standard-8",
      "masterConfig": {"imageUri": "gcr.io/p/t:1"},
      "workerType": "n1-standard-8", "workerCount": "2",
      "parameterServerType": "n1-highmem-8", "parameterServerCount": "1",
      "scheduling": {"maxRunningTime": "7200s"}}})");
}

json MlPackageBase() {
  return json::parse(
      R"({"jobId": "pkg", "trainingInput": {"region": "us-central1", "runtimeVersion": "2.11",
      "packageUris": ["gs://b/t.tar.gz"], "pythonModule": "trainer.task"}})");
}

struct Case {
  const char* name;
  Dialect dialect;
  std::function<json()> base;
  std::function<void(json&)> mutate;
  const char* field;
};

json& Pool(json& j, int i) { return j["jobSpec"]["workerPoolSpecs"][i]; }
json& Ti(json& j) { return j["trainingInput"]; }

std::vector<std::string> ManyStrings(size_t n, size_t len) {
  return std::vector<std::string>(n, std::string(len, 'a'));
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      // ---- Vertex: structure and types --------------------------------------------
      {"v_body_not_object", Dialect::kVertex, VertexBase, [](json& j) { j = json::array(); }, ""},
      {"v_unknown_top_field", Dialect::kVertex, VertexBase, [](json& j) { j["displayname2"] = "x"; },
       "displayname2"},
      {"v_unknown_nested_field", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["containerSpec"]["imageUrl"] = "x"; },
       "jobSpec.workerPoolSpecs[0].containerSpec.imageUrl"},
      {"v_duplicate_spellings", Dialect::kVertex, VertexBase, [](json& j) { j["display_name"] = "y"; },
       "displayName"},
      {"v_display_name_number", Dialect::kVertex, VertexBase, [](json& j) { j["displayName"] = 123; },
       "displayName"},
      {"v_missing_display_name", Dialect::kVertex, VertexBase, [](json& j) { j.erase("displayName"); },
       "displayName"},
      {"v_empty_display_name", Dialect::kVertex, VertexBase, [](json& j) { j["displayName"] = ""; }, "displayName"},
      {"v_display_name_too_long", Dialect::kVertex, VertexBase,
       [](json& j) { j["displayName"] = std::string(129, 'x'); }, "displayName"},
      {"v_missing_job_spec", Dialect::kVertex, VertexBase, [](json& j) { j.erase("jobSpec"); }, "jobSpec"},
      {"v_job_spec_string", Dialect::kVertex, VertexBase, [](json& j) { j["jobSpec"] = "x"; }, "jobSpec"},
      {"v_missing_pools", Dialect::kVertex, VertexBase, [](json& j) { j["jobSpec"].erase("workerPoolSpecs"); },
       "jobSpec.workerPoolSpecs"},
      {"v_empty_pools", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["workerPoolSpecs"] = json::array(); }, "jobSpec.workerPoolSpecs"},
      {"v_pools_object", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["workerPoolSpecs"] = json::object({{"a", 1}}); }, "jobSpec.workerPoolSpecs"},
      {"v_five_pools", Dialect::kVertex, VertexBase,
       [](json& j) {
         for (int i = 0; i < 3; ++i) j["jobSpec"]["workerPoolSpecs"].push_back(json::object());
       },
       "jobSpec.workerPoolSpecs"},
      {"v_pool_not_object", Dialect::kVertex, VertexBase, [](json& j) { Pool(j, 1) = "pool"; },
       "jobSpec.workerPoolSpecs[1]"},
      // ---- Vertex: worker pools ----------------------------------------------------
      {"v_pool0_replica_2", Dialect::kVertex, VertexBase, [](json& j) { Pool(j, 0)["replicaCount"] = "2"; },
       "jobSpec.workerPoolSpecs[0].replicaCount"},
      {"v_pool0_empty", Dialect::kVertex, VertexBase, [](json& j) { Pool(j, 0) = json::object(); },
       "jobSpec.workerPoolSpecs[0]"},
      {"v_pool1_missing_replica_count", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1).erase("replicaCount"); }, "jobSpec.workerPoolSpecs[1].replicaCount"},
      {"v_pool1_negative_replicas", Dialect::kVertex, VertexBase, [](json& j) { Pool(j, 1)["replicaCount"] = "-1"; },
       "jobSpec.workerPoolSpecs[1].replicaCount"},
      {"v_replica_count_fraction", Dialect::kVertex, VertexBase, [](json& j) { Pool(j, 1)["replicaCount"] = 1.5; },
       "jobSpec.workerPoolSpecs[1].replicaCount"},
      {"v_replica_count_text", Dialect::kVertex, VertexBase, [](json& j) { Pool(j, 1)["replicaCount"] = "two"; },
       "jobSpec.workerPoolSpecs[1].replicaCount"},
      {"v_both_tasks", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["pythonPackageSpec"] = Pool(j, 1)["pythonPackageSpec"]; },
       "jobSpec.workerPoolSpecs[0].pythonPackageSpec"},
      {"v_no_task", Dialect::kVertex, VertexBase, [](json& j) { Pool(j, 1).erase("pythonPackageSpec"); },
       "jobSpec.workerPoolSpecs[1]"},
      {"v_missing_machine_spec", Dialect::kVertex, VertexBase, [](json& j) { Pool(j, 1).erase("machineSpec"); },
       "jobSpec.workerPoolSpecs[1].machineSpec"},
      {"v_missing_image_uri", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["containerSpec"].erase("imageUri"); },
       "jobSpec.workerPoolSpecs[0].containerSpec.imageUri"},
      {"v_args_not_strings", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["containerSpec"]["args"] = json::array({"a", 2}); },
       "jobSpec.workerPoolSpecs[0].containerSpec.args[1]"},
      {"v_command_not_array", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["containerSpec"]["command"] = "python"; },
       "jobSpec.workerPoolSpecs[0].containerSpec.command"},
      {"v_bad_env_name", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["containerSpec"]["env"][0]["name"] = "1BAD-NAME"; },
       "jobSpec.workerPoolSpecs[0].containerSpec.env[0].name"},
      {"v_env_missing_name", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["containerSpec"]["env"].push_back({{"value", "v"}}); },
       "jobSpec.workerPoolSpecs[0].containerSpec.env[1].name"},
      {"v_too_many_env", Dialect::kVertex, VertexBase,
       [](json& j) {
         json env = json::array();
         for (int i = 0; i < 101; ++i) {
           std::string name = "V";
           name += std::to_string(i);
           env.push_back({{"name", name}, {"value", "x"}});
         }
         Pool(j, 0)["containerSpec"]["env"] = env;
       },
       "jobSpec.workerPoolSpecs[0].containerSpec.env"},
      {"v_args_over_100000_chars", Dialect::kVertex, VertexBase,
       [](json& j) {
         Pool(j, 0)["containerSpec"]["args"] = ManyStrings(6, 10000);
         Pool(j, 1)["pythonPackageSpec"]["args"] = ManyStrings(5, 10000);
       },
       "jobSpec.workerPoolSpecs[1].pythonPackageSpec.args"},
      {"v_package_missing_executor", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["pythonPackageSpec"].erase("executorImageUri"); },
       "jobSpec.workerPoolSpecs[1].pythonPackageSpec.executorImageUri"},
      {"v_package_missing_uris", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["pythonPackageSpec"].erase("packageUris"); },
       "jobSpec.workerPoolSpecs[1].pythonPackageSpec.packageUris"},
      {"v_package_uri_not_gcs", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["pythonPackageSpec"]["packageUris"].push_back("/tmp/p.tar.gz"); },
       "jobSpec.workerPoolSpecs[1].pythonPackageSpec.packageUris[1]"},
      {"v_package_missing_module", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["pythonPackageSpec"].erase("pythonModule"); },
       "jobSpec.workerPoolSpecs[1].pythonPackageSpec.pythonModule"},
      // ---- Vertex: machines --------------------------------------------------------
      {"v_missing_machine_type", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["machineSpec"] = json::object(); },
       "jobSpec.workerPoolSpecs[1].machineSpec.machineType"},
      {"v_unknown_machine_family", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["machineSpec"]["machineType"] = "z9-standard-4"; },
       "jobSpec.workerPoolSpecs[1].machineSpec.machineType"},
      {"v_machine_type_no_size", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["machineSpec"]["machineType"] = "n1-standard"; },
       "jobSpec.workerPoolSpecs[1].machineSpec.machineType"},
      {"v_accelerator_count_without_type", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["machineSpec"]["acceleratorCount"] = 2; },
       "jobSpec.workerPoolSpecs[1].machineSpec.acceleratorCount"},
      {"v_accelerator_type_without_count", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["machineSpec"].erase("acceleratorCount"); },
       "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"},
      {"v_bad_accelerator_name", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["machineSpec"]["acceleratorType"] = "NVIDIA_TESLA_X1"; },
       "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"},
      {"v_bad_accelerator_number", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["machineSpec"]["acceleratorType"] = 99; },
       "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorType"},
      {"v_negative_accelerator_count", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["machineSpec"]["acceleratorCount"] = -1; },
       "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"},
      {"v_a2_count_mismatch", Dialect::kVertex, VertexBase,
       [](json& j) {
         Pool(j, 0)["machineSpec"] = {{"machineType", "a2-highgpu-4g"}, {"acceleratorType", "NVIDIA_TESLA_A100"},
                                      {"acceleratorCount", 2}};
       },
       "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"},
      {"v_n1_v100_count", Dialect::kVertex, VertexBase,
       [](json& j) {
         Pool(j, 0)["machineSpec"] = {{"machineType", "n1-standard-32"}, {"acceleratorType", "NVIDIA_TESLA_V100"},
                                      {"acceleratorCount", 2}};
       },
       "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"},
      {"v_cloud_tpu_count", Dialect::kVertex, VertexBase,
       [](json& j) {
         Pool(j, 0)["machineSpec"] = {{"machineType", "cloud-tpu"}, {"acceleratorType", "TPU_V2"},
                                      {"acceleratorCount", 4}};
       },
       "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"},
      {"v_gpu_partition_needs_one", Dialect::kVertex, VertexBase,
       [](json& j) {
         Pool(j, 0)["machineSpec"] = {{"machineType", "a2-highgpu-2g"}, {"acceleratorType", "NVIDIA_TESLA_A100"},
                                      {"acceleratorCount", 2}, {"gpuPartitionSize", "1g.5gb"}};
       },
       "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorCount"},
      {"v_bad_reservation_type", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["machineSpec"]["reservationAffinity"] = {{"reservationAffinityType", "SOME"}}; },
       "jobSpec.workerPoolSpecs[0].machineSpec.reservationAffinity.reservationAffinityType"},
      // ---- Vertex: disks and mounts ------------------------------------------------
      {"v_disk_too_small", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["diskSpec"] = {{"bootDiskSizeGb", 50}}; },
       "jobSpec.workerPoolSpecs[0].diskSpec.bootDiskSizeGb"},
      {"v_disk_too_large", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["diskSpec"] = {{"bootDiskSizeGb", 64001}}; },
       "jobSpec.workerPoolSpecs[0].diskSpec.bootDiskSizeGb"},
      {"v_disk_bad_type", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["diskSpec"] = {{"bootDiskType", "pd-balanced"}}; },
       "jobSpec.workerPoolSpecs[0].diskSpec.bootDiskType"},
      {"v_nfs_relative_path", Dialect::kVertex, VertexBase,
       [](json& j) {
         Pool(j, 0)["nfsMounts"] = json::array({{{"server", "s"}, {"path", "export"}, {"mountPoint", "m"}}});
       },
       "jobSpec.workerPoolSpecs[0].nfsMounts[0].path"},
      {"v_nfs_missing_server", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["nfsMounts"] = json::array({{{"path", "/e"}, {"mountPoint", "m"}}}); },
       "jobSpec.workerPoolSpecs[0].nfsMounts[0].server"},
      {"v_lustre_missing_mount_point", Dialect::kVertex, VertexBase,
       [](json& j) {
         Pool(j, 0)["lustreMounts"] =
             json::array({{{"instanceIp", "1.2.3.4"}, {"volumeHandle", "v"}, {"filesystem", "f"}}});
       },
       "jobSpec.workerPoolSpecs[0].lustreMounts[0].mountPoint"},
      // Issue 30 item 3: every array has a bound (90,000 nfsMounts per job were taken).
      {"v_nfs_too_many", Dialect::kVertex, VertexBase,
       [](json& j) {
         json mount = {{"server", "10.0.0.2"}, {"path", "/e"}, {"mountPoint", "m"}};
         Pool(j, 0)["nfsMounts"] = json::array();
         for (int i = 0; i < 11; ++i) Pool(j, 0)["nfsMounts"].push_back(mount);
       },
       "jobSpec.workerPoolSpecs[0].nfsMounts"},
      {"v_lustre_too_many", Dialect::kVertex, VertexBase,
       [](json& j) {
         json mount = {{"instanceIp", "1.2.3.4"}, {"volumeHandle", "v"}, {"filesystem", "f"},
                       {"mountPoint", "m"}};
         Pool(j, 1)["lustreMounts"] = json::array();
         for (int i = 0; i < 11; ++i) Pool(j, 1)["lustreMounts"].push_back(mount);
       },
       "jobSpec.workerPoolSpecs[1].lustreMounts"},
      {"v_reserved_ranges_too_many", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["reservedIpRanges"] = std::vector<std::string>(11, "r"); },
       "jobSpec.reservedIpRanges"},
      {"v_models_too_many", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["models"] = std::vector<std::string>(101, "m"); },
       "jobSpec.models"},
      {"v_command_too_many", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 0)["containerSpec"]["command"] = std::vector<std::string>(10001, "x"); },
       "jobSpec.workerPoolSpecs[0].containerSpec.command"},
      {"v_package_uris_too_many", Dialect::kVertex, VertexBase,
       [](json& j) {
         Pool(j, 1)["pythonPackageSpec"]["packageUris"] =
             std::vector<std::string>(101, "gs://b/p.tar.gz");
       },
       "jobSpec.workerPoolSpecs[1].pythonPackageSpec.packageUris"},
      // Issue 30 item 6: URIs the bucket cannot hold are refused at submit.
      {"v_package_uri_dot_dot", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["pythonPackageSpec"]["packageUris"] = {"gs://b/../a/x.tar.gz"}; },
       "jobSpec.workerPoolSpecs[1].pythonPackageSpec.packageUris[0]"},
      {"v_package_uri_directory", Dialect::kVertex, VertexBase,
       [](json& j) { Pool(j, 1)["pythonPackageSpec"]["packageUris"] = {"gs://b/dist/"}; },
       "jobSpec.workerPoolSpecs[1].pythonPackageSpec.packageUris[0]"},
      {"v_output_empty_segment", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"] = "gs://b/a//c/"; },
       "jobSpec.baseOutputDirectory.outputUriPrefix"},
      {"v_display_name_rtl_override", Dialect::kVertex, VertexBase,
       [](json& j) { j["displayName"] = "report\u202Efdp.exe"; }, "displayName"},
      // ---- Vertex: scheduling, output, labels --------------------------------------
      {"v_bad_duration", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["scheduling"]["timeout"] = "2h"; }, "jobSpec.scheduling.timeout"},
      {"v_duration_object", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["scheduling"]["timeout"] = {{"seconds", 60}}; }, "jobSpec.scheduling.timeout"},
      {"v_negative_timeout", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["scheduling"]["timeout"] = "-5s"; }, "jobSpec.scheduling.timeout"},
      {"v_bad_strategy", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["scheduling"]["strategy"] = 5; }, "jobSpec.scheduling.strategy"},
      {"v_restart_not_bool", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["scheduling"]["restartJobOnWorkerRestart"] = "yes"; },
       "jobSpec.scheduling.restartJobOnWorkerRestart"},
      {"v_output_not_gcs", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"] = "/tmp/out"; },
       "jobSpec.baseOutputDirectory.outputUriPrefix"},
      {"v_output_no_bucket", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"] = "gs:///x"; },
       "jobSpec.baseOutputDirectory.outputUriPrefix"},
      {"v_output_missing_prefix", Dialect::kVertex, VertexBase,
       [](json& j) { j["jobSpec"]["baseOutputDirectory"] = json::object(); },
       "jobSpec.baseOutputDirectory.outputUriPrefix"},
      {"v_psc_not_object", Dialect::kVertex, VertexBase, [](json& j) { j["jobSpec"]["pscInterfaceConfig"] = 1; },
       "jobSpec.pscInterfaceConfig"},
      {"v_unknown_job_spec_field", Dialect::kVertex, VertexBase, [](json& j) { j["jobSpec"]["jobDir"] = "gs://b"; },
       "jobSpec.jobDir"},
      {"v_encryption_unknown_field", Dialect::kVertex, VertexBase,
       [](json& j) { j["encryptionSpec"] = {{"key", "k"}}; }, "encryptionSpec.key"},
      {"v_label_key_uppercase", Dialect::kVertex, VertexBase, [](json& j) { j["labels"]["Team"] = "x"; }, "labels"},
      {"v_label_key_starts_with_digit", Dialect::kVertex, VertexBase, [](json& j) { j["labels"]["1team"] = "x"; },
       "labels"},
      {"v_label_key_too_long", Dialect::kVertex, VertexBase,
       [](json& j) { j["labels"][std::string(65, 'k')] = "x"; }, "labels"},
      {"v_label_value_too_long", Dialect::kVertex, VertexBase,
       [](json& j) { j["labels"]["team"] = std::string(65, 'v'); }, "labels.team"},
      {"v_label_value_bad_char", Dialect::kVertex, VertexBase, [](json& j) { j["labels"]["team"] = "a.b"; },
       "labels.team"},
      {"v_label_value_not_string", Dialect::kVertex, VertexBase, [](json& j) { j["labels"]["team"] = 1; },
       "labels.team"},

      // ---- ml v1: Job --------------------------------------------------------------
      {"m_body_not_object", Dialect::kMlV1, MlBase, [](json& j) { j = "job"; }, ""},
      {"m_unknown_top_field", Dialect::kMlV1, MlBase, [](json& j) { j["displayName"] = "x"; }, "displayName"},
      {"m_missing_job_id", Dialect::kMlV1, MlBase, [](json& j) { j.erase("jobId"); }, "jobId"},
      {"m_job_id_starts_with_digit", Dialect::kMlV1, MlBase, [](json& j) { j["jobId"] = "1job"; }, "jobId"},
      {"m_job_id_with_dash", Dialect::kMlV1, MlBase, [](json& j) { j["jobId"] = "my-job"; }, "jobId"},
      {"m_job_id_too_long", Dialect::kMlV1, MlBase, [](json& j) { j["jobId"] = "j" + std::string(128, 'x'); },
       "jobId"},
      {"m_prediction_input", Dialect::kMlV1, MlBase,
       [](json& j) { j["predictionInput"] = {{"dataFormat", "JSON"}}; }, "predictionInput"},
      {"m_missing_training_input", Dialect::kMlV1, MlBase, [](json& j) { j.erase("trainingInput"); },
       "trainingInput"},
      {"m_hyperparameters", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["hyperparameters"] = {{"goal", "MAXIMIZE"}}; },
       "trainingInput.hyperparameters.params"},
      {"m_hyperparameters_grid_double", Dialect::kMlV1, MlBase,
       [](json& j) {
         Ti(j)["hyperparameters"] = {
             {"algorithm", "GRID_SEARCH"},
             {"params",
              {{{"parameterName", "lr"}, {"type", "DOUBLE"}, {"minValue", 0}, {"maxValue", 1}}}}};
       },
       "trainingInput.hyperparameters.algorithm"},
      {"m_hyperparameters_zero_trials", Dialect::kMlV1, MlBase,
       [](json& j) {
         Ti(j)["hyperparameters"] = {
             {"maxTrials", 0},
             {"params",
              {{{"parameterName", "lr"}, {"type", "DOUBLE"}, {"minValue", 0}, {"maxValue", 1}}}}};
       },
       "trainingInput.hyperparameters.maxTrials"},
      {"m_hyperparameters_bad_param", Dialect::kMlV1, MlBase,
       [](json& j) {
         Ti(j)["hyperparameters"] = {
             {"params",
              {{{"parameterName", "lr"}, {"type", "DOUBLE"}, {"minValue", 2}, {"maxValue", 1}}}}};
       },
       "trainingInput.hyperparameters.params[0]"},
      {"m_bad_label", Dialect::kMlV1, MlBase, [](json& j) { j["labels"]["Owner"] = "x"; }, "labels"},
      // ---- ml v1: TrainingInput ----------------------------------------------------
      {"m_unknown_training_field", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["workerPoolSpecs"] = 1; },
       "trainingInput.workerPoolSpecs"},
      {"m_bad_scale_tier", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["scaleTier"] = "HUGE"; },
       "trainingInput.scaleTier"},
      {"m_scale_tier_unknown_number", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["scaleTier"] = 2; },
       "trainingInput.scaleTier"},
      {"m_missing_region", Dialect::kMlV1, MlBase, [](json& j) { Ti(j).erase("region"); }, "trainingInput.region"},
      {"m_custom_without_master_type", Dialect::kMlV1, MlBase, [](json& j) { Ti(j).erase("masterType"); },
       "trainingInput.masterType"},
      {"m_unknown_master_type", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["masterType"] = "n1-standard-2"; },
       "trainingInput.masterType"},
      {"m_worker_count_without_custom", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["workerCount"] = "2"; }, "trainingInput.workerCount"},
      {"m_master_type_with_basic_tier", Dialect::kMlV1, MlPackageBase,
       [](json& j) {
         Ti(j)["scaleTier"] = "BASIC";
         Ti(j)["masterType"] = "standard";
       },
       "trainingInput.masterType"},
      {"m_no_runtime_no_image_no_packages", Dialect::kMlV1, MlPackageBase,
       [](json& j) {
         Ti(j).erase("runtimeVersion");
         Ti(j).erase("packageUris");
       },
       "trainingInput.runtimeVersion"},
      {"m_worker_count_without_type", Dialect::kMlV1, MlBase, [](json& j) { Ti(j).erase("workerType"); },
       "trainingInput.workerType"},
      {"m_ps_count_without_type", Dialect::kMlV1, MlBase, [](json& j) { Ti(j).erase("parameterServerType"); },
       "trainingInput.parameterServerType"},
      {"m_evaluator_count_without_type", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["evaluatorCount"] = "1"; },
       "trainingInput.evaluatorType"},
      {"m_negative_worker_count", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["workerCount"] = "-1"; },
       "trainingInput.workerCount"},
      {"m_worker_count_not_integer", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["workerCount"] = "2x"; },
       "trainingInput.workerCount"},
      {"m_mixed_machine_categories", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["workerType"] = "complex_model_m"; },
       "trainingInput.workerType"},
      {"m_accelerator_with_legacy_type", Dialect::kMlV1, MlBase,
       [](json& j) {
         Ti(j)["masterType"] = "standard";
         Ti(j)["workerType"] = "standard";
         Ti(j)["parameterServerType"] = "large_model";
         Ti(j)["masterConfig"]["acceleratorConfig"] = {{"type", "NVIDIA_TESLA_T4"}, {"count", "1"}};
       },
       "trainingInput.masterConfig.acceleratorConfig"},
      {"m_accelerator_with_predefined_tier", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["masterConfig"] = {{"acceleratorConfig", {{"type", "NVIDIA_TESLA_T4"}, {"count", "1"}}}}; },
       "trainingInput.masterConfig.acceleratorConfig"},
      {"m_accelerator_zero_count", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["workerConfig"] = {{"acceleratorConfig", {{"type", "NVIDIA_TESLA_T4"}, {"count", "0"}}}}; },
       "trainingInput.workerConfig.acceleratorConfig.count"},
      {"m_accelerator_bad_type", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["workerConfig"] = {{"acceleratorConfig", {{"type", "NVIDIA_L4"}, {"count", "1"}}}}; },
       "trainingInput.workerConfig.acceleratorConfig.type"},
      {"m_accelerator_type_unknown_number", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["workerConfig"] = {{"acceleratorConfig", {{"type", 99}, {"count", "1"}}}}; },
       "trainingInput.workerConfig.acceleratorConfig.type"},
      {"m_accelerator_missing_type", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["workerConfig"] = {{"acceleratorConfig", {{"count", "1"}}}}; },
       "trainingInput.workerConfig.acceleratorConfig.type"},
      {"m_tpu_on_compute_engine", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["masterConfig"]["acceleratorConfig"] = {{"type", "TPU_V2"}, {"count", "8"}}; },
       "trainingInput.masterConfig.acceleratorConfig.type"},
      {"m_gpu_count_on_n1", Dialect::kMlV1, MlBase,
       [](json& j) {
         Ti(j)["parameterServerConfig"] = {{"acceleratorConfig", {{"type", "NVIDIA_TESLA_V100"}, {"count", "3"}}}};
       },
       "trainingInput.parameterServerConfig.acceleratorConfig.count"},
      {"m_runtime_and_image", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["runtimeVersion"] = "2.11"; },
       "trainingInput.runtimeVersion"},
      // Issue 33: a version Google never published ran on a guess; now it is named.
      {"m_runtime_version_never_published", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["runtimeVersion"] = "2.9"; }, "trainingInput.runtimeVersion"},
      {"m_python_version_the_runtime_never_had", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["pythonVersion"] = "2.7"; }, "trainingInput.pythonVersion"},
      {"m_package_uri_dot_dot", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["packageUris"] = {"gs://b/x.tar.gz", "gs://b/../a/x.tar.gz"}; },
       "trainingInput.packageUris[1]"},
      {"m_job_dir_dot", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["jobDir"] = "gs://b/./x"; },
       "trainingInput.jobDir"},
      {"m_labels_too_many", Dialect::kMlV1, MlBase,
       [](json& j) {
         for (int i = 0; i < 1001; ++i) j["labels"]["k" + std::to_string(i)] = "v";
       },
       "labels"},
      {"m_package_job_without_packages", Dialect::kMlV1, MlPackageBase, [](json& j) { Ti(j).erase("packageUris"); },
       "trainingInput.packageUris"},
      {"m_package_job_without_module", Dialect::kMlV1, MlPackageBase, [](json& j) { Ti(j).erase("pythonModule"); },
       "trainingInput.pythonModule"},
      {"m_too_many_packages", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["packageUris"] = std::vector<std::string>(101, "gs://b/p.tar.gz"); },
       "trainingInput.packageUris"},
      {"m_package_not_gcs", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["packageUris"] = json::array({"gs://b/a.tar.gz", "file:///p.tar.gz"}); },
       "trainingInput.packageUris[1]"},
      {"m_worker_image_in_package_job", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["workerConfig"] = {{"imageUri", "img"}}; }, "trainingInput.workerConfig.imageUri"},
      {"m_container_args_without_image", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["masterConfig"] = {{"containerArgs", {"--x"}}}; },
       "trainingInput.masterConfig.containerArgs"},
      {"m_container_command_without_image", Dialect::kMlV1, MlPackageBase,
       [](json& j) { Ti(j)["masterConfig"] = {{"containerCommand", {"python"}}}; },
       "trainingInput.masterConfig.containerCommand"},
      {"m_container_args_with_args", Dialect::kMlV1, MlBase,
       [](json& j) {
         Ti(j)["masterConfig"]["containerArgs"] = {"--x"};
         Ti(j)["args"] = {"--y"};
       },
       "trainingInput.args"},
      {"m_worker_container_command_with_args", Dialect::kMlV1, MlBase,
       [](json& j) {
         Ti(j)["workerConfig"] = {{"containerCommand", {"python"}}};
         Ti(j)["args"] = {"--y"};
       },
       "trainingInput.args"},
      {"m_max_wait_too_short", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["scheduling"]["maxWaitTime"] = "1799s"; }, "trainingInput.scheduling.maxWaitTime"},
      {"m_bad_running_time", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["scheduling"]["maxRunningTime"] = 7200; }, "trainingInput.scheduling.maxRunningTime"},
      {"m_priority_too_high", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["scheduling"]["priority"] = 1001; },
       "trainingInput.scheduling.priority"},
      {"m_priority_negative", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["scheduling"]["priority"] = -1; },
       "trainingInput.scheduling.priority"},
      {"m_bad_python_version", Dialect::kMlV1, MlPackageBase, [](json& j) { Ti(j)["pythonVersion"] = "3.8"; },
       "trainingInput.pythonVersion"},
      {"m_chief_in_package_job", Dialect::kMlV1, MlPackageBase, [](json& j) { Ti(j)["useChiefInTfConfig"] = true; },
       "trainingInput.useChiefInTfConfig"},
      {"m_job_dir_not_gcs", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["jobDir"] = "/tmp/job"; },
       "trainingInput.jobDir"},
      {"m_region_not_string", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["region"] = json::array({"us"}); },
       "trainingInput.region"},
      {"m_disk_bad_type", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["masterConfig"]["diskConfig"] = {{"bootDiskType", "hyperdisk-balanced"}}; },
       "trainingInput.masterConfig.diskConfig.bootDiskType"},
      {"m_disk_too_small", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["masterConfig"]["diskConfig"] = {{"bootDiskSizeGb", 10}}; },
       "trainingInput.masterConfig.diskConfig.bootDiskSizeGb"},
      {"m_unknown_replica_config_field", Dialect::kMlV1, MlBase,
       [](json& j) { Ti(j)["masterConfig"]["image"] = "x"; }, "trainingInput.masterConfig.image"},
      {"m_encryption_not_object", Dialect::kMlV1, MlBase, [](json& j) { Ti(j)["encryptionConfig"] = "k"; },
       "trainingInput.encryptionConfig"},
  };
  return cases;
}

class InvalidSpecTest : public ::testing::TestWithParam<Case> {};

TEST_P(InvalidSpecTest, RejectedWithFieldPath) {
  const Case& c = GetParam();
  json body = c.base();
  // The base body itself must be valid, so the failure is the mutation's.
  Result<ParsedJob> valid =
      c.dialect == Dialect::kVertex ? ParseVertexCustomJob(body) : ParseMlJob(body);
  ASSERT_TRUE(valid.ok()) << valid.status().ToString();
  c.mutate(body);
  Result<ParsedJob> r =
      c.dialect == Dialect::kVertex ? ParseVertexCustomJob(body) : ParseMlJob(body);
  ASSERT_FALSE(r.ok()) << "accepted: " << body.dump();
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().field(), c.field) << r.status().message();
  EXPECT_EQ(r.status().message().rfind("Field: " + std::string(c.field) + " Error: ", 0), 0u)
      << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(Catalogue, InvalidSpecTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

TEST(InvalidSpecCatalogueTest, CoversBothDialectsWidely) {
  size_t vertex = 0, ml = 0;
  for (const Case& c : Cases()) (c.dialect == Dialect::kVertex ? vertex : ml)++;
  EXPECT_GE(vertex + ml, 50u);
  EXPECT_GE(vertex, 25u);
  EXPECT_GE(ml, 25u);
}

TEST(InvalidSpecMessageTest, UnknownFieldNamesTheKey) {
  json body = VertexBase();
  Pool(body, 0)["containerSpec"]["imageUrl"] = "x";
  Result<ParsedJob> r = ParseVertexCustomJob(body);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Unknown name \"imageUrl\""), std::string::npos)
      << r.status().message();
}

TEST(InvalidSpecMessageTest, HyperparametersMakeAStudyThatSurvivesTheSpecRecord) {
  json body = MlBase();
  Ti(body)["hyperparameters"] = json::parse(R"({
    "goal": "MINIMIZE", "maxTrials": 6, "maxParallelTrials": 2, "maxFailedTrials": 1,
    "hyperparameterMetricTag": "loss", "enableTrialEarlyStopping": true,
    "algorithm": "RANDOM_SEARCH",
    "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.0001, "maxValue": 0.1,
                "scaleType": "UNIT_LOG_SCALE"},
               {"parameterName": "opt", "type": "CATEGORICAL", "categoricalValues": ["a", "b"]}]})");
  Result<ParsedJob> r = ParseMlJob(body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->spec.study != nullptr);
  const StudySpec& s = *r->spec.study;
  EXPECT_EQ(s.goal, Goal::kMinimize);
  EXPECT_EQ(s.max_trials, 6);
  EXPECT_EQ(s.parallel_trials, 2);
  EXPECT_EQ(s.max_failed_trials, 1);
  EXPECT_EQ(s.tag(), "loss");
  EXPECT_EQ(s.stopping, StoppingRule::kDecayCurve);
  EXPECT_EQ(s.algorithm, Algorithm::kRandom);
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].scale, Scale::kLog);
  Result<JobSpec> back = DecodeSpecRecord(EncodeSpecRecord(r->spec));
  ASSERT_TRUE(back.ok());
  ASSERT_TRUE(back->study != nullptr);
  EXPECT_EQ(EncodeStudy(*back->study), EncodeStudy(s));
  EXPECT_EQ(StudySpec().tag(), "training/hptuning/metric");
}

TEST(InvalidSpecMessageTest, UnknownMachineTypeIsQuoted) {
  json body = VertexBase();
  Pool(body, 1)["machineSpec"]["machineType"] = "x";
  Result<ParsedJob> r = ParseVertexCustomJob(body);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown machine type \"x\""), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace ty::wire
