// The JobStore contract, as one typed test suite every backend must pass
// (after ray's store_client_test_base.h). A backend test instantiates it with a
// factory type providing `static std::unique_ptr<jobstore::JobStore> Make();`:
//
//   struct MyFactory { static std::unique_ptr<jobstore::JobStore> Make(); };
//   INSTANTIATE_TYPED_TEST_SUITE_P(My, JobStoreContractTest, MyFactory);
//
// Include from exactly one .cc per test binary (it registers the suite).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "jobstore/job_store.h"
#include "jobstore/job_store_test_util.h"
#include "model/job.h"

namespace ty::jobstore::testing {

template <typename Factory>
class JobStoreContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = Factory::Make();
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<JobStore> store_;
};

TYPED_TEST_SUITE_P(JobStoreContractTest);

TYPED_TEST_P(JobStoreContractTest, CreateGetRoundTripsEveryField) {
  model::Job job = FullJob("101");
  ASSERT_TRUE(this->store_->CreateJob(job).ok());
  Result<model::Job> got = this->store_->GetJob("101");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectStoredJob(job, *got);
}

TYPED_TEST_P(JobStoreContractTest, RoundTripsDefaultsAndEmptyOptionals) {
  model::Job plain;
  plain.uid = "102";
  plain.project = "p";
  ASSERT_TRUE(this->store_->CreateJob(plain).ok());
  Result<model::Job> got = this->store_->GetJob("102");
  ASSERT_TRUE(got.ok());
  ExpectStoredJob(plain, *got);
  EXPECT_FALSE(got->error.has_value());

  // An error with code 0 and no message is still an error (not "no error").
  model::Job zero_error = plain;
  zero_error.uid = "103";
  zero_error.error = model::JobError{};
  ASSERT_TRUE(this->store_->CreateJob(zero_error).ok());
  got = this->store_->GetJob("103");
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->error.has_value());
  EXPECT_EQ(got->error->code, 0);
  EXPECT_EQ(got->error->message, "");
}

TYPED_TEST_P(JobStoreContractTest, DuplicateUidIsAlreadyExists) {
  ASSERT_TRUE(this->store_->CreateJob(FullJob("201")).ok());
  EXPECT_EQ(this->store_->CreateJob(FullJob("201")).code(), StatusCode::kAlreadyExists);
  // Across dialects too: the uid is unique over both.
  EXPECT_EQ(this->store_->CreateJob(FullJob("201", model::Dialect::kMlV1, "proj", "j")).code(),
            StatusCode::kAlreadyExists);
  // The original is untouched.
  Result<model::Job> got = this->store_->GetJob("201");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->dialect, model::Dialect::kVertex);
}

