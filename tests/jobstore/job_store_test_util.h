// Test helpers shared by the JobStore tests: a job with every field set, and a
// field-by-field comparison of a job read back from a store.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "model/job.h"

namespace ty::jobstore::testing {

// A job with every field set to a distinct non-default value.
inline model::Job FullJob(const std::string& uid, model::Dialect dialect = model::Dialect::kVertex,
                          const std::string& project = "proj", const std::string& job_id = "") {
  model::Job job;
  job.uid = uid;
  job.dialect = dialect;
  job.project = project;
  job.location = dialect == model::Dialect::kVertex ? "us-central1" : "";
  job.spec.dialect = dialect;
  job.spec.job_id = job_id;
  job.spec.display_name = "kept as a list field";
  job.spec.labels = {{"team", "vision"}, {"env", "prod"}};
  job.spec_json = R"({"displayName":"d","jobSpec":{"workerPoolSpecs":[]}})" + uid;
  job.spec_record = R"({"v":1,"jobId":")" + uid + R"("})";
  job.state = model::JobState::kRunning;
  job.create_time = 1000;
  job.start_time = 2000;
  job.end_time = 3000;
  job.update_time = 4000;
  job.phases = model::PhaseTimes{1000, 1100, 1200, 1300, 1400};
  job.error = model::JobError{13, "workerpool0-0 exited with 3\nlast lines: \xff\xfe"};
  job.attempt = 2;
  job.cancel_requested = true;
  job.ending = model::Ending{model::EndingKind::kRetry, model::JobError{3, "worker died"}};
  model::ReplicaGrant grant;
  grant.node = 1;
  grant.cpus = 2.5;
  grant.memory_gb = 7.5;
  grant.gpu_type = "NVIDIA_TESLA_T4";
  grant.gpu_indices = {1, 3};
  grant.node_name = "gpu-box";
  grant.cpu_limit = 4;
  grant.memory_limit_gb = 15;
  job.grants = {grant};
  job.preemptions = 2;
  job.images = {{"gcr.io/proj/trainer:v1", "sha256:" + std::string(64, 'a'),
                 "sha256:" + std::string(64, 'b')},
                {"localhost/built:1", "", "sha256:" + std::string(64, 'c')}};
  model::ReplicaRecord r0;
  r0.pool = 0;
  r0.index = 0;
  r0.attempt = 2;
  r0.task_name = "workerpool0-0";
  r0.handle = "ty-" + uid + "-2-0-0";
  r0.state = model::ReplicaState::kFailed;
  r0.exit_code = 137;
  r0.signal = 9;
  r0.restarts = 1;
  r0.start_time = 1500;
  r0.end_time = 2500;
  model::ReplicaRecord r1 = r0;
  r1.pool = 1;
  r1.index = 3;
  r1.task_name = "workerpool1-3";
  r1.handle = "ty-" + uid + "-2-1-3";
  r1.state = model::ReplicaState::kRunning;
  r1.exit_code = std::nullopt;
  r1.signal = std::nullopt;
  r1.restarts = 0;
  r1.end_time = 0;
  model::ReplicaRecord r2 = r0;  // Exit code 0 must not read back as "no exit code".
  r2.pool = 1;
  r2.index = 1;
  r2.state = model::ReplicaState::kSucceeded;
  r2.exit_code = 0;
  r2.signal = std::nullopt;
  // Deliberately not sorted by (pool, index): the store keeps vector order.
  job.replicas = {r0, r1, r2};
  return job;
}

inline void ExpectSameReplica(const model::ReplicaRecord& a, const model::ReplicaRecord& b) {
  EXPECT_EQ(a.pool, b.pool);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.attempt, b.attempt);
  EXPECT_EQ(a.task_name, b.task_name);
  EXPECT_EQ(a.handle, b.handle);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.exit_code, b.exit_code);
  EXPECT_EQ(a.signal, b.signal);
  EXPECT_EQ(a.restarts, b.restarts);
  EXPECT_EQ(a.start_time, b.start_time);
  EXPECT_EQ(a.end_time, b.end_time);
}

// Every persisted field of `want` equals `got`'s; `got.spec` is default-constructed.
inline void ExpectStoredJob(const model::Job& want, const model::Job& got) {
  SCOPED_TRACE("job " + want.uid);
  EXPECT_EQ(got.uid, want.uid);
  EXPECT_EQ(got.dialect, want.dialect);
  EXPECT_EQ(got.project, want.project);
  EXPECT_EQ(got.location, want.location);
  EXPECT_EQ(got.spec_json, want.spec_json);
  EXPECT_EQ(got.state, want.state);
  EXPECT_EQ(got.create_time, want.create_time);
  EXPECT_EQ(got.start_time, want.start_time);
  EXPECT_EQ(got.end_time, want.end_time);
  EXPECT_EQ(got.update_time, want.update_time);
  EXPECT_EQ(got.phases.queued, want.phases.queued);
  EXPECT_EQ(got.phases.admitted, want.phases.admitted);
  EXPECT_EQ(got.phases.image_ready, want.phases.image_ready);
  EXPECT_EQ(got.phases.all_running, want.phases.all_running);
  EXPECT_EQ(got.phases.finished, want.phases.finished);
  ASSERT_EQ(got.error.has_value(), want.error.has_value());
  if (want.error) {
    EXPECT_EQ(got.error->code, want.error->code);
    EXPECT_EQ(got.error->message, want.error->message);
  }
  EXPECT_EQ(got.attempt, want.attempt);
  EXPECT_EQ(got.cancel_requested, want.cancel_requested);
  EXPECT_EQ(got.spec_record, want.spec_record);
  EXPECT_EQ(got.ending == want.ending, true);
  EXPECT_EQ(got.grants == want.grants, true);
  EXPECT_EQ(got.preemptions, want.preemptions);
  EXPECT_EQ(got.images == want.images, true);
  EXPECT_EQ(model::EncodeTrials(got.trials), model::EncodeTrials(want.trials));
  EXPECT_EQ(got.study_progress == want.study_progress, true);
  EXPECT_EQ(model::EncodeOutbox(got.outbox), model::EncodeOutbox(want.outbox));
  EXPECT_EQ(model::JobKindName(got.kind), model::JobKindName(want.kind));
  EXPECT_EQ(got.study_uid, want.study_uid);
  EXPECT_EQ(got.trial_id, want.trial_id);
  ASSERT_EQ(got.replicas.size(), want.replicas.size());
  for (size_t i = 0; i < want.replicas.size(); ++i)
    ExpectSameReplica(want.replicas[i], got.replicas[i]);
  // spec is not persisted, but for the list fields (the ml v1 id, display name, labels).
  EXPECT_EQ(got.spec.job_id, want.dialect == model::Dialect::kMlV1 ? want.spec.job_id : "");
  EXPECT_EQ(got.spec.display_name, want.spec.display_name);
  EXPECT_EQ(got.spec.labels, want.spec.labels);
  EXPECT_TRUE(got.spec.pools.empty());
}

}  // namespace ty::jobstore::testing
