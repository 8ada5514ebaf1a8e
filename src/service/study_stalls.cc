#include "service/study_stalls.h"

#include <spdlog/spdlog.h>

namespace ty::service {

StudyStalls::StudyStalls(LoopCore* core, Commit commit, Landed landed)
    : core_(core), commit_(std::move(commit)), landed_(std::move(landed)) {}

void StudyStalls::Stall(const std::string& uid, const model::Job& record,
                        std::vector<machines::StudyAction> after, const Status& why) {
  if (core_->dead()) return;  // A stopping service: the next daemon decides again.
  if (MeaningOf(why) == CommitFailure::kDrop) {
    spdlog::error("study {}: store write failed: {}", uid, why.ToString());
    return;
  }
  stalled_[uid] = StalledStudyCommit{record, std::move(after), {}, 1};
  writes_.Failed("study", uid, why, core_->clock()->Now(), /*first=*/true);
  ScheduleRetry(uid, 1);
}

void StudyStalls::Keep(const std::string& uid, std::vector<machines::StudyInput>& inputs,
                       size_t from) {
  auto it = stalled_.find(uid);
  if (it == stalled_.end()) return;
  std::deque<machines::StudyInput>& kept = it->second.inputs;
  for (size_t i = from; i < inputs.size(); ++i) {
    if (inputs[i].kind == machines::StudyInputKind::kMetricsRead) continue;
    if (kept.size() >= HeldInputs::kMaxPerJob) {
      spdlog::error("study {}: more than {} inputs wait for the store; the oldest is lost", uid,
                    HeldInputs::kMaxPerJob);
      kept.pop_front();
    }
    kept.push_back(std::move(inputs[i]));
  }
}

void StudyStalls::ScheduleRetry(const std::string& uid, int tries) {
  core_->At(core_->clock()->Now() + RetryDelay(tries), [this, uid] { Retry(uid); });
}

void StudyStalls::Retry(const std::string& uid) {
  auto it = stalled_.find(uid);
  if (it == stalled_.end() || core_->dead()) return;
  Status s = commit_(uid, it->second.record);
  if (!s.ok() && MeaningOf(s) == CommitFailure::kRetry && !core_->dead()) {
    writes_.Failed("study", uid, s, core_->clock()->Now(), /*first=*/false);
    return ScheduleRetry(uid, ++it->second.tries);
  }
  StalledStudyCommit done = std::move(it->second);
  stalled_.erase(it);
  writes_.Landed("study", uid);
  if (!s.ok()) {
    spdlog::error("study {}: store write failed: {}", uid, s.ToString());
    return;
  }
  landed_(uid, std::move(done));
}

}  // namespace ty::service