TYPED_TEST_P(JobStoreContractTest, MlJobIdIsUniquePerProject) {
  ASSERT_TRUE(this->store_->CreateJob(FullJob("301", model::Dialect::kMlV1, "a", "train")).ok());
  EXPECT_EQ(this->store_->CreateJob(FullJob("302", model::Dialect::kMlV1, "a", "train")).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(this->store_->GetJob("302").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(this->store_->CreateJob(FullJob("303", model::Dialect::kMlV1, "b", "train")).ok());
  // Vertex jobs never collide on job_id, with each other or with ml v1 jobs.
  EXPECT_TRUE(this->store_->CreateJob(FullJob("304", model::Dialect::kVertex, "a", "train")).ok());
  EXPECT_TRUE(this->store_->CreateJob(FullJob("305", model::Dialect::kVertex, "a", "train")).ok());
  EXPECT_TRUE(this->store_->CreateJob(FullJob("306", model::Dialect::kVertex, "a", "")).ok());
  EXPECT_TRUE(this->store_->CreateJob(FullJob("307", model::Dialect::kVertex, "a", "")).ok());
}

TYPED_TEST_P(JobStoreContractTest, FindMlJob) {
  model::Job a = FullJob("401", model::Dialect::kMlV1, "a", "train");
  model::Job b = FullJob("402", model::Dialect::kMlV1, "b", "train");
  ASSERT_TRUE(this->store_->CreateJob(a).ok());
  ASSERT_TRUE(this->store_->CreateJob(b).ok());
  ASSERT_TRUE(this->store_->CreateJob(FullJob("403", model::Dialect::kVertex, "c", "vx")).ok());

  Result<model::Job> got = this->store_->FindMlJob("b", "train");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectStoredJob(b, *got);
  got = this->store_->FindMlJob("a", "train");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->uid, "401");
  EXPECT_EQ(this->store_->FindMlJob("a", "other").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(this->store_->FindMlJob("c", "train").status().code(), StatusCode::kNotFound);
  // A Vertex job is not an ml v1 job, whatever its spec says.
  EXPECT_EQ(this->store_->FindMlJob("c", "vx").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(this->store_->FindMlJob("c", "403").status().code(), StatusCode::kNotFound);
}

TYPED_TEST_P(JobStoreContractTest, UpdateJobReplacesStateReplicasAndError) {
  model::Job job = FullJob("501");
  job.error.reset();
  job.replicas.resize(1);
  ASSERT_TRUE(this->store_->CreateJob(job).ok());

  model::Job failed = FullJob("501");  // Three replicas, an error.
  failed.state = model::JobState::kFailed;
  failed.end_time = 9000;
  failed.update_time = 9001;
  failed.phases.finished = 9000;
  failed.attempt = 3;
  failed.cancel_requested = false;
  ASSERT_TRUE(this->store_->UpdateJob(failed).ok());
  Result<model::Job> got = this->store_->GetJob("501");
  ASSERT_TRUE(got.ok());
  ExpectStoredJob(failed, *got);

  // Clearing the error and the replicas is stored too.
  model::Job retried = *got;  // As read back: spec not rebuilt.
  retried.state = model::JobState::kQueued;
  retried.error.reset();
  retried.replicas.clear();
  ASSERT_TRUE(this->store_->UpdateJob(retried).ok());
  got = this->store_->GetJob("501");
  ASSERT_TRUE(got.ok());
  ExpectStoredJob(retried, *got);
  EXPECT_FALSE(got->error.has_value());
  EXPECT_TRUE(got->replicas.empty());
}

TYPED_TEST_P(JobStoreContractTest, UpdateKeepsIdentity) {
  ASSERT_TRUE(this->store_->CreateJob(FullJob("601", model::Dialect::kMlV1, "a", "train")).ok());
  // A job read back (spec default-constructed) can be written back without losing
  // its ml v1 id.
  Result<model::Job> got = this->store_->GetJob("601");
  ASSERT_TRUE(got.ok());
  got->state = model::JobState::kSucceeded;
  ASSERT_TRUE(this->store_->UpdateJob(*got).ok());
  Result<model::Job> found = this->store_->FindMlJob("a", "train");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->state, model::JobState::kSucceeded);

  model::Job moved = FullJob("601", model::Dialect::kMlV1, "b", "train");
  EXPECT_EQ(this->store_->UpdateJob(moved).code(), StatusCode::kInvalidArgument);
  model::Job renamed = FullJob("601", model::Dialect::kMlV1, "a", "other");
  EXPECT_EQ(this->store_->UpdateJob(renamed).code(), StatusCode::kInvalidArgument);
  model::Job redialected = FullJob("601", model::Dialect::kVertex, "a");
  EXPECT_EQ(this->store_->UpdateJob(redialected).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(this->store_->FindMlJob("a", "train").ok());
}

TYPED_TEST_P(JobStoreContractTest, MissingJobIsNotFound) {
  EXPECT_EQ(this->store_->UpdateJob(FullJob("701")).code(), StatusCode::kNotFound);
  EXPECT_EQ(this->store_->GetJob("701").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(this->store_->DeleteJob("701", 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(this->store_->ListEvents("701").status().code(), StatusCode::kNotFound);
  // UpdateJob must not have created it.
  Result<std::vector<model::Job>> all = this->store_->ListJobs();
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
}

TYPED_TEST_P(JobStoreContractTest, ListJobsOldestFirst) {
  struct Row {
    const char* uid;
    TimeMicros create_time;
  };
  // Ties on create_time are broken by uid (as text).
  for (Row r : {Row{"9", 300}, Row{"5", 100}, Row{"7", 200}, Row{"6", 200}, Row{"10", 200}}) {
    model::Job job = FullJob(r.uid);
    job.create_time = r.create_time;
    ASSERT_TRUE(this->store_->CreateJob(job).ok());
  }
  Result<std::vector<model::Job>> all = this->store_->ListJobs();
  ASSERT_TRUE(all.ok());
  std::vector<std::string> uids;
  for (const model::Job& j : *all) uids.push_back(j.uid);
  EXPECT_EQ(uids, (std::vector<std::string>{"5", "10", "6", "7", "9"}));
  // Listed jobs are complete, replicas included.
  model::Job want = FullJob("7");
  want.create_time = 200;
  ExpectStoredJob(want, (*all)[3]);
}

// A deleted job leaves its deletion (its delete operation's answer after a restart),
// and its uid stays the last one handed out; deletions older than 30 days go, except
// the newest.
TYPED_TEST_P(JobStoreContractTest, ADeletionIsKeptAndItsUidNeverHandedOutAgain) {
  constexpr TimeMicros kDay = 24LL * 3600 * 1000000;
  ASSERT_TRUE(this->store_->CreateJob(FullJob("901", model::Dialect::kVertex, "a")).ok());
  ASSERT_TRUE(this->store_->CreateJob(FullJob("902", model::Dialect::kVertex, "b")).ok());
  ASSERT_TRUE(this->store_->DeleteJob("902", 5 * kDay).ok());
  Result<JobStore::Deletion> d = this->store_->GetDeletion("902");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->project, "b");
  EXPECT_EQ(d->location, FullJob("902").location);
  EXPECT_EQ(d->time, 5 * kDay);
  EXPECT_EQ(this->store_->LastUid().value(), "902");
  EXPECT_EQ(this->store_->GetDeletion("901").status().code(), StatusCode::kNotFound);

  // 40 days on, 902's deletion is past the 30 days, but its uid is the newest
  // deleted one, so it stays.
  ASSERT_TRUE(this->store_->DeleteJob("901", 45 * kDay).ok());
  EXPECT_TRUE(this->store_->GetDeletion("902").ok());
  EXPECT_TRUE(this->store_->GetDeletion("901").ok());
  ASSERT_TRUE(this->store_->CreateJob(FullJob("903")).ok());
  ASSERT_TRUE(this->store_->DeleteJob("903", 90 * kDay).ok());
  EXPECT_EQ(this->store_->GetDeletion("902").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(this->store_->GetDeletion("901").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(this->store_->GetDeletion("903").ok());
  EXPECT_EQ(this->store_->LastUid().value(), "903");
}

TYPED_TEST_P(JobStoreContractTest, DeleteJobRemovesReplicasAndEvents) {
  ASSERT_TRUE(this->store_->CreateJob(FullJob("801", model::Dialect::kMlV1, "a", "train")).ok());
  ASSERT_TRUE(this->store_->AppendEvent("801", {1, "state", "Job is queued."}).ok());
  ASSERT_TRUE(this->store_->CreateJob(FullJob("802")).ok());
  ASSERT_TRUE(this->store_->AppendEvent("802", {1, "state", "other job"}).ok());

  ASSERT_TRUE(this->store_->DeleteJob("801", 1).ok());
  EXPECT_EQ(this->store_->GetJob("801").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(this->store_->FindMlJob("a", "train").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(this->store_->DeleteJob("801", 1).code(), StatusCode::kNotFound);

  // The uid and the ml v1 id are free again, with nothing left over.
  model::Job again = FullJob("801", model::Dialect::kMlV1, "a", "train");
  again.replicas.clear();
  ASSERT_TRUE(this->store_->CreateJob(again).ok());
  Result<model::Job> got = this->store_->GetJob("801");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->replicas.empty());
  Result<std::vector<model::JobEvent>> events = this->store_->ListEvents("801");
  ASSERT_TRUE(events.ok());
  EXPECT_TRUE(events->empty());
  // Other jobs are untouched.
  events = this->store_->ListEvents("802");
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->size(), 1u);
  got = this->store_->GetJob("802");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->replicas.size(), 3u);
}

TYPED_TEST_P(JobStoreContractTest, EventsKeepAppendOrder) {
  ASSERT_TRUE(this->store_->CreateJob(FullJob("901")).ok());
  ASSERT_TRUE(this->store_->CreateJob(FullJob("902")).ok());
  // Appended out of time order on purpose: order is append order, not time order.
  std::vector<model::JobEvent> want = {
      {300, "state", "Job is queued."},
      {100, "attempt", "Attempt 1 started."},
      {100, "replica", "workerpool1-0 exited with 3"},
      {500, "error", "multi\nline \xc3\x28"},
  };
  for (const model::JobEvent& e : want) {
    ASSERT_TRUE(this->store_->AppendEvent("901", e).ok());
    ASSERT_TRUE(this->store_->AppendEvent("902", {e.time + 1, e.kind, "902"}).ok());
  }
  Result<std::vector<model::JobEvent>> got = this->store_->ListEvents("901");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*got)[i].time, want[i].time);
    EXPECT_EQ((*got)[i].kind, want[i].kind);
    EXPECT_EQ((*got)[i].message, want[i].message);
  }
  // UpdateJob does not touch the history.
  ASSERT_TRUE(this->store_->UpdateJob(FullJob("901")).ok());
  got = this->store_->ListEvents("901");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), want.size());
}

// A record and its decision's events are one commit: both land, or (the record
// refused) neither does.
TYPED_TEST_P(JobStoreContractTest, ACommitWritesTheRecordAndItsEventsOrNeither) {
  const std::vector<model::JobEvent> events = {{1, "state", "Job is queued."},
                                               {2, "attempt", "Attempt 1 started."}};
  ASSERT_TRUE(this->store_->CommitJob(FullJob("951"), /*create=*/true, events).ok());
  model::Job running = FullJob("951");
  running.state = model::JobState::kRunning;
  ASSERT_TRUE(this->store_->CommitJob(running, /*create=*/false, {{3, "state", "running"}}).ok());
  Result<std::vector<model::JobEvent>> got = this->store_->ListEvents("951");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[2].message, "running");
  EXPECT_EQ(this->store_->GetJob("951")->state, model::JobState::kRunning);

  // Refused (the uid is taken; the identity changed): no event of it is kept.
  EXPECT_EQ(this->store_->CommitJob(FullJob("951"), true, {{4, "state", "again"}}).code(),
            StatusCode::kAlreadyExists);
  model::Job moved = running;
  moved.project = "elsewhere";
  EXPECT_EQ(this->store_->CommitJob(moved, false, {{5, "state", "moved"}}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(this->store_->CommitJob(FullJob("952"), false, {{6, "state", "x"}}).code(),
            StatusCode::kNotFound);
  got = this->store_->ListEvents("951");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), 3u);
}

