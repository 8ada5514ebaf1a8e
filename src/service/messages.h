// The messages controllers send each other through the loop core (LoopCore::Send,
// LoopCore::Receive). Who sends and who receives each one:
//
//   JobCommitted      job controller -> admission (release), study (trial ends, starts)
//   JobLoaded         job controller -> admission (a running job holds its grants)
//   AdmissionWanted   job controller -> admission (queue the job)
//   JobInputMessage   admission (admitted, preempt, unrunnable), study (cancel a
//                     trial) -> job controller
//   SubmitTrialJob    study -> job controller (create a trial's job)
//   TrialJobRefused   job controller -> study (it could not be created)
//
// Effects of one job commit, in this order (tests/service/controller_messages_test.cc):
// the record and its history are written; API readers see it (published); then the
// machine's actions run (log lines, timers, executor calls); JobCommitted reaches
// the receivers after that, in a task of its own.
#pragma once

#include <memory>
#include <string>

#include "machines/job_machine.h"
#include "model/job.h"

namespace ty::service {

struct JobCommitted {
  // Shared by every receiver: one copy per commit.
  std::shared_ptr<const model::Job> job;
  // The state before this commit; kUnspecified when the commit created the job.
  model::JobState before = model::JobState::kUnspecified;
};

struct JobLoaded {
  std::shared_ptr<const model::Job> job;  // A stored job that is not finished.
};

struct AdmissionWanted {
  std::shared_ptr<const model::Job> job;
};

struct JobInputMessage {
  std::string uid;
  machines::JobInput input;
};

struct SubmitTrialJob {
  model::Job job;  // Its uid is the one the study recorded for the trial.
};

struct TrialJobRefused {
  std::string study_uid;
  int64_t trial_id = 0;
  std::string message;
};

}  // namespace ty::service
