#include "scheduler/admission.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "scheduler/free_state.h"

namespace ty::scheduler {

namespace {

using internal::FreeState;

struct Usage {
  int64_t jobs = 0;
  double cpus = 0;
  int64_t gpus = 0;
};

struct GangTotals {
  double cpus = 0;
  double memory_gb = 0;
  std::map<std::string, int> gpus;
  int64_t all_gpus = 0;
};

GangTotals TotalsOf(const std::vector<ReplicaDemand>& gang) {
  GangTotals t;
  for (const ReplicaDemand& r : gang) {
    t.cpus += r.cpus;
    t.memory_gb += r.memory_gb;
    if (r.gpus > 0) {
      t.gpus[r.gpu_type] += r.gpus;
      t.all_gpus += r.gpus;
    }
  }
  return t;
}

double CpusOf(const JobDemand& job) {
  double cpus = 0;
  for (const ReplicaDemand& r : job.replicas) cpus += r.cpus;
  return cpus;
}

// "4", "2.5", "14.4": enough digits for vCPUs and GB without noise.
std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string Plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Why a gang does not fit in `free` (the first resource short, GPUs first).
std::string ShortageReason(const JobDemand& job, const FreeState& free) {
  GangTotals t = TotalsOf(job.replicas);
  for (const auto& [type, need] : t.gpus) {
    int have = free.free_gpus(type);
    if (have < need) {
      return "waiting for " + Plural(need, "GPU", "GPUs") + " of " + type + ": " +
             std::to_string(have) + " free";
    }
  }
  if (t.cpus > free.free_cpus() + internal::kEpsilon) {
    return "waiting for " + Num(t.cpus) + " vCPUs: " + Num(free.free_cpus()) + " free";
  }
  if (t.memory_gb > free.free_memory_gb() + internal::kEpsilon) {
    return "waiting for " + Num(t.memory_gb) + " GB of memory: " + Num(free.free_memory_gb()) +
           " GB free";
  }
  return "waiting for room on one node for each replica (" + Num(job.replicas.front().cpus) +
         " vCPUs, " + Num(job.replicas.front().memory_gb) + " GB each)";
}

// The quota rule a job would break, or "".
std::string QuotaReason(const JobDemand& job, const Capacity& capacity, const Usage& used) {
  auto q = capacity.quotas.find(job.project);
  if (q == capacity.quotas.end()) return "";
  GangTotals t = TotalsOf(job.replicas);
  const Quota& quota = q->second;
  std::string prefix = "project quota: ";
  if (quota.jobs >= 0 && used.jobs + 1 > quota.jobs) {
    return prefix + std::to_string(used.jobs) + " of " + std::to_string(quota.jobs) +
           " jobs running";
  }
  if (quota.cpus >= 0 && used.cpus + t.cpus > quota.cpus + internal::kEpsilon) {
    return prefix + Num(used.cpus) + " of " + Num(quota.cpus) + " vCPUs in use";
  }
  if (quota.gpus >= 0 && used.gpus + t.all_gpus > quota.gpus) {
    return prefix + std::to_string(used.gpus) + " of " + std::to_string(quota.gpus) +
           " GPUs in use";
  }
  return "";
}

void AddUsage(Usage* u, const JobDemand& job) {
  GangTotals t = TotalsOf(job.replicas);
  u->jobs += 1;
  u->cpus += t.cpus;
  u->gpus += t.all_gpus;
}

// Admission order: priority, then fair share between projects, then submit time.
std::vector<const JobDemand*> Order(const std::vector<const JobDemand*>& queued,
                                    const std::map<std::string, Usage>& usage) {
  // What the ordering reads of a job, copied in one pass over the queue (in memory
  // order): sorting and merging through the job pointers missed the cache on most
  // reads and was half of this function's time at 100,000 jobs.
  struct Entry {
    TimeMicros since;
    double cpus;
    const JobDemand* job;
  };
  // Projects by index, so the merge below compares numbers, not names.
  std::unordered_map<std::string, int> project_index;
  std::vector<double> running_cpus;
  std::map<int, std::vector<std::vector<Entry>>, std::greater<>> levels;
  for (const JobDemand* j : queued) {
    auto [it, added] = project_index.try_emplace(j->project, static_cast<int>(running_cpus.size()));
    if (added) {
      auto u = usage.find(j->project);
      running_cpus.push_back(u == usage.end() ? 0 : u->second.cpus);
    }
    auto& by_project = levels[j->priority];
    if (by_project.size() <= static_cast<size_t>(it->second)) by_project.resize(it->second + 1);
    by_project[it->second].push_back({j->queued_since, CpusOf(*j), j});
  }
  std::vector<const JobDemand*> out;
  out.reserve(queued.size());
  for (auto& [priority, projects] : levels) {
    // (vCPUs of the project counting jobs ordered ahead, head's submit time, project)
    using Key = std::tuple<double, TimeMicros, int>;
    std::priority_queue<Key, std::vector<Key>, std::greater<>> heap;
    std::vector<size_t> next(projects.size(), 0);
    std::vector<double> virtual_cpus = running_cpus;
    for (size_t p = 0; p < projects.size(); ++p) {
      auto& jobs = projects[p];
      if (jobs.empty()) continue;
      std::sort(jobs.begin(), jobs.end(), [](const Entry& a, const Entry& b) {
        if (a.since != b.since) return a.since < b.since;
        return a.job->uid < b.job->uid;
      });
      heap.push({virtual_cpus[p], jobs.front().since, static_cast<int>(p)});
    }
    while (!heap.empty()) {
      const int p = std::get<2>(heap.top());
      heap.pop();
      const auto& jobs = projects[p];
      const Entry& e = jobs[next[p]++];
      out.push_back(e.job);
      virtual_cpus[p] += e.cpus;
      if (next[p] < jobs.size()) heap.push({virtual_cpus[p], jobs[next[p]].since, p});
    }
  }
  return out;
}

// Running spot jobs to stop so that `job` fits: lowest priority first, bigger first
// within a priority (fewer victims), then any victim not needed is spared. Empty
// when even all of them would not make room.
std::vector<const Allocation*> ChooseVictims(const JobDemand& job, FreeState free,
                                             const std::vector<Allocation>& running) {
  std::vector<const Allocation*> candidates;
  for (const Allocation& a : running) {
    if (a.spot && !a.preempting) candidates.push_back(&a);
  }
  auto size = [](const Allocation* a) {
    double s = 0;
    for (const ReplicaPlacement& r : a->replicas) s += r.cpus + r.gpu_indices.size() * 1000.0;
    return s;
  };
  std::sort(candidates.begin(), candidates.end(), [&](const Allocation* a, const Allocation* b) {
    if (a->priority != b->priority) return a->priority < b->priority;
    if (size(a) != size(b)) return size(a) > size(b);
    return a->uid < b->uid;
  });
  std::vector<const Allocation*> chosen;
  for (const Allocation* c : candidates) {
    if (free.Place(job.replicas)) break;
    free.Give(c->replicas);
    chosen.push_back(c);
  }
  if (!free.Place(job.replicas)) return {};
  for (size_t i = chosen.size(); i-- > 0;) {
    FreeState without = free;
    without.Take(chosen[i]->replicas);
    if (without.Place(job.replicas)) {
      free = std::move(without);
      chosen.erase(chosen.begin() + static_cast<long>(i));
    }
  }
  return chosen;
}

// The head's reservation: the earliest time running jobs' timeouts guarantee room
// for it, and what will be free then beyond what it takes.
struct Reservation {
  bool possible = false;
  TimeMicros start = 0;
  FreeState extra;
};

Reservation Reserve(const JobDemand& head, const FreeState& free,
                    const std::vector<Allocation>& running, TimeMicros now) {
  std::vector<const Allocation*> by_end;
  for (const Allocation& a : running) by_end.push_back(&a);
  std::sort(by_end.begin(), by_end.end(), [](const Allocation* a, const Allocation* b) {
    return a->expected_end < b->expected_end;
  });
  Reservation r{false, now, free};
  for (size_t i = 0;; ++i) {
    if (auto p = r.extra.Place(head.replicas)) {
      r.possible = true;
      r.extra.Take(*p);
      return r;
    }
    if (i == by_end.size()) return r;
    r.extra.Give(by_end[i]->replicas);
    r.start = by_end[i]->preempting ? now : std::max(now, by_end[i]->expected_end);
  }
}

class Pass {
 public:
  Pass(const Capacity& capacity, const std::vector<Allocation>& running, TimeMicros now,
       size_t queued)
      : capacity_(capacity),
        running_(running),
        now_(now),
        free_(capacity),
        extra_(capacity),
        both_(capacity) {
    out_.waiting.reserve(queued);
    for (const Allocation& a : running) {
      free_.Take(a.replicas);
      Usage& u = usage_[a.project];
      u.jobs += 1;
      for (const ReplicaPlacement& r : a.replicas) {
        u.cpus += r.cpus;
        u.gpus += static_cast<int64_t>(r.gpu_indices.size());
      }
    }
  }

