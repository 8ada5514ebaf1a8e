// The real Google Cloud CLI (gcloud, installed on every machine here; skipped
// with a message where it is not) against trainyardd, configured the way the
// docs/api.md tells users to: `trainyard config gcloud` in an isolated CLOUDSDK_CONFIG.
// Both dialects: create -> stream logs to the end (5,000 numbered lines from two
// replicas, each once and in order) -> describe -> list; cancel of a sleeping
// job; `gcloud logging read` with a task filter. Tuning jobs of both dialects with
// their trials' lines, summaries and cancel.
#include <gmock/gmock.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "integration/daemon_harness.h"
#include "integration/hypertune_trainer.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kLinesPerReplica = 2500;

bool HaveGcloud() { return RunProcess({"gcloud", "--version"}, {}, 60).rc == 0; }

// Each replica prints n=0 .. n=2499.
std::string CountingScript() {
  return "i=0; while [ $i -lt " + std::to_string(kLinesPerReplica) +
         " ]; do echo n=$i; i=$((i+1)); done";
}

// kTrainer as a YAML block scalar item at `indent` spaces (a list item's text).
std::string TrainerYaml(int indent) {
  std::string pad(indent, ' ');
  std::string out = pad + "- |\n";
  std::istringstream in(kTrainer);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out += pad + "  " + line + "\n";
  }
  return out;
}

// The job id gcloud printed after `marker` (digits or an ml job id).
std::string IdAfter(const std::string& text, const std::string& marker) {
  size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  std::string rest = text.substr(at + marker.size());
  return rest.substr(0, rest.find_first_of("]/ \n"));
}

// gcloud's TAB-separated log output, one row of columns per line.
std::vector<std::vector<std::string>> TabRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    rows.push_back(std::move(cols));
  }
  return rows;
}

// Streamed lines the trainer printed ("trial N tag ..."), by the trial column
// gcloud ai-platform prints (severity, time, task, trial, message).
std::map<std::string, std::string> TrainerLinesByTrialColumn(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& cols : TabRows(text)) {
    if (cols.size() == 5 && cols[4].rfind("trial ", 0) == 0) out[cols[3]] = cols[4];
  }
  return out;
}

class GcloudTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveGcloud()) GTEST_SKIP() << "gcloud is not installed: the gcloud suite did not run";
    if (!EngineAnswers()) GTEST_SKIP() << "container engine down";
    config_dir_ = std::filesystem::temp_directory_path() /
                  ("ty-gcloud-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(config_dir_);
    ProcessRun set = RunProcess({std::string(TY_BINARY_DIR) + "/bin/trainyard", "config", "gcloud",
                                 "--api-endpoint", daemon_.base(), "--project", "p"},
                                Env());
    ASSERT_EQ(set.rc, 0) << set.err;
    ASSERT_THAT(set.out, HasSubstr("Activated [trainyard]"));
  }
  void TearDown() override {
    std::error_code ec;
    if (!config_dir_.empty()) std::filesystem::remove_all(config_dir_, ec);
  }

  // Never the user's gcloud settings; fast polling so streams end quickly.
  std::map<std::string, std::string> Env() const {
    return {{"CLOUDSDK_CONFIG", config_dir_.string()},
            {"CLOUDSDK_CORE_DISABLE_PROMPTS", "1"},
            {"CLOUDSDK_ML_ENGINE_POLLING_INTERVAL", "1"},
            {"TRAINYARD_API", ""}};
  }

  ProcessRun Gcloud(std::vector<std::string> args, int timeout_s = 120) {
    args.insert(args.begin(), "gcloud");
    return RunProcess(args, Env(), timeout_s);
  }

  // An ended ml v1 job's whole log, as `gcloud ai-platform jobs stream-logs` prints it.
  std::string LogsAfterTheEnd(const std::string& job) {
    ProcessRun run = Gcloud({"ai-platform", "jobs", "stream-logs", job, "--polling-interval=1"});
    EXPECT_EQ(run.rc, 0) << run.err;
    return run.out;
  }

  std::filesystem::path WriteFile(const std::string& name, const std::string& text) {
    std::filesystem::path p = config_dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  // The n= lines of each task in a streamed log (TAB-separated gcloud output:
  // severity, time, task, [trial id: ai-platform only,] message), in the order printed.
  static std::map<std::string, std::vector<std::string>> LinesByTask(const std::string& text) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& cols : TabRows(text)) {
      if (cols.size() >= 4 && cols.back().rfind("n=", 0) == 0) out[cols[2]].push_back(cols.back());
    }
    return out;
  }

  static void ExpectEveryLineOnceInOrder(
      const std::map<std::string, std::vector<std::string>>& by_task,
      const std::vector<std::string>& tasks) {
    ASSERT_EQ(by_task.size(), tasks.size());
    for (const std::string& task : tasks) {
      auto it = by_task.find(task);
      ASSERT_NE(it, by_task.end()) << task;
      ASSERT_EQ(it->second.size(), static_cast<size_t>(kLinesPerReplica)) << task;
      for (int i = 0; i < kLinesPerReplica; ++i) {
        ASSERT_EQ(it->second[i], "n=" + std::to_string(i)) << task;
      }
    }
  }

  static inline int counter_ = 0;
  Daemon daemon_;
  std::filesystem::path config_dir_;
};

