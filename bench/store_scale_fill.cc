// Fills a data directory's store with N finished Vertex jobs through the JobStore
// API (bench/store_scale drives it): each job has one replica, three events, a label
// `team` cycling over 10 values and a realistic canonical spec.
//
// With LOG_LINES, the newest job also gets a log of that many lines (through the
// LogStore API, as replicas' lines land): bench/console's long log.
//
// usage: store_scale_fill DATA_DIR N [LOG_LINES]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "jobstore/sqlite_job_store.h"
#include "logs/log_store.h"

namespace {

// `lines` lines of a training loop's kind in job `uid`'s log, one every millisecond.
int WriteLog(const std::string& dir, const std::string& uid, long lines, ty::TimeMicros t0) {
  auto logs = ty::logs::LogStore::Create(dir + "/logs");
  if (!logs.ok()) {
    std::fprintf(stderr, "%s\n", logs.status().ToString().c_str());
    return 1;
  }
  ty::logs::LogEntry e;
  e.task = "workerpool0-0";
  e.severity = "INFO";
  for (long i = 0; i < lines; ++i) {
    e.time = t0 + i * 1000;
    e.message = "step " + std::to_string(i) + " loss=" + std::to_string(1.0 / (1 + i)) +
                " lr=0.001 examples/s=5120";
    if (ty::Status s = (*logs)->Append(uid, e); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s DATA_DIR N [LOG_LINES]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const long n = std::atol(argv[2]);
  std::filesystem::create_directories(dir);
  auto store = ty::jobstore::SqliteJobStore::Open(dir + "/trainyard.db");
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  const ty::TimeMicros t0 = 1'700'000'000'000'000;
  for (long i = 0; i < n; ++i) {
    ty::model::Job job;
    job.uid = std::to_string(1'700'000'000'000'000'000LL + i * 1000);
    job.dialect = ty::model::Dialect::kVertex;
    job.project = "bench";
    job.location = "local";
    const std::string team = "t" + std::to_string(i % 10);
    job.spec_json =
        R"({"displayName":"job-)" + std::to_string(i) +
        R"(","jobSpec":{"workerPoolSpecs":[{"machineSpec":)"
        R"({"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":{"imageUri":)"
        R"("localhost/trainyard/busybox:latest","command":["sh","-c","echo hello"]}}]},"labels":{"team":")" +
        team + R"("}})";
    // What the service sets at submit from the parsed spec: the list fields.
    job.spec.display_name = "job-" + std::to_string(i);
    job.spec.labels = {{"team", team}};
    job.state = i % 7 == 0 ? ty::model::JobState::kFailed : ty::model::JobState::kSucceeded;
    job.create_time = job.phases.queued = t0 + i * 1000;
    job.start_time = job.phases.all_running = job.create_time + 100;
    job.end_time = job.update_time = job.phases.finished = job.create_time + 900;
    job.attempt = 1;
    ty::model::ReplicaRecord r;
    r.task_name = "workerpool0-0";
    r.handle = "ty-" + job.uid + "-1-0-0";
    r.state = ty::model::ReplicaState::kSucceeded;
    r.exit_code = 0;
    job.replicas.push_back(r);
    if (ty::Status s = (*store)->CreateJob(job); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    for (const char* e : {"Job is queued.", "Job is running.", "Job SUCCEEDED."}) {
      (*store)->AppendEvent(job.uid, {job.create_time, "state", e}).IgnoreError();
    }
  }
  if (argc == 4 && n > 0) {
    const std::string newest = std::to_string(1'700'000'000'000'000'000LL + (n - 1) * 1000);
    return WriteLog(dir, newest, std::atol(argv[3]), t0);
  }
  return 0;
}