  const std::map<std::string, Usage>& usage() const { return usage_; }

  void Consider(const JobDemand& job) {
    // Without quotas no project lookup per job (string compares were ~7% of a pass).
    if (!capacity_.quotas.empty()) {
      if (std::string why = QuotaReason(job, capacity_, usage_[job.project]); !why.empty()) {
        return Wait(job, why);
      }
    }
    if (!head_) return ConsiderBeforeHead(job);
    ConsiderAsBackfill(job);
  }

  AdmissionDecisions Finish() {
    int position = 0;
    for (WaitList::Entry& e : out_.waiting) e.info.position = ++position;
    return std::move(out_);
  }

 private:
  void ConsiderBeforeHead(const JobDemand& job) {
    if (auto p = free_.Place(job.replicas)) return Admit(job, *p, /*reserved_too=*/false);
    std::string why = Shortage(job);
    if (!job.spot) why = MakeRoomBySpot(job, why);
    std::vector<Allocation> holding = running_;
    holding.insert(holding.end(), admitted_.begin(), admitted_.end());
    Reservation r = Reserve(job, free_, holding, now_);
    if (!r.possible) return Wait(job, why + " (it can never fit the capacity as configured)");
    head_ = &job;
    reservation_start_ = r.start;
    out_.reserved_uid = job.uid;
    out_.reserved_start = r.start;
    extra_ = std::move(r.extra);
    both_ = FreeState::Intersect(free_, extra_);
    Wait(job, why);
  }