TEST_F(GcloudTest, AiPlatformSubmitStreamsEveryLineThenDescribeListCancel) {
  auto config = WriteFile("ml.yaml",
                          "trainingInput:\n"
                          "  scaleTier: CUSTOM\n"
                          "  masterType: n1-standard-4\n"
                          "  masterConfig: {imageUri: " +
                              std::string(kTestImage) +
                              "}\n"
                              "  workerType: n1-standard-4\n"
                              "  workerCount: 1\n"
                              "  workerConfig: {imageUri: " +
                              std::string(kTestImage) +
                              "}\n"
                              "  args: [\"sh\", \"-c\", \"" +
                              CountingScript() + "\"]\n");
  ProcessRun submit = Gcloud({"ai-platform", "jobs", "submit", "training", "counting",
                              "--config=" + config.string(), "--region=local", "--stream-logs"});
  ASSERT_EQ(submit.rc, 0) << submit.err.substr(0, 2000);
  EXPECT_THAT(submit.out, HasSubstr("state: SUCCEEDED"));
  ExpectEveryLineOnceInOrder(LinesByTask(submit.err), {"master-replica-0", "worker-replica-0"});
  EXPECT_THAT(submit.err, HasSubstr("\tservice\t\tJob completed successfully."));

  // The same log again, for one task, with the stand-alone command.
  ProcessRun stream = Gcloud({"ai-platform", "jobs", "stream-logs", "counting",
                              "--task-name=worker-replica-0", "--polling-interval=1"});
  ASSERT_EQ(stream.rc, 0) << stream.err;
  ExpectEveryLineOnceInOrder(LinesByTask(stream.out), {"worker-replica-0"});

  ProcessRun describe = Gcloud({"ai-platform", "jobs", "describe", "counting"});
  ASSERT_EQ(describe.rc, 0) << describe.err;
  EXPECT_THAT(describe.out, HasSubstr("state: SUCCEEDED"));
  EXPECT_THAT(describe.out, HasSubstr("trainingOutput:\n  consumedMLUnits: "));
  ProcessRun list = Gcloud({"ai-platform", "jobs", "list"});
  ASSERT_EQ(list.rc, 0) << list.err;
  // Its default columns: JOB_ID, STATUS, CREATED.
  EXPECT_THAT(list.out, ::testing::ContainsRegex("JOB_ID +STATUS +CREATED"));
  EXPECT_THAT(list.out, ::testing::ContainsRegex("counting +SUCCEEDED +20"));

  auto sleepy = WriteFile("sleepy.yaml",
                          "trainingInput:\n  masterConfig: {imageUri: " + std::string(kTestImage) +
                              "}\n  args: [\"sleep\", \"600\"]\n");
  ProcessRun start = Gcloud({"ai-platform", "jobs", "submit", "training", "sleepy",
                             "--config=" + sleepy.string(), "--region=local"});
  ASSERT_EQ(start.rc, 0) << start.err;
  ProcessRun cancel = Gcloud({"ai-platform", "jobs", "cancel", "sleepy"});
  ASSERT_EQ(cancel.rc, 0) << cancel.err;
  nlohmann::json job = daemon_.WaitForField("/v1/projects/p/jobs/sleepy", "state", {"CANCELLED"});
  EXPECT_EQ(job.value("state", ""), "CANCELLED") << job.dump();

  ProcessRun read = Gcloud({"logging", "read",
                            "resource.type=ml_job AND resource.labels.job_id=counting AND "
                            "resource.labels.task_name=master-replica-0 AND textPayload=\"n=2499\"",
                            "--format=value(textPayload,resource.labels.task_name)"});
  ASSERT_EQ(read.rc, 0) << read.err;
  EXPECT_EQ(read.out, "n=2499\tmaster-replica-0\n");
}