TYPED_TEST_P(JobStoreContractTest, AppendEventToMissingJobIsNotFound) {
  EXPECT_EQ(this->store_->AppendEvent("999", {1, "state", "x"}).code(), StatusCode::kNotFound);
}

// The pending outcome of a stop is what a restarted daemon finishes: every kind, with
// and without an error, and its clearing, must read back exactly.
TYPED_TEST_P(JobStoreContractTest, PendingEndingRoundTripsAndClears) {
  model::Job job = FullJob("601");
  job.ending.reset();
  ASSERT_TRUE(this->store_->CreateJob(job).ok());
  for (model::EndingKind kind : {model::EndingKind::kSucceed, model::EndingKind::kFail,
                                 model::EndingKind::kRetry, model::EndingKind::kCancel}) {
    job.ending = model::Ending{kind, std::nullopt};
    if (kind != model::EndingKind::kSucceed) job.ending->error = model::JobError{1, "why"};
    ASSERT_TRUE(this->store_->UpdateJob(job).ok());
    Result<model::Job> got = this->store_->GetJob("601");
    ASSERT_TRUE(got.ok());
    ASSERT_TRUE(got->ending.has_value());
    EXPECT_EQ(got->ending->kind, kind);
    EXPECT_TRUE(*got->ending == *job.ending);
  }
  job.ending.reset();
  ASSERT_TRUE(this->store_->UpdateJob(job).ok());
  EXPECT_FALSE(this->store_->GetJob("601")->ending.has_value());
}