  void ConsiderAsBackfill(const JobDemand& job) {
    auto p = free_.Place(job.replicas);
    if (!p) return Wait(job, Shortage(job));
    if (now_ + job.max_run <= reservation_start_) return Admit(job, *p, false);
    if (auto q = both_.Place(job.replicas)) return Admit(job, *q, true);
    Wait(job, BehindReason(job));
  }

  std::string MakeRoomBySpot(const JobDemand& job, const std::string& why) {
    FreeState after_pending = free_;
    int pending = 0;
    for (const Allocation& a : running_) {
      if (!a.preempting) continue;
      after_pending.Give(a.replicas);
      ++pending;
    }
    if (pending > 0 && after_pending.Place(job.replicas)) {
      return why + "; " + Plural(pending, "preempted spot job is", "preempted spot jobs are") +
             " stopping to make room";
    }
    std::vector<const Allocation*> victims = ChooseVictims(job, after_pending, running_);
    if (victims.empty()) return why;
    for (const Allocation* v : victims) out_.preempt.push_back(v->uid);
    return why + "; preempting " +
           Plural(static_cast<int64_t>(victims.size()), "spot job", "spot jobs") + " to make room";
  }

  std::string BehindReason(const JobDemand& job) const {
    int64_t higher = 0;
    for (auto it = waiting_by_priority_.upper_bound(job.priority); it != waiting_by_priority_.end();
         ++it) {
      higher += it->second;
    }
    if (higher > 0) return "behind " + Plural(higher, "job", "jobs") + " of higher priority";
    return "behind " +
           Plural(static_cast<int64_t>(out_.waiting.size()), "earlier job", "earlier jobs") +
           " (job " + head_->uid + " holds a reservation for the resources it needs)";
  }