TEST_F(GcloudTest, AiCustomJobsCreateStreamLogsDescribeListCancel) {
  std::string pool =
      "  - machineSpec: {machineType: n1-standard-4}\n"
      "    replicaCount: 1\n"
      "    containerSpec:\n"
      "      imageUri: " +
      std::string(kTestImage) +
      "\n"
      "      command: [\"sh\", \"-c\", \"" +
      CountingScript() + "\"]\n";
  auto config = WriteFile("vertex.yaml", "workerPoolSpecs:\n" + pool + pool);
  ProcessRun create = Gcloud(
      {"ai", "custom-jobs", "create", "--display-name=counting", "--config=" + config.string()});
  ASSERT_EQ(create.rc, 0) << create.err;
  const std::string marker = "customJobs/";
  std::string id = IdAfter(create.err, marker);
  ASSERT_FALSE(id.empty()) << create.err;
  const std::string path = "/v1/projects/p/locations/us-central1/customJobs/" + id;
  nlohmann::json done = daemon_.WaitForField(path, "state", {"JOB_STATE_SUCCEEDED"}, 120);
  ASSERT_EQ(done.value("state", ""), "JOB_STATE_SUCCEEDED") << done.dump();

  // Started after the end, the stream stops by itself (docs/contracts/cloud-logging-v2.md §1.3).
  ProcessRun stream = Gcloud({"ai", "custom-jobs", "stream-logs", id, "--polling-interval=1"});
  ASSERT_EQ(stream.rc, 0) << stream.err;
  ExpectEveryLineOnceInOrder(LinesByTask(stream.out), {"workerpool0-0", "workerpool1-0"});

  ProcessRun describe = Gcloud({"ai", "custom-jobs", "describe", id});
  ASSERT_EQ(describe.rc, 0) << describe.err;
  EXPECT_THAT(describe.out, HasSubstr("state: JOB_STATE_SUCCEEDED"));
  EXPECT_THAT(describe.out, HasSubstr("displayName: counting"));
  ProcessRun list = Gcloud({"ai", "custom-jobs", "list", "--format=value(displayName,state)"});
  ASSERT_EQ(list.rc, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("counting\tJOB_STATE_SUCCEEDED"));

  auto sleepy = WriteFile("sleepy.yaml",
                          "workerPoolSpecs:\n  - machineSpec: {machineType: n1-standard-4}\n"
                          "    replicaCount: 1\n    containerSpec:\n      imageUri: " +
                              std::string(kTestImage) + "\n      command: [\"sleep\", \"600\"]\n");
  ProcessRun start = Gcloud(
      {"ai", "custom-jobs", "create", "--display-name=sleepy", "--config=" + sleepy.string()});
  ASSERT_EQ(start.rc, 0) << start.err;
  std::string sleepy_id = IdAfter(start.err, marker);
  ASSERT_FALSE(sleepy_id.empty()) << start.err;
  ProcessRun cancel = Gcloud({"ai", "custom-jobs", "cancel", sleepy_id});
  ASSERT_EQ(cancel.rc, 0) << cancel.err;
  EXPECT_THAT(cancel.err, HasSubstr("Request to cancel CustomJob"));
  nlohmann::json job =
      daemon_.WaitForField("/v1/projects/p/locations/us-central1/customJobs/" + sleepy_id, "state",
                           {"JOB_STATE_CANCELLED"});
  EXPECT_EQ(job.value("state", ""), "JOB_STATE_CANCELLED") << job.dump();

  ProcessRun read =
      Gcloud({"logging", "read",
              "resource.labels.job_id=" + id + " AND resource.labels.task_name=workerpool1-0",
              "--order=asc", "--limit=3", "--format=value(textPayload)"});
  ASSERT_EQ(read.rc, 0) << read.err;
  EXPECT_EQ(read.out, "n=0\nn=1\nn=2\n");
}

// ai-platform: a job with trainingInput.hyperparameters from --config streams every
// trial's lines with its trial id, and describe --summarize tables the trials.
TEST_F(GcloudTest, AiPlatformTuningJobStreamsItsTrialsAndSummarizesThem) {
  auto config = WriteFile("tune.yaml",
                          "trainingInput:\n"
                          "  scaleTier: CUSTOM\n"
                          "  masterType: n1-standard-4\n"
                          "  masterConfig: {imageUri: " +
                              std::string(kTestImage) +
                              "}\n"
                              "  args:\n    - sh\n    - -c\n" +
                              TrainerYaml(4) +
                              "    - trainer\n"
                              "  hyperparameters:\n"
                              "    goal: MAXIMIZE\n"
                              "    hyperparameterMetricTag: accuracy\n"
                              "    maxTrials: 3\n"
                              "    maxParallelTrials: 2\n"
                              "    params:\n"
                              "      - {parameterName: x, type: DOUBLE, minValue: 0, maxValue: 1}\n"
                              "      - {parameterName: opt, type: CATEGORICAL, "
                              "categoricalValues: [a, b]}\n");
  ProcessRun submit = Gcloud({"ai-platform", "jobs", "submit", "training", "tuned",
                              "--config=" + config.string(), "--region=local", "--stream-logs"});
  ASSERT_EQ(submit.rc, 0) << submit.err.substr(0, 3000);
  EXPECT_THAT(submit.out, HasSubstr("state: SUCCEEDED"));
  std::map<std::string, std::string> by_trial = TrainerLinesByTrialColumn(submit.err);
  ASSERT_EQ(by_trial.size(), 3u) << submit.err;
  for (const auto& [trial, message] : by_trial) {
    EXPECT_EQ(message.rfind("trial " + trial + " tag accuracy x=", 0), 0u) << message;
  }
  EXPECT_THAT(submit.err, HasSubstr("\tservice\t\tStudy SUCCEEDED: 3 of 3 trials succeeded."));

  ProcessRun summary = Gcloud({"ai-platform", "jobs", "describe", "tuned", "--summarize"});
  ASSERT_EQ(summary.rc, 0) << summary.err;
  EXPECT_THAT(summary.out, HasSubstr("Training Output Trials"));
  EXPECT_THAT(summary.out, ::testing::ContainsRegex("OBJECTIVE_VALUE"));
  nlohmann::json described = nlohmann::json::parse(
      Gcloud({"ai-platform", "jobs", "describe", "tuned", "--format=json"}).out, nullptr, false);
  ASSERT_TRUE(described.is_object());
  ASSERT_EQ(described["trainingOutput"]["trials"].size(), 3u) << described.dump(1);
  EXPECT_EQ(described["trainingOutput"]["completedTrialCount"], "3");
  EXPECT_EQ(described["trainingOutput"]["hyperparameterMetricTag"], "accuracy");
  const nlohmann::json& best = described["trainingOutput"]["trials"][0];
  EXPECT_TRUE(best["finalMetric"].contains("objectiveValue")) << best.dump();
}

