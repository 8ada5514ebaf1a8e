// Controllers talk by messages on the loop core (service/messages.h). A controller of
// the test's own is registered beside the service's (job, admission, study) through
// the core alone, and shows (1) the order of one commit's effects: the record is
// stored and published and the machine's actions have run before any watcher hears
// of it, in a task after the committing one; (2) that a new controller needs no change
// to the others: watching commits and sending the job controller an input is enough
// to cancel a job.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "service/loop_core.h"
#include "service/messages.h"
#include "service_fixture.h"

namespace ty::testing {
namespace {

using model::JobState;

class ControllerMessagesTest : public ServiceFixture {
 protected:
  void SetUp() override {}  // Each test registers its controller, then starts.
  void Start() { ServiceFixture::SetUp(); }

  bool ServiceLogHas(const std::string& uid, const std::string& text) {
    bool found = false;
    logs_
        ->Scan(uid,
               [&](const logs::LogEntry& e) {
                 found |= e.message.find(text) != std::string::npos;
                 return true;
               })
        .IgnoreError();
    return found;
  }
};

struct Seen {
  std::string uid;
  JobState before = JobState::kUnspecified;
  JobState state = JobState::kUnspecified;
  bool stored = false;       // The store had this record (or a later one) already.
  bool published = false;    // API readers saw it already.
  bool queued_line = false;  // The submit's log action had run already.
};

TEST_F(ControllerMessagesTest, ACommitReachesWatchersAfterItsRecordItsReadersAndItsActions) {
  std::vector<Seen> seen;
  register_controllers_ = [&](service::LoopCore* core) {
    core->Receive<service::JobCommitted>([&](const service::JobCommitted& m) {
      Seen s;
      s.uid = m.job->uid;
      s.before = m.before;
      s.state = m.job->state;
      Result<model::Job> stored = store_->GetJob(m.job->uid);
      s.stored = stored.ok() && stored->update_time >= m.job->update_time;
      Result<model::Job> read = service_->Get(Ref(*m.job));
      s.published = read.ok() && read->update_time >= m.job->update_time;
      s.queued_line = ServiceLogHas(m.job->uid, "is queued.");
      seen.push_back(s);
    });
  };
  Start();
  model::Job job = SubmitVertex(VertexBody());
  // The submit's task has ended and committed; its message waits for the loop.
  EXPECT_TRUE(seen.empty());
  RunLoop();
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen[0].uid, job.uid);
  EXPECT_EQ(seen[0].before, JobState::kUnspecified);  // The commit that created it.
  EXPECT_EQ(seen[0].state, JobState::kQueued);
  // In commit order, each naming the state it left.
  EXPECT_EQ(seen[1].before, JobState::kQueued);
  EXPECT_EQ(seen[1].state, JobState::kPreparing);
  EXPECT_EQ(seen[2].before, JobState::kPreparing);
  EXPECT_EQ(seen[2].state, JobState::kRunning);
  for (const Seen& s : seen) {
    EXPECT_TRUE(s.stored) << model::JobStateName(s.state);
    EXPECT_TRUE(s.published) << model::JobStateName(s.state);
    EXPECT_TRUE(s.queued_line) << model::JobStateName(s.state);
  }
}

// A "reaper": cancels any job labelled reap=yes once it runs. It knows no other
// controller, and no other controller knows it.
TEST_F(ControllerMessagesTest, ANewControllerRegistersWithoutTouchingTheOthers) {
  service::LoopCore* loop = nullptr;
  register_controllers_ = [&](service::LoopCore* core) {
    loop = core;
    core->Receive<service::JobCommitted>([&loop](const service::JobCommitted& m) {
      const model::Job& job = *m.job;
      auto label = job.spec.labels.find("reap");
      if (job.state != JobState::kRunning || m.before == JobState::kRunning) return;
      if (label == job.spec.labels.end() || label->second != "yes") return;
      machines::JobInput cancel;
      cancel.kind = machines::JobInputKind::kCancel;
      cancel.message = "Reaped by the test's controller.";
      loop->Send(service::JobInputMessage{job.uid, std::move(cancel)});
    });
  };
  // Room for one n1-standard-4 at a time: the second job waits for the first's share.
  admission_.capacity.nodes = {scheduler::Node{"box", 4, 15, {}}};
  Start();
  nlohmann::json reaped_body = VertexBody();
  reaped_body["labels"] = {{"reap", "yes"}};
  model::Job reaped = SubmitVertex(reaped_body);
  model::Job kept = SubmitVertex(VertexBody());
  RunLoop();
  EXPECT_EQ(Current(reaped).state, JobState::kCancelled);
  EXPECT_TRUE(ServiceLogHas(reaped.uid, "Reaped by the test's controller."));
  // Admission heard of the reaped job's end through the same messages and admitted
  // the one that waited for its share.
  EXPECT_EQ(Current(kept).state, JobState::kRunning);
}

}  // namespace
}  // namespace ty::testing
