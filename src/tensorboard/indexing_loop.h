// Runs the indexer (indexer.h) for every job that names a tensorboard: a pass per
// target every `every`, and one more pass for a target once its job has ended (what
// the trainer wrote last is read after it exits): Ended() says so, for jobs that end
// between two rounds or before the first; a target gone from `targets()` gets its last
// pass too. A target whose tensorboard was deleted is left alone until it goes.
//
// The start of each finished round is kept in the store (at most every 30 s): a job
// that ended after it while no daemon ran missed its last pass, and Start's
// `ended_while_away` (called once, on the thread, before the first round) names such
// jobs for a last pass now.
//
// Owns one thread. `targets` is called on it and must be thread-safe; Ended() may be
// called from any thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/time.h"
#include "tensorboard/indexer.h"
#include "tensorboard/store.h"

namespace ty::tensorboard {

class IndexingLoop {
 public:
  using Targets = std::function<std::vector<IndexTarget>()>;
  // `store` and `clock` (not owned) must outlive the loop.
  explicit IndexingLoop(Store* store, IndexBudget budget = {},
                        const Clock* clock = SystemClock::Get());
  ~IndexingLoop();
  IndexingLoop(const IndexingLoop&) = delete;
  IndexingLoop& operator=(const IndexingLoop&) = delete;

  // Starts the thread: a round every `every`. Once; without it, tests call Tick and
  // Round.
  void Start(Targets targets, DurationMicros every, Targets ended_while_away = nullptr);
  void Stop();  // Joins the thread; idempotent.
  // `target`'s job has ended: its last pass comes in the next round.
  void Ended(IndexTarget target);
  // One round: a pass per current target, a last pass per target gone since the last
  // round. What the round stored, all targets together.
  IndexStats Tick();
  // Tick, then the round's start kept as IndexedThrough when the last kept is 30 s old.
  IndexStats Round();
  // Tests: the targets Tick asks for (what Start sets).
  void SetTargetsForTest(Targets targets) { targets_ = std::move(targets); }

 private:
  void Run(DurationMicros every);
  void PassOver(const IndexTarget& target, IndexStats* total);

  Store* const store_;
  const IndexBudget budget_;
  const Clock* const clock_;
  TimeMicros marked_ = 0;                     // The last IndexedThrough kept; the thread's only.
  Targets targets_;                           // Set before the thread starts.
  std::map<std::string, IndexTarget> known_;  // By key(); Tick's thread only.
  std::set<std::string> gone_boards_;         // Targets whose tensorboard is deleted.
  std::set<std::string> warned_;              // Targets whose failure was logged once.
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;           // Guarded by mu_.
  std::vector<IndexTarget> ended_;  // Guarded by mu_.
  std::thread thread_;
};

}  // namespace ty::tensorboard