// Vertex: gcloud ai hp-tuning-jobs create|describe|list|stream-logs|cancel.
TEST_F(GcloudTest, AiHpTuningJobsCreateDescribeListStreamCancel) {
  auto trial_spec = [](const std::string& script_items) {
    return "trialJobSpec:\n"
           "  workerPoolSpecs:\n"
           "    - machineSpec: {machineType: n1-standard-4}\n"
           "      replicaCount: 1\n"
           "      containerSpec:\n"
           "        imageUri: " +
           std::string(kTestImage) + "\n        command:\n" + script_items;
  };
  const std::string study =
      "studySpec:\n"
      "  metrics: [{metricId: accuracy, goal: MAXIMIZE}]\n"
      "  parameters:\n"
      "    - parameterId: x\n"
      "      doubleValueSpec: {minValue: 0, maxValue: 1}\n";
  auto config = WriteFile("hp.yaml", study + trial_spec("          - sh\n          - -c\n" +
                                                        TrainerYaml(10) + "          - trainer\n"));
  ProcessRun create =
      Gcloud({"ai", "hp-tuning-jobs", "create", "--region=us-central1", "--display-name=tuned",
              "--config=" + config.string(), "--max-trial-count=2", "--parallel-trial-count=2"});
  ASSERT_EQ(create.rc, 0) << create.err;
  std::string id = IdAfter(create.err, "Hyperparameter tuning job [");
  ASSERT_FALSE(id.empty()) << create.err;
  const std::string path = "/v1/projects/p/locations/us-central1/hyperparameterTuningJobs/" + id;
  nlohmann::json done = daemon_.WaitForField(path, "state", {"JOB_STATE_SUCCEEDED"}, 120);
  ASSERT_EQ(done.value("state", ""), "JOB_STATE_SUCCEEDED") << done.dump(1);

  ProcessRun describe = Gcloud({"ai", "hp-tuning-jobs", "describe", id, "--format=json"});
  ASSERT_EQ(describe.rc, 0) << describe.err;
  nlohmann::json described = nlohmann::json::parse(describe.out, nullptr, false);
  ASSERT_EQ(described["trials"].size(), 2u) << describe.out;
  for (const nlohmann::json& t : described["trials"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
    EXPECT_EQ(t["finalMeasurement"]["metrics"][0]["metricId"], "accuracy") << t.dump();
  }
  ProcessRun list = Gcloud({"ai", "hp-tuning-jobs", "list", "--format=value(displayName,state)"});
  ASSERT_EQ(list.rc, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("tuned\tJOB_STATE_SUCCEEDED"));
  ProcessRun stream = Gcloud({"ai", "hp-tuning-jobs", "stream-logs", id, "--polling-interval=1"});
  ASSERT_EQ(stream.rc, 0) << stream.err;
  EXPECT_THAT(stream.out, HasSubstr("\tworkerpool0-0\ttrial 1 tag accuracy x="));
  EXPECT_THAT(stream.out, HasSubstr("\tworkerpool0-0\ttrial 2 tag accuracy x="));

  auto sleepy = WriteFile(
      "sleepy-hp.yaml", study + trial_spec("          - sh\n          - -c\n          - sleep 600\n"
                                           "          - sleeper\n"));
  ProcessRun start = Gcloud({"ai", "hp-tuning-jobs", "create", "--region=us-central1",
                             "--display-name=sleepy", "--config=" + sleepy.string()});
  ASSERT_EQ(start.rc, 0) << start.err;
  std::string sleepy_id = IdAfter(start.err, "Hyperparameter tuning job [");
  ProcessRun cancel = Gcloud({"ai", "hp-tuning-jobs", "cancel", sleepy_id});
  ASSERT_EQ(cancel.rc, 0) << cancel.err;
  EXPECT_THAT(cancel.err, HasSubstr("Request to cancel hyperparameter tuning job"));
  nlohmann::json cancelled = daemon_.WaitForField(
      "/v1/projects/p/locations/us-central1/hyperparameterTuningJobs/" + sleepy_id, "state",
      {"JOB_STATE_CANCELLED"});
  EXPECT_EQ(cancelled.value("state", ""), "JOB_STATE_CANCELLED") << cancelled.dump(1);
}

// gcloud storage against the bucket directories: a 50 MB file (resumable upload,
// ranged download), 1,000 small files with cp -r and rsync, gcloud checking the
// hashes of every transfer, then a replica reading the same bytes at /gcs.
TEST_F(GcloudTest, StorageRoundTripsThenAReplicaReadsTheBytesAtGcs) {
  ProcessRun mb = Gcloud({"storage", "buckets", "create", "gs://data-bkt"});
  ASSERT_EQ(mb.rc, 0) << mb.err;
  std::filesystem::path big = config_dir_ / "big.bin";
  {
    std::ofstream out(big, std::ios::binary);
    std::string block(1 << 20, '\0');
    for (int i = 0; i < 50; ++i) {
      for (size_t k = 0; k < block.size(); ++k) block[k] = static_cast<char>((k * 31 + i) & 0xff);
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
  }
  ProcessRun up = Gcloud({"storage", "cp", big.string(), "gs://data-bkt/big/big.bin"});
  ASSERT_EQ(up.rc, 0) << up.err;
  ProcessRun down =
      Gcloud({"storage", "cp", "gs://data-bkt/big/big.bin", (config_dir_ / "back.bin").string()});
  ASSERT_EQ(down.rc, 0) << down.err;
  EXPECT_THAT(down.err, ::testing::Not(HasSubstr("does not match")));
  ProcessRun same = RunProcess({"cmp", big.string(), (config_dir_ / "back.bin").string()});
  EXPECT_EQ(same.rc, 0) << same.out;

  // From 150 MB gcloud uploads parts in parallel and composes them (no MD5 on the
  // composite, as on Google: gcloud checks each part, then the download's CRC-32C).
  std::filesystem::path huge = config_dir_ / "huge.bin";
  {
    std::ofstream out(huge, std::ios::binary);
    std::string block(1 << 20, '\0');
    for (int i = 0; i < 160; ++i) {
      for (size_t k = 0; k < block.size(); k += 4096) block[k] = static_cast<char>(i + k);
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
  }
  ProcessRun composite = Gcloud({"storage", "cp", huge.string(), "gs://data-bkt/huge.bin"});
  ASSERT_EQ(composite.rc, 0) << composite.err;
  ProcessRun described = Gcloud({"storage", "ls", "-L", "gs://data-bkt/huge.bin"});
  EXPECT_THAT(described.out, ::testing::ContainsRegex("Component-Count: +[2-9]"));
  ProcessRun fetched =
      Gcloud({"storage", "cp", "gs://data-bkt/huge.bin", (config_dir_ / "huge.back").string()});
  ASSERT_EQ(fetched.rc, 0) << fetched.err;
  EXPECT_EQ(RunProcess({"cmp", huge.string(), (config_dir_ / "huge.back").string()}).rc, 0);
  EXPECT_FALSE(std::filesystem::exists(daemon_.data_dir() + "/buckets/data-bkt/gcloud"))
      << "composite parts left behind";
  std::filesystem::remove(huge);
  std::filesystem::remove(config_dir_ / "huge.back");

  std::filesystem::path many = config_dir_ / "many";
  std::filesystem::create_directories(many / "sub");
  for (int i = 0; i < 1000; ++i) {
    std::ofstream(many / (i % 10 == 0 ? "sub" : ".") / ("f" + std::to_string(i) + ".txt"))
        << "small file " << i << "\n";
  }
  ProcessRun cp = Gcloud({"storage", "cp", "-r", many.string(), "gs://data-bkt/"}, 300);
  ASSERT_EQ(cp.rc, 0) << cp.err.substr(0, 2000);
  ProcessRun ls = Gcloud({"storage", "ls", "-r", "gs://data-bkt/many/**"});
  ASSERT_EQ(ls.rc, 0) << ls.err;
  EXPECT_EQ(std::count(ls.out.begin(), ls.out.end(), '\n'), 1000);
  // The first rsync after cp copies everything (cp records no file mtime, so the
  // times differ, as on Google); the next one copies only the edited file.
  ProcessRun first = Gcloud({"storage", "rsync", "-r", many.string(), "gs://data-bkt/many"}, 300);
  ASSERT_EQ(first.rc, 0) << first.err.substr(0, 2000);
  std::ofstream(many / "f1.txt") << "edited\n";
  ProcessRun sync = Gcloud({"storage", "rsync", "-r", many.string(), "gs://data-bkt/many"}, 300);
  ASSERT_EQ(sync.rc, 0) << sync.err.substr(0, 2000);
  size_t copies = 0;
  for (size_t at = sync.err.find("Copying file://"); at != std::string::npos;
       at = sync.err.find("Copying file://", at + 1)) {
    ++copies;
  }
  EXPECT_EQ(copies, 1u) << sync.err.substr(0, 2000);
  ProcessRun cat = Gcloud({"storage", "cat", "gs://data-bkt/many/f1.txt"});
  EXPECT_EQ(cat.out, "edited\n");

  // `submit training --package-path --staging-bucket` builds the package and uploads
  // it (multipart, the name in the query) before creating the job.
  std::filesystem::create_directories(config_dir_ / "pkg/trainer");
  std::ofstream(config_dir_ / "pkg/trainer/__init__.py") << "";
  std::ofstream(config_dir_ / "pkg/trainer/task.py") << "print('packaged')\n";
  ProcessRun packaged = Gcloud(
      {"ai-platform", "jobs", "submit", "training", "packaged", "--region=local",
       "--package-path=" + (config_dir_ / "pkg/trainer").string(), "--module-name=trainer.task",
       "--staging-bucket=gs://data-bkt", "--runtime-version=2.11", "--python-version=3.7"});
  ASSERT_EQ(packaged.rc, 0) << packaged.err;
  nlohmann::json staged = daemon_.Get("/v1/projects/p/jobs/packaged").Json();
  std::string uri = staged["trainingInput"]["packageUris"][0];
  ASSERT_EQ(uri.rfind("gs://data-bkt/packaged/", 0), 0u) << uri;
  EXPECT_TRUE(std::filesystem::exists(daemon_.data_dir() + "/buckets/data-bkt/" + uri.substr(14)))
      << uri;
  Gcloud({"ai-platform", "jobs", "cancel", "packaged"});

  // A replica sees the same bytes at /gcs/data-bkt.
  ProcessRun sum = RunProcess({"md5sum", big.string()});
  std::string md5 = sum.out.substr(0, 32);
  nlohmann::json job = {{"displayName", "reads-gcs"},
                        {"jobSpec",
                         {{"workerPoolSpecs",
                           {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                             {"replicaCount", 1},
                             {"containerSpec",
                              {{"imageUri", kTestImage},
                               {"command",
                                {"sh", "-c",
                                 "md5sum /gcs/data-bkt/big/big.bin; cat /gcs/data-bkt/many/f1.txt; "
                                 "ls /gcs/data-bkt/many/sub | wc -l"}}}}}}}}}};
  HttpReply made = daemon_.Post("/v1/projects/p/locations/us-central1/customJobs", job.dump());
  ASSERT_EQ(made.status, 200) << made.body;
  std::string path = "/v1/projects/p/locations/us-central1/customJobs/" + IdOf(made.Json());
  nlohmann::json done = daemon_.WaitForField(path, "state", {"JOB_STATE_SUCCEEDED"}, 60);
  ASSERT_EQ(done.value("state", ""), "JOB_STATE_SUCCEEDED") << done.dump();
  std::string logs = daemon_.Get(path + "/logs").body;
  EXPECT_THAT(logs, HasSubstr(md5 + "  /gcs/data-bkt/big/big.bin"));
  EXPECT_THAT(logs, HasSubstr("\"edited\""));
  EXPECT_THAT(logs, HasSubstr("\"100\""));
}

}  // namespace
}  // namespace ty::testing