// List pages come newest first by uid as a number, within one scope, below a token.
TYPED_TEST_P(JobStoreContractTest, ListJobsPageNewestFirstWithinScope) {
  for (const char* uid : {"8", "9", "10", "11", "12"}) {
    ASSERT_TRUE(this->store_->CreateJob(FullJob(uid)).ok());
  }
  model::Job other_location = FullJob("13");
  other_location.location = "europe-west4";
  ASSERT_TRUE(this->store_->CreateJob(other_location).ok());
  ASSERT_TRUE(this->store_->CreateJob(FullJob("14", model::Dialect::kMlV1, "proj", "ml_job")).ok());
  ASSERT_TRUE(this->store_->CreateJob(FullJob("15", model::Dialect::kVertex, "other")).ok());
  auto uids = [&](const JobStore::PageQuery& q) {
    std::vector<std::string> out;
    Result<std::vector<model::Job>> page = this->store_->ListJobsPage(q);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& j : *page) {
      out.push_back(j.uid);
      EXPECT_TRUE(j.replicas.empty());
      EXPECT_EQ(j.spec.labels.at("team"), "vision");  // List fields come along.
    }
    return out;
  };
  JobStore::PageQuery q;
  q.project = "proj";
  q.location = "us-central1";
  q.limit = 3;
  EXPECT_EQ(uids(q), (std::vector<std::string>{"12", "11", "10"}));
  q.before_uid = "10";
  EXPECT_EQ(uids(q), (std::vector<std::string>{"9", "8"}));
  q.before_uid = "";
  q.any_location = true;
  q.limit = 100;
  EXPECT_EQ(uids(q), (std::vector<std::string>{"13", "12", "11", "10", "9", "8"}));
  q = {};
  q.dialect = model::Dialect::kMlV1;
  q.project = "proj";
  EXPECT_EQ(uids(q), (std::vector<std::string>{"14"}));
}

