#include "tensorboard/indexing_loop.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace ty::tensorboard {

namespace {
constexpr DurationMicros kMarkEvery = 30 * 1000000LL;
}  // namespace

IndexingLoop::IndexingLoop(Store* store, IndexBudget budget, const Clock* clock)
    : store_(store), budget_(budget), clock_(clock) {}

void IndexingLoop::Start(Targets targets, DurationMicros every, Targets ended_while_away) {
  targets_ = std::move(targets);
  thread_ = std::thread([this, every, away = std::move(ended_while_away)] {
    if (away) {
      for (IndexTarget& t : away()) Ended(std::move(t));
    }
    Run(every);
  });
}

void IndexingLoop::Ended(IndexTarget target) {
  std::lock_guard<std::mutex> lock(mu_);
  ended_.push_back(std::move(target));
}

IndexingLoop::~IndexingLoop() { Stop(); }

void IndexingLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void IndexingLoop::Run(DurationMicros every) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::microseconds(every), [this] { return stopping_; })) {
    lock.unlock();
    Round();
    lock.lock();
  }
}

IndexStats IndexingLoop::Round() {
  const TimeMicros start = clock_->Now();
  IndexStats stats = Tick();
  if (start - marked_ >= kMarkEvery) {
    if (Status s = store_->SetIndexedThrough(start); s.ok()) {
      marked_ = start;
    } else {
      spdlog::warn("tensorboard: cannot keep the indexer's progress: {}", s.ToString());
    }
  }
  return stats;
}

IndexStats IndexingLoop::Tick() {
  std::vector<IndexTarget> ended;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ended.swap(ended_);
  }
  IndexStats total;
  for (const IndexTarget& t : ended) {
    known_.erase(t.key());
    PassOver(t, &total);  // The last.
    gone_boards_.erase(t.key());
    warned_.erase(t.key());
  }
  std::map<std::string, IndexTarget> now;
  for (IndexTarget& t : targets_ ? targets_() : std::vector<IndexTarget>{}) {
    std::string key = t.key();
    now.emplace(std::move(key), std::move(t));
  }
  for (const auto& [key, target] : now) PassOver(target, &total);
  for (const auto& [key, target] : known_) {
    if (now.count(key) == 0) {
      PassOver(target, &total);  // The last: its job has ended.
      gone_boards_.erase(key);
      warned_.erase(key);
    }
  }
  known_ = std::move(now);
  return total;
}

void IndexingLoop::PassOver(const IndexTarget& target, IndexStats* total) {
  const std::string key = target.key();
  if (gone_boards_.count(key) != 0) return;
  Result<IndexStats> stats = IndexOnce(store_, target, budget_);
  if (!stats.ok()) {
    if (stats.status().code() == StatusCode::kNotFound) {
      gone_boards_.insert(key);
      return;
    }
    if (warned_.insert(key).second) {
      spdlog::warn("tensorboard: indexing {} for {}: {}", target.log_dir, target.experiment.name(),
                   stats.status().ToString());
    }
    return;
  }
  total->files += stats->files;
  total->bytes += stats->bytes;
  total->records += stats->records;
  total->points += stats->points;
  total->bad_records += stats->bad_records;
  total->corrupt_files += stats->corrupt_files;
}

}  // namespace ty::tensorboard