namespace ty::testing {
namespace {

// The guides' commands as written (issue 20 item 6): a Python package submitted with
// --package-path and no runtime version; the same package through `gcloud ai
// custom-jobs create` on a Vertex prebuilt image name; the distributed custom-container
// command that gives machine types without --scale-tier.
TEST_F(GcloudTest, TheGuidesPackageAndDistributedCommandsRunAsWritten) {
  if (!EngineHasImage("localhost/trainyard/sklearn-cpu:latest")) {
    if (std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr) FAIL() << "no scikit-learn runtime";
    GTEST_SKIP() << "the scikit-learn runtime is not built (scripts/build-sample-image)";
  }
  ASSERT_EQ(Gcloud({"storage", "buckets", "create", "gs://guide-bkt"}).rc, 0);
  std::filesystem::create_directories(config_dir_ / "guide/trainer");
  // Contents of this run's own: the install cache is keyed by what a package holds and
  // outlives a daemon, so the first submit below installs whatever ran before.
  WriteFile(
      "guide/trainer/__init__.py",
      "# " + std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "\n");
  WriteFile("guide/trainer/task.py",
            "import sys, sklearn, xgboost, pandas\nprint('guide trainer', sys.argv[1:])\n");
  ProcessRun submit =
      Gcloud({"ai-platform", "jobs", "submit", "training", "guide_pkg", "--region=us-central1",
              "--package-path=" + (config_dir_ / "guide/trainer").string(),
              "--module-name=trainer.task", "--staging-bucket=gs://guide-bkt", "--scale-tier=basic",
              "--stream-logs", "--", "--epochs=1"},
             300);
  ASSERT_EQ(submit.rc, 0) << submit.err.substr(0, 3000);
  EXPECT_THAT(submit.out, HasSubstr("state: SUCCEEDED"));
  // Not from the submit's own stream: gcloud reads only entries older than 5 s and stops
  // after two empty polls once the job has ended, so a job that ends 5-10 s after the
  // submit (pip's install, then imports) can end its stream before its last lines show
  // (CI saw it). Streamed again after the end, every line is there.
  const std::string first_logs = LogsAfterTheEnd("guide_pkg");
  EXPECT_THAT(first_logs, HasSubstr("master-replica-0\t\tguide trainer ['--epochs=1']"));
  EXPECT_THAT(first_logs, HasSubstr("Installing the Python packages"));

  // Issue 33 item 6: each submit builds a new sdist (the same files, new archive bytes,
  // staged under a path of its own); the install cache hits by what the package holds.
  ProcessRun again = Gcloud(
      {"ai-platform", "jobs", "submit", "training", "guide_pkg_again", "--region=us-central1",
       "--package-path=" + (config_dir_ / "guide/trainer").string(), "--module-name=trainer.task",
       "--staging-bucket=gs://guide-bkt", "--scale-tier=basic", "--", "--epochs=2"},
      300);
  ASSERT_EQ(again.rc, 0) << again.err.substr(0, 3000);
  nlohmann::json again_done = daemon_.WaitForField("/v1/projects/p/jobs/guide_pkg_again", "state",
                                                   {"SUCCEEDED", "FAILED"}, 120);
  EXPECT_EQ(again_done.value("state", ""), "SUCCEEDED") << again_done.dump();
  const std::string again_uri = again_done["trainingInput"]["packageUris"][0];
  EXPECT_EQ(again_uri.rfind("gs://guide-bkt/guide_pkg_again/", 0), 0u) << again_uri;
  const std::string again_logs = LogsAfterTheEnd("guide_pkg_again");
  EXPECT_THAT(again_logs, HasSubstr("guide trainer ['--epochs=2']"));
  EXPECT_THAT(again_logs, ::testing::Not(HasSubstr("Installing the Python packages")))
      << again_logs;
  // `trainyard images list` shows the installs kept for reuse.
  ProcessRun listed = RunProcess({std::string(TY_BINARY_DIR) + "/bin/trainyard", "images", "list"});
  EXPECT_THAT(listed.out, HasSubstr("Python package installs kept"));
  EXPECT_THAT(listed.out, HasSubstr("localhost/trainyard/packages:"));

  const std::string uri = Gcloud({"ai-platform", "jobs", "describe", "guide_pkg",
                                  "--format=value(trainingInput.packageUris[0])"})
                              .out;
  ASSERT_EQ(uri.rfind("gs://guide-bkt/guide_pkg/", 0), 0u) << uri;
  ProcessRun create = Gcloud(
      {"ai", "custom-jobs", "create", "--region=us-central1", "--display-name=guide-vertex",
       "--worker-pool-spec=machine-type=n1-standard-4,replica-count=1,executor-image-uri=us-docker."
       "pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest,python-module=trainer.task",
       "--python-package-uris=" + uri.substr(0, uri.find('\n')), "--args=--lr=0.1",
       "--format=value(name)"});
  ASSERT_EQ(create.rc, 0) << create.err;
  const std::string name = create.out.substr(0, create.out.find('\n'));
  nlohmann::json done = daemon_.WaitForField("/v1/" + name, "state",
                                             {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}, 120);
  EXPECT_EQ(done.value("state", ""), "JOB_STATE_SUCCEEDED") << done.dump();
  EXPECT_THAT(daemon_.Get("/v1/" + name + "/logs").body, HasSubstr("guide trainer ['--lr=0.1']"));

  ProcessRun dist = Gcloud(
      {"ai-platform", "jobs", "submit", "training", "guide_dist", "--region=us-central1",
       std::string("--master-image-uri=") + kTestImage, "--master-machine-type=complex_model_m",
       "--worker-count=2", "--worker-machine-type=complex_model_m", "--parameter-server-count=1",
       "--parameter-server-machine-type=large_model", "--stream-logs", "--", "sh", "-c",
       "echo \"$TF_CONFIG\" | grep -o '\"type\": *\"[a-z]*\"'"},
      300);
  ASSERT_EQ(dist.rc, 0) << dist.err.substr(0, 3000);
  EXPECT_THAT(dist.out, HasSubstr("state: SUCCEEDED"));
  EXPECT_EQ(Gcloud({"ai-platform", "jobs", "describe", "guide_dist",
                    "--format=value(trainingInput.scaleTier)"})
                .out,
            "CUSTOM\n");
  const std::string dist_logs = LogsAfterTheEnd("guide_dist");
  for (const char* task : {"master-replica-0", "worker-replica-1", "ps-replica-0"}) {
    EXPECT_THAT(dist_logs, HasSubstr(task)) << dist_logs.substr(0, 3000);
  }
}

}  // namespace
}  // namespace ty::testing