// Start-up reads only unfinished jobs, with their replicas; new ids go after the last.
TYPED_TEST_P(JobStoreContractTest, LiveJobsAndLastUid) {
  EXPECT_EQ(*this->store_->LastUid(), "");
  for (auto [uid, state] :
       {std::pair{"20", model::JobState::kSucceeded}, std::pair{"3", model::JobState::kRunning},
        std::pair{"100", model::JobState::kFailed}, std::pair{"21", model::JobState::kCancelling},
        std::pair{"22", model::JobState::kCancelled}, std::pair{"23", model::JobState::kQueued}}) {
    model::Job job = FullJob(uid);
    job.state = state;
    ASSERT_TRUE(this->store_->CreateJob(job).ok());
  }
  Result<std::vector<model::Job>> live = this->store_->ListLiveJobs();
  ASSERT_TRUE(live.ok());
  std::vector<std::string> uids;
  for (const auto& j : *live) uids.push_back(j.uid);
  std::sort(uids.begin(), uids.end());
  EXPECT_EQ(uids, (std::vector<std::string>{"21", "23", "3"}));
  EXPECT_EQ((*live)[0].replicas.size(), FullJob("3").replicas.size());
  EXPECT_EQ(*this->store_->LastUid(), "100");
}

// What ended at or after a time, oldest end first: finished jobs only (a live job's
// end_time is 0 or, while it stops, not yet an end).
TYPED_TEST_P(JobStoreContractTest, EndedSinceListsFinishedJobsByEndTime) {
  struct Row {
    const char* uid;
    model::JobState state;
    TimeMicros end;
  };
  for (const Row& r :
       {Row{"1", model::JobState::kSucceeded, 500}, Row{"2", model::JobState::kFailed, 300},
        Row{"3", model::JobState::kCancelled, 100}, Row{"4", model::JobState::kRunning, 0},
        Row{"5", model::JobState::kCancelling, 900}, Row{"6", model::JobState::kSucceeded, 299}}) {
    model::Job job = FullJob(r.uid);
    job.state = r.state;
    job.end_time = r.end;
    ASSERT_TRUE(this->store_->CreateJob(job).ok());
  }
  Result<std::vector<model::Job>> ended = this->store_->ListEndedSince(300);
  ASSERT_TRUE(ended.ok()) << ended.status().ToString();
  std::vector<std::string> uids;
  for (const auto& j : *ended) uids.push_back(j.uid);
  EXPECT_EQ(uids, (std::vector<std::string>{"2", "1"}));
  EXPECT_EQ((*ended)[0].project, "proj");  // The record, as a read gives it.
  EXPECT_EQ((*ended)[0].end_time, 300);
  EXPECT_TRUE(this->store_->ListEndedSince(501)->empty());
  EXPECT_EQ(this->store_->ListEndedSince(0)->size(), 4u);
}

// A finished job whose last lines may not be in its log yet is read at start-up with
// the live ones (model/outbox.h), until it is committed without them.
TYPED_TEST_P(JobStoreContractTest, AFinishedJobWithLinesIsReadAtStartUpUntilTheyAreWritten) {
  model::Job done = FullJob("7");
  done.state = model::JobState::kSucceeded;
  done.outbox.Add("Job completed successfully.");
  ASSERT_TRUE(this->store_->CreateJob(done).ok());
  model::Job quiet = FullJob("8");
  quiet.state = model::JobState::kFailed;
  ASSERT_TRUE(this->store_->CreateJob(quiet).ok());
  Result<std::vector<model::Job>> live = this->store_->ListLiveJobs();
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].uid, "7");
  EXPECT_EQ((*live)[0].outbox.lines.at(0).message, "Job completed successfully.");
  done.outbox.lines.clear();
  ASSERT_TRUE(this->store_->UpdateJob(done).ok());
  EXPECT_TRUE(this->store_->ListLiveJobs()->empty());
}