  // ShortageReason, remembered per gang shape until the next admission changes what
  // is free (a long queue on a full cluster repeats a few shapes).
  const std::string& Shortage(const JobDemand& job) {
    // The replicas' sizes as raw bytes: cheap to build and compare. Built in a buffer
    // kept across calls, so that a shape seen before costs no allocation.
    std::string& key = shape_key_;
    key.clear();
    for (const ReplicaDemand& r : job.replicas) {
      key.append(reinterpret_cast<const char*>(&r.cpus), sizeof(r.cpus));
      key.append(reinterpret_cast<const char*>(&r.memory_gb), sizeof(r.memory_gb));
      key.append(reinterpret_cast<const char*>(&r.gpus), sizeof(r.gpus));
      key += r.gpu_type;
      key += '\0';
    }
    if (auto it = shortage_.find(key); it != shortage_.end()) return it->second;
    return shortage_.emplace(key, ShortageReason(job, free_)).first->second;
  }

  void Admit(const JobDemand& job, const std::vector<ReplicaPlacement>& p, bool reserved_too) {
    shortage_.clear();
    free_.Take(p);
    if (head_) both_.Take(p);
    if (reserved_too) extra_.Take(p);
    AddUsage(&usage_[job.project], job);
    out_.admit.push_back({job.uid, p});
    admitted_.push_back(
        {job.uid, job.project, job.priority, job.spot, now_ + job.max_run, false, p});
  }

  void Wait(const JobDemand& job, std::string why) {
    out_.waiting.Add(job.uid).reason = std::move(why);
    waiting_by_priority_[job.priority] += 1;
  }