namespace ty::testing {
namespace {

// `gcloud ai custom-jobs local-run` (issue 20 item 6): gcloud builds an image FROM the
// Vertex prebuilt name with `docker build` and runs it with `docker run`; `docker` is
// whatever PATH gives, reaching podman (podman-docker, or a Docker CLI's context).
TEST_F(GcloudTest, LocalRunBuildsOnThePrebuiltNameAndRunsThroughDocker) {
  constexpr char kRuntime[] = "localhost/trainyard/sklearn-cpu:latest";
  if (!EngineHasImage(kRuntime)) {
    if (std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr) FAIL() << kRuntime << " is missing";
    GTEST_SKIP() << kRuntime << " is not built (scripts/build-sample-image)";
  }
  std::filesystem::create_directories(config_dir_ / "local/trainer");
  WriteFile("local/trainer/task.py",
            "import sys, sklearn\nprint('ran locally on', sklearn.__version__, sys.argv[1:])\n");
  ProcessRun run = Gcloud(
      {"ai", "custom-jobs", "local-run",
       "--executor-image-uri=us-docker.pkg.dev/vertex-ai/training/"
       "sklearn-cpu.1-0:latest",
       "--local-package-path=" + (config_dir_ / "local/trainer").string(), "--script=task.py",
       "--output-image-uri=localhost/ty-local-run:test", "--", "--lr=0.3"},
      300);
  RunProcess({"podman", "rmi", "-f", "localhost/ty-local-run:test"});
  ASSERT_EQ(run.rc, 0) << run.out << run.err;
  EXPECT_THAT(run.out + run.err, HasSubstr("ran locally on 1.2"));
  EXPECT_THAT(run.out + run.err, HasSubstr("['--lr=0.3']"));
}

// The guides' `gcloud artifacts repositories create` (issue 33), then describe and list,
// in one location and across all (gcloud asks v1beta2 for the locations then).
TEST_F(GcloudTest, ArtifactsRepositoriesCreateDescribeAndList) {
  ProcessRun create =
      Gcloud({"artifacts", "repositories", "create", "flower-app", "--repository-format=docker",
              "--location=us-central1", "--description=Docker repository"});
  ASSERT_EQ(create.rc, 0) << create.err;
  EXPECT_THAT(create.err, HasSubstr("Created repository [flower-app]"));
  ProcessRun describe =
      Gcloud({"artifacts", "repositories", "describe", "flower-app", "--location=us-central1"});
  ASSERT_EQ(describe.rc, 0) << describe.err;
  EXPECT_THAT(describe.out,
              HasSubstr("name: projects/p/locations/us-central1/repositories/flower-app"));
  EXPECT_THAT(describe.out, HasSubstr("format: DOCKER"));
  EXPECT_THAT(describe.out, HasSubstr("description: Docker repository"));
  ProcessRun here = Gcloud({"artifacts", "repositories", "list", "--location=us-central1"});
  ASSERT_EQ(here.rc, 0) << here.err;
  EXPECT_THAT(here.out, HasSubstr("flower-app"));
  ProcessRun everywhere = Gcloud({"artifacts", "repositories", "list", "--location=all"});
  ASSERT_EQ(everywhere.rc, 0) << everywhere.err;
  EXPECT_THAT(everywhere.out, HasSubstr("flower-app"));
  ProcessRun again = Gcloud({"artifacts", "repositories", "create", "flower-app",
                             "--repository-format=docker", "--location=us-central1"});
  EXPECT_NE(again.rc, 0);
  EXPECT_THAT(again.err, HasSubstr("already exists"));
}

// The TensorBoard commands (issue 34): tensorboards (GA, v1), and experiments, runs and
// time series (beta only: v1beta1), down to reading a series by step.
TEST_F(GcloudTest, AiTensorboardsExperimentsRunsAndTimeSeries) {
  ProcessRun create =
      Gcloud({"ai", "tensorboards", "create", "--region=us-central1", "--display-name=my board"});
  ASSERT_EQ(create.rc, 0) << create.err;
  EXPECT_THAT(create.err, HasSubstr("Created Vertex AI Tensorboard: projects/p/locations/"
                                    "us-central1/tensorboards/1."));
  const std::vector<std::string> where = {"--region=us-central1", "--tensorboard-id=1"};
  auto beta = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"beta", "ai"});
    args.insert(args.end(), where.begin(), where.end());
    return Gcloud(args);
  };
  ASSERT_EQ(Gcloud({"beta", "ai", "tensorboard-experiments", "create", "1",
                    "--tensorboard-experiment-id=e1", "--region=us-central1"})
                .rc,
            0);
  ASSERT_EQ(
      beta({"tensorboard-runs", "create", "e1", "--tensorboard-run-id=r1", "--display-name=r1"}).rc,
      0);
  ProcessRun series =
      beta({"tensorboard-time-series", "create", "r1", "--tensorboard-experiment-id=e1",
            "--display-name=loss", "--type=SCALAR"});
  ASSERT_EQ(series.rc, 0) << series.err;
  HttpReply wrote = daemon_.Post(
      "/v1/projects/p/locations/us-central1/tensorboards/1/experiments/e1/runs/r1:write",
      R"({"timeSeriesData":[{"tensorboardTimeSeriesId":"1","values":[
          {"step":"1","wallTime":"2026-01-01T00:00:00Z","scalar":{"value":0.5}},
          {"step":"2","wallTime":"2026-01-01T00:00:01Z","scalar":{"value":0.25}}]}]})");
  ASSERT_EQ(wrote.status, 200) << wrote.body;
  ProcessRun runs = beta({"tensorboard-runs", "list", "--tensorboard-experiment-id=e1"});
  ASSERT_EQ(runs.rc, 0) << runs.err;
  EXPECT_THAT(runs.out, HasSubstr("experiments/e1/runs/r1"));
  ProcessRun read = beta({"tensorboard-time-series", "read", "1", "--tensorboard-run-id=r1",
                          "--tensorboard-experiment-id=e1"});
  ASSERT_EQ(read.rc, 0) << read.err;
  EXPECT_THAT(read.out, HasSubstr("value: 0.25"));
  EXPECT_THAT(read.out, HasSubstr("value: 0.5"));
  // gcloud sends --filter to the server ("step+%3E+1") and also applies it to what it
  // prints, where no field is named step: the server must take it, the output is empty.
  ProcessRun filtered = beta({"tensorboard-time-series", "read", "1", "--tensorboard-run-id=r1",
                              "--tensorboard-experiment-id=e1", "--filter=step > 1"});
  EXPECT_EQ(filtered.rc, 0) << filtered.err;
  ASSERT_EQ(Gcloud({"ai", "tensorboards", "delete", "1", "--region=us-central1"}).rc, 0);
  ProcessRun list = Gcloud({"ai", "tensorboards", "list", "--region=us-central1"});
  ASSERT_EQ(list.rc, 0) << list.err;
  EXPECT_THAT(list.err, HasSubstr("Listed 0 items."));
}

}  // namespace
}  // namespace ty::testing