TYPED_TEST_P(JobStoreContractTest, CountsJobsByState) {
  EXPECT_TRUE(this->store_->CountJobsByState()->empty());
  for (int i = 0; i < 5; ++i) {
    model::Job job = FullJob(std::to_string(500 + i));
    job.spec.job_id = "count" + std::to_string(i);
    job.state = i < 3 ? model::JobState::kSucceeded : model::JobState::kQueued;
    ASSERT_TRUE(this->store_->CreateJob(job).ok());
  }
  auto counts = this->store_->CountJobsByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::map<model::JobState, int64_t>{{model::JobState::kQueued, 2},
                                                         {model::JobState::kSucceeded, 3}}));
}

// A study keeps its trials in its record; its trial jobs are stored (and live) but
// not listed.
TYPED_TEST_P(JobStoreContractTest, StudyTrialsRoundTripAndTrialJobsAreNotListed) {
  model::Job study = FullJob("40");
  model::Trial t;
  t.id = 1;
  model::ParamValue lr, opt;
  lr.number = 0.01;
  opt.category = "adam";
  t.params["lr"] = lr;
  t.params["opt"] = opt;
  t.state = model::TrialState::kSucceeded;
  t.job_uid = "41";
  t.measurements = {{10, 0.5, 1.5}, {20, 0.75, 3.0}};
  t.final_measurement = t.measurements.back();
  t.stopped_early = true;
  t.start_time = 5;
  t.end_time = 9;
  study.trials = {t};
  study.kind = model::JobKind::kStudy;
  ASSERT_TRUE(this->store_->CreateJob(study).ok());
  model::Job trial_job = FullJob("41");
  trial_job.kind = model::JobKind::kTrial;
  trial_job.study_uid = "40";
  trial_job.trial_id = 1;
  ASSERT_TRUE(this->store_->CreateJob(trial_job).ok());
  Result<model::Job> got = this->store_->GetJob("40");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectStoredJob(study, *got);
  got = this->store_->GetJob("41");
  ASSERT_TRUE(got.ok());
  ExpectStoredJob(trial_job, *got);
  // Updates carry the trials too.
  study.trials.push_back(t);
  study.trials.back().id = 2;
  study.trials.back().state = model::TrialState::kActive;
  study.trials.back().final_measurement.reset();
  study.trials.back().skipped_lines_logged = 3;
  study.study_progress.failing = "2 of 2 trials failed";
  study.study_progress.exhausted = true;
  // The commit's service lines travel with the record (model/outbox.h).
  study.outbox.Add("Trial 2 started (job 42): lr = 0.1.");
  study.outbox.Add("Quotes \" and newlines\n stay as they were.", "WARNING");
  ASSERT_TRUE(this->store_->UpdateJob(study).ok());
  got = this->store_->GetJob("40");
  ASSERT_TRUE(got.ok());
  ExpectStoredJob(study, *got);
  JobStore::PageQuery q;
  q.project = "proj";
  q.location = "us-central1";
  std::vector<std::string> listed;
  Result<std::vector<model::Job>> page = this->store_->ListJobsPage(q);
  ASSERT_TRUE(page.ok());
  for (const auto& j : *page) listed.push_back(j.uid);
  EXPECT_EQ(listed, std::vector<std::string>{"40"});
  EXPECT_EQ(this->store_->ListLiveJobs()->size(), 2u);
}

REGISTER_TYPED_TEST_SUITE_P(
    JobStoreContractTest, StudyTrialsRoundTripAndTrialJobsAreNotListed, CountsJobsByState,
    CreateGetRoundTripsEveryField, ListJobsPageNewestFirstWithinScope, LiveJobsAndLastUid,
    EndedSinceListsFinishedJobsByEndTime, AFinishedJobWithLinesIsReadAtStartUpUntilTheyAreWritten,
    PendingEndingRoundTripsAndClears, RoundTripsDefaultsAndEmptyOptionals,
    DuplicateUidIsAlreadyExists, MlJobIdIsUniquePerProject, FindMlJob,
    UpdateJobReplacesStateReplicasAndError, UpdateKeepsIdentity, MissingJobIsNotFound,
    ListJobsOldestFirst, DeleteJobRemovesReplicasAndEvents,
    ADeletionIsKeptAndItsUidNeverHandedOutAgain, EventsKeepAppendOrder,
    AppendEventToMissingJobIsNotFound, ACommitWritesTheRecordAndItsEventsOrNeither);

}  // namespace ty::jobstore::testing