  const Capacity& capacity_;
  const std::vector<Allocation>& running_;
  const TimeMicros now_;
  FreeState free_;
  std::vector<Allocation> admitted_;  // By this pass: they hold resources from now on.
  std::map<std::string, Usage> usage_;
  const JobDemand* head_ = nullptr;
  TimeMicros reservation_start_ = 0;
  FreeState extra_;  // Free at the reservation's start beyond the head's share.
  FreeState both_;   // Free now and then (conservative: only ever shrinks).
  std::unordered_map<std::string, std::string> shortage_;  // See Shortage().
  std::string shape_key_;                                  // Shortage's buffer.
  std::map<int, int64_t> waiting_by_priority_;             // Jobs waiting so far, by priority.
  AdmissionDecisions out_;
};

const Node* BiggestNode(const Capacity& capacity) {
  const Node* best = nullptr;
  for (const Node& n : capacity.nodes) {
    if (!best || n.cpus > best->cpus || (n.cpus == best->cpus && n.memory_gb > best->memory_gb)) {
      best = &n;
    }
  }
  return best;
}

std::string NodeSize(const Node& n) {
  std::string s = n.name + ": " + Num(n.cpus) + " vCPUs, " + Num(n.memory_gb) + " GB";
  std::map<std::string, int> gpus;
  for (const Gpu& g : n.gpus) gpus[g.type] += 1;
  for (const auto& [type, count] : gpus) s += ", " + std::to_string(count) + " x " + type;
  return s;
}

}  // namespace

namespace {

// Without `strict`, a gang bigger than `node` scaled down to fill it; nullopt when the
// job is used as it is.
std::optional<JobDemand> ShrunkToNode(const JobDemand& job, const Capacity& capacity,
                                      const Node* node) {
  if (capacity.strict || node == nullptr || job.replicas.empty()) return std::nullopt;
  GangTotals t = TotalsOf(job.replicas);
  double cpus = node->cpus * capacity.cpu_overcommit;
  double memory = node->memory_gb * capacity.memory_overcommit;
  double f = 1;
  if (t.cpus > cpus) f = std::min(f, cpus / t.cpus);
  if (t.memory_gb > memory) f = std::min(f, memory / t.memory_gb);
  if (f >= 1) return std::nullopt;
  JobDemand out = job;
  for (ReplicaDemand& r : out.replicas) {
    r.cpus *= f;
    r.memory_gb *= f;
  }
  return out;
}

}  // namespace

JobDemand EffectiveDemand(const JobDemand& job, const Capacity& capacity) {
  return ShrunkToNode(job, capacity, BiggestNode(capacity)).value_or(job);
}

Status CheckCanEverFit(const JobDemand& job, const Capacity& capacity) {
  const Node* biggest = BiggestNode(capacity);
  std::string biggest_text = biggest ? NodeSize(*biggest) : "no nodes";
  JobDemand eff = EffectiveDemand(job, capacity);
  FreeState empty(capacity);
  for (const ReplicaDemand& r : eff.replicas) {
    if (empty.Place({r})) continue;
    std::string need =
        r.gpus > 0 ? Plural(r.gpus, "GPU", "GPUs") + " of " + r.gpu_type + ", " : std::string();
    return InvalidArgument(r.field + ": a replica needs " + need + Num(r.cpus) + " vCPUs and " +
                           Num(r.memory_gb) + " GB, more than any node has (the biggest is " +
                           biggest_text + ")");
  }
  std::string field = job.replicas.empty() ? std::string("spec") : job.replicas.front().field;
  if (!empty.Place(eff.replicas)) {
    return InvalidArgument(field + ": the job's replicas together need more than the capacity (" +
                           Plural(static_cast<int64_t>(capacity.nodes.size()), "node", "nodes") +
                           "; the biggest is " + biggest_text + ")");
  }
  if (std::string why = QuotaReason(eff, capacity, Usage{}); !why.empty()) {
    return InvalidArgument(field + ": more than project " + job.project + "'s quota allows (" +
                           why + " with nothing else running)");
  }
  return Status::Ok();
}

const WaitInfo& WaitList::at(const std::string& uid) const {
  for (const Entry& e : entries_) {
    if (e.uid == uid) return e.info;
  }
  throw std::out_of_range("not waiting: " + uid);
}

size_t WaitList::count(const std::string& uid) const {
  return std::count_if(entries_.begin(), entries_.end(),
                       [&](const Entry& e) { return e.uid == uid; });
}

AdmissionDecisions Admit(const Capacity& capacity, const std::vector<Allocation>& running,
                         const std::vector<JobDemand>& queued, TimeMicros now) {
  // Jobs as admission sees them: most as they are, shrunk ones (not strict) copied.
  const Node* biggest = BiggestNode(capacity);
  std::vector<JobDemand> shrunk;
  shrunk.reserve(queued.size());  // No reallocation: `effective` points into it.
  std::vector<const JobDemand*> effective;
  effective.reserve(queued.size());
  for (const JobDemand& j : queued) {
    if (std::optional<JobDemand> s = ShrunkToNode(j, capacity, biggest)) {
      shrunk.push_back(std::move(*s));
      effective.push_back(&shrunk.back());
    } else {
      effective.push_back(&j);
    }
  }
  Pass pass(capacity, running, now, queued.size());
  const std::vector<const JobDemand*> ordered = Order(effective, pass.usage());
  // In admission order the jobs lie all over memory, and a pass over a long queue
  // waits mostly on cache misses (a job, then its replicas, then its uid): ask for
  // them a few jobs ahead, each step once the one it depends on has arrived.
  constexpr size_t kJobAhead = 8, kPartsAhead = 4;
  for (size_t i = 0; i < ordered.size(); ++i) {
    if (i + kJobAhead < ordered.size()) __builtin_prefetch(ordered[i + kJobAhead]);
    if (i + kPartsAhead < ordered.size()) {
      const JobDemand* ahead = ordered[i + kPartsAhead];
      __builtin_prefetch(ahead->replicas.data());
      __builtin_prefetch(ahead->uid.data());
    }
    pass.Consider(*ordered[i]);
  }
  return pass.Finish();
}

}  // namespace ty::scheduler
