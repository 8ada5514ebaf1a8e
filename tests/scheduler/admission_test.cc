// Admission as a pure function: gang, order, backfill, quotas, fair share, GPUs,
// never-fits and spot preemption. A small discrete-event simulation drives the
// property tests (every job is admitted in the end; the head's reservation never
// moves later; no GPU is ever held by two jobs).
#include "scheduler/admission.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace ty::scheduler {
namespace {

constexpr DurationMicros kHour = 3600LL * 1000000;

Capacity OneNode(double cpus, double memory_gb, int t4 = 0) {
  Capacity c;
  Node n{"host", cpus, memory_gb, {}};
  for (int i = 0; i < t4; ++i) n.gpus.push_back({"NVIDIA_TESLA_T4", i});
  c.nodes.push_back(n);
  return c;
}

JobDemand Job(const std::string& uid, int replicas, double cpus, TimeMicros queued = 0,
              int priority = 0, const std::string& project = "p") {
  JobDemand j;
  j.uid = uid;
  j.project = project;
  j.priority = priority;
  j.queued_since = queued;
  j.max_run = kHour;
  for (int i = 0; i < replicas; ++i) {
    j.replicas.push_back({cpus, cpus * 2, "", 0, "jobSpec.workerPoolSpecs[0].machineSpec"});
  }
  return j;
}

JobDemand GpuJob(const std::string& uid, int gpus, TimeMicros queued = 0) {
  JobDemand j = Job(uid, 1, 1, queued);
  j.replicas[0].gpu_type = "NVIDIA_TESLA_T4";
  j.replicas[0].gpus = gpus;
  return j;
}

Allocation Holding(const std::string& uid, const Admitted& a, TimeMicros end,
                   const std::string& project = "p", bool spot = false, int priority = 0) {
  return Allocation{uid, project, priority, spot, end, false, a.placement};
}

std::vector<std::string> Uids(const AdmissionDecisions& d) {
  std::vector<std::string> out;
  for (const Admitted& a : d.admit) out.push_back(a.uid);
  return out;
}

TEST(AdmissionTest, AGangIsAdmittedWholeOrWaitsWhole) {
  Capacity cap = OneNode(8, 100);
  AdmissionDecisions first = Admit(cap, {}, {Job("run", 1, 4)}, 0);
  std::vector<Allocation> running = {Holding("run", first.admit[0], kHour)};
  AdmissionDecisions d = Admit(cap, running, {Job("big", 3, 2)}, 0);
  EXPECT_TRUE(d.admit.empty());
  EXPECT_EQ(d.waiting.at("big").reason, "waiting for 6 vCPUs: 4 free");
  EXPECT_EQ(d.waiting.at("big").position, 1);

  d = Admit(cap, running, {Job("fits", 2, 2)}, 0);
  ASSERT_EQ(d.admit.size(), 1u);
  EXPECT_EQ(d.admit[0].placement.size(), 2u);
}

TEST(AdmissionTest, TwoJobsThatFitOnlyAloneRunOneAfterTheOther) {
  Capacity cap = OneNode(4, 100);
  std::vector<JobDemand> queue = {Job("a", 1, 3, 1), Job("b", 1, 3, 2)};
  AdmissionDecisions d = Admit(cap, {}, queue, 0);
  ASSERT_EQ(Uids(d), std::vector<std::string>{"a"});
  EXPECT_EQ(d.waiting.at("b").reason, "waiting for 3 vCPUs: 1 free");
  // a ends: b goes.
  d = Admit(cap, {}, {queue[1]}, 10);
  EXPECT_EQ(Uids(d), std::vector<std::string>{"b"});
}

TEST(AdmissionTest, HigherPriorityGoesFirstThenSubmitTime) {
  Capacity cap = OneNode(2, 100);
  std::vector<JobDemand> queue = {Job("old-low", 1, 2, 1, 0), Job("new-high", 1, 2, 5, 900),
                                  Job("mid-high", 1, 2, 3, 900)};
  AdmissionDecisions d = Admit(cap, {}, queue, 10);
  EXPECT_EQ(Uids(d), std::vector<std::string>{"mid-high"});
  EXPECT_EQ(d.waiting.at("new-high").position, 1);
  EXPECT_EQ(d.waiting.at("old-low").position, 2);
}

TEST(AdmissionTest, BackfillRunsASmallJobOnlyWhereTheHeadWillNotNeedIt) {
  Capacity cap = OneNode(8, 100);
  // "run" holds 6 of 8 CPUs until t = 1 h; the head needs 7 and waits for it.
  AdmissionDecisions first = Admit(cap, {}, {Job("run", 1, 6)}, 0);
  std::vector<Allocation> running = {Holding("run", first.admit[0], kHour)};
  JobDemand head = Job("head", 1, 7, 1);
  JobDemand short_job = Job("short", 1, 2, 2);
  short_job.max_run = kHour / 2;  // Ends before the head's reservation.
  JobDemand long_job = Job("long", 1, 2, 3);
  long_job.max_run = 2 * kHour;  // Would still hold 2 CPUs when the head is due.
  AdmissionDecisions d = Admit(cap, running, {head, long_job}, 0);
  EXPECT_TRUE(d.admit.empty());
  EXPECT_EQ(d.reserved_uid, "head");
  EXPECT_EQ(d.reserved_start, kHour);
  EXPECT_EQ(d.waiting.at("long").reason,
            "behind 1 earlier job (job head holds a reservation for the resources it needs)");
  d = Admit(cap, running, {head, short_job}, 0);
  EXPECT_EQ(Uids(d), std::vector<std::string>{"short"});
  // With 10 CPUs the head leaves 3 free at its start: the long job may use 2 now.
  Capacity bigger = OneNode(10, 100);
  d = Admit(bigger, running, {head, long_job}, 0);
  EXPECT_EQ(Uids(d), std::vector<std::string>{"long"});
}

TEST(AdmissionTest, LowerPriorityWaitsBehindHigherPriorityWithThatReason) {
  Capacity cap = OneNode(4, 100);
  AdmissionDecisions first = Admit(cap, {}, {Job("run", 1, 4)}, 0);
  std::vector<Allocation> running = {Holding("run", first.admit[0], kHour)};
  std::vector<JobDemand> queue = {Job("h1", 1, 4, 1, 500), Job("h2", 1, 4, 2, 500),
                                  Job("low", 1, 4, 3, 0)};
  AdmissionDecisions d = Admit(cap, running, queue, 0);
  EXPECT_EQ(d.waiting.at("h1").reason, "waiting for 4 vCPUs: 0 free");
  EXPECT_EQ(d.waiting.at("low").position, 3);
  EXPECT_EQ(d.waiting.at("low").reason, "waiting for 4 vCPUs: 0 free");
  // 2 free now: "low" would fit, but the head (5) needs all but 1 once "run" ends.
  Capacity wide = OneNode(6, 100);
  queue[0] = Job("h1", 1, 5, 1, 500);
  queue[2] = Job("low", 1, 2, 3, 0);
  queue[2].max_run = 2 * kHour;
  d = Admit(wide, running, queue, 0);
  EXPECT_TRUE(d.admit.empty());
  EXPECT_EQ(d.waiting.at("low").reason, "behind 2 jobs of higher priority");
}

TEST(AdmissionTest, ProjectQuotaHoldsOnlyThatProject) {
  Capacity cap = OneNode(16, 100);
  cap.quotas["a"] = Quota{-1, 8, -1};
  AdmissionDecisions first = Admit(cap, {}, {Job("a1", 1, 8, 0, 0, "a")}, 0);
  ASSERT_EQ(first.admit.size(), 1u);
  std::vector<Allocation> running = {Holding("a1", first.admit[0], kHour, "a")};
  AdmissionDecisions d =
      Admit(cap, running, {Job("a2", 1, 2, 1, 0, "a"), Job("b1", 1, 2, 2, 0, "b")}, 0);
  EXPECT_EQ(Uids(d), std::vector<std::string>{"b1"});
  EXPECT_EQ(d.waiting.at("a2").reason, "project quota: 8 of 8 vCPUs in use");
  cap.quotas["a"] = Quota{1, -1, -1};
  d = Admit(cap, running, {Job("a2", 1, 2, 1, 0, "a")}, 0);
  EXPECT_EQ(d.waiting.at("a2").reason, "project quota: 1 of 1 jobs running");
}

TEST(AdmissionTest, FairShareInterleavesProjectsThatBothWait) {
  Capacity cap = OneNode(4, 100);
  std::vector<JobDemand> queue;
  for (int i = 0; i < 4; ++i) queue.push_back(Job("a" + std::to_string(i), 1, 1, i, 0, "a"));
  for (int i = 0; i < 4; ++i) queue.push_back(Job("b" + std::to_string(i), 1, 1, 10 + i, 0, "b"));
  AdmissionDecisions d = Admit(cap, {}, queue, 100);
  // Project a submitted all its jobs first, yet b gets half of the machine.
  std::vector<std::string> got = Uids(d);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"a0", "a1", "b0", "b1"}));
}

TEST(AdmissionTest, GpusAreCountedByTypeAndIndex) {
  Capacity cap = OneNode(32, 100, 2);
  AdmissionDecisions d = Admit(cap, {}, {GpuJob("g1", 1, 1), GpuJob("g2", 2, 2)}, 0);
  ASSERT_EQ(Uids(d), std::vector<std::string>{"g1"});
  EXPECT_EQ(d.admit[0].placement[0].gpu_indices, std::vector<int>{0});
  EXPECT_EQ(d.waiting.at("g2").reason, "waiting for 2 GPUs of NVIDIA_TESLA_T4: 1 free");
  std::vector<Allocation> running = {Holding("g1", d.admit[0], kHour)};
  d = Admit(cap, running, {GpuJob("g3", 1, 3)}, 0);
  ASSERT_EQ(d.admit.size(), 1u);
  EXPECT_EQ(d.admit[0].placement[0].gpu_indices, std::vector<int>{1});
}

TEST(AdmissionTest, AJobThatCanNeverFitIsRefusedNamingTheFieldAndTheBiggestNode) {
  Capacity cap = OneNode(4, 16, 1);
  Status s = CheckCanEverFit(GpuJob("g", 2), cap);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "jobSpec.workerPoolSpecs[0].machineSpec: a replica needs 2 GPUs of NVIDIA_TESLA_T4, "
            "1 vCPUs and 2 GB, more than any node has (the biggest is host: 4 vCPUs, 16 GB, 1 x "
            "NVIDIA_TESLA_T4)");
  JobDemand big = Job("big", 1, 8);
  EXPECT_FALSE(CheckCanEverFit(big, cap).ok());
  cap.strict = false;  // Shrunk to the node: runs alone.
  EXPECT_TRUE(CheckCanEverFit(big, cap).ok());
  JobDemand eff = EffectiveDemand(big, cap);
  EXPECT_DOUBLE_EQ(eff.replicas[0].cpus, 4);
  EXPECT_DOUBLE_EQ(eff.replicas[0].memory_gb, 8);
  cap.quotas["p"] = Quota{-1, 2, -1};
  s = CheckCanEverFit(Job("q", 1, 3), cap);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("project p's quota"), std::string::npos) << s.message();
}

TEST(AdmissionTest, SpotPreemptionPicksTheFewestLowestPriorityVictims) {
  Capacity cap = OneNode(8, 100);
  std::vector<JobDemand> spots = {Job("s-low-small", 1, 2, 0, 0), Job("s-low-big", 1, 4, 1, 0),
                                  Job("s-high", 1, 2, 2, 800)};
  AdmissionDecisions first = Admit(cap, {}, spots, 0);
  ASSERT_EQ(first.admit.size(), 3u);
  std::vector<Allocation> running;
  for (const Admitted& a : first.admit) {
    int priority = a.uid == "s-high" ? 800 : 0;
    running.push_back(Holding(a.uid, a, kHour, "p", /*spot=*/true, priority));
  }
  JobDemand demand = Job("on-demand", 1, 4, 5);
  AdmissionDecisions d = Admit(cap, running, {demand}, 0);
  EXPECT_TRUE(d.admit.empty());
  EXPECT_EQ(d.preempt, std::vector<std::string>{"s-low-big"});
  EXPECT_EQ(d.waiting.at("on-demand").reason,
            "waiting for 4 vCPUs: 0 free; preempting 1 spot job to make room");
  // While it stops, nothing more is preempted for the same job.
  Allocation& victim = *std::find_if(running.begin(), running.end(),
                                     [](const Allocation& a) { return a.uid == "s-low-big"; });
  victim.preempting = true;
  d = Admit(cap, running, {demand}, 0);
  EXPECT_TRUE(d.preempt.empty());
  EXPECT_EQ(d.waiting.at("on-demand").reason,
            "waiting for 4 vCPUs: 0 free; 1 preempted spot job is stopping to make room");
  // A spot job never preempts.
  victim.preempting = false;
  JobDemand spot = demand;
  spot.spot = true;
  d = Admit(cap, running, {spot}, 0);
  EXPECT_TRUE(d.preempt.empty());
}

// --- Property tests over random workloads (seeded).

struct SimJob {
  JobDemand demand;
  DurationMicros runs_for = 0;
  TimeMicros started = -1;
  TimeMicros first_reserved = -1;  // The first reservation start it was given.
};

// Runs a random workload to the end. With `arrivals`, jobs come over time and from
// two projects (so the order may change as higher-priority jobs arrive and as fair
// share shifts); without, all are queued at once in one project, so the order is
// fixed and no reservation may ever slip.
void Simulate(uint32_t seed, bool arrivals) {
  {
    std::mt19937 rng(seed);
    Capacity cap;
    for (int n = 0; n < 3; ++n) {
      Node node{"n" + std::to_string(n), 8, 32, {}};
      for (int g = 0; g < 2; ++g) node.gpus.push_back({"NVIDIA_TESLA_T4", g});
      cap.nodes.push_back(node);
    }
    std::vector<SimJob> jobs;
    for (int i = 0; i < 60; ++i) {
      SimJob s;
      s.demand =
          Job("j" + std::to_string(i), 1 + rng() % 3, 1 + rng() % 8,
              arrivals ? static_cast<TimeMicros>(i) * kHour / 4 : 0,
              static_cast<int>(rng() % 3) * 100, arrivals ? "p" + std::to_string(rng() % 2) : "p");
      if (rng() % 4 == 0) {
        s.demand.replicas[0].gpu_type = "NVIDIA_TESLA_T4";
        s.demand.replicas[0].gpus = 1 + static_cast<int>(rng() % 2);
      }
      s.demand.max_run = (1 + rng() % 10) * kHour;
      s.runs_for = s.demand.max_run / (1 + rng() % 3);
      ASSERT_TRUE(CheckCanEverFit(s.demand, cap).ok());
      jobs.push_back(s);
    }
    std::vector<Allocation> running;
    std::map<std::string, TimeMicros> ends;
    TimeMicros now = 0;
    for (int step = 0; step < 10000; ++step) {
      std::vector<JobDemand> queued;
      for (const SimJob& s : jobs) {
        if (s.started < 0 && s.demand.queued_since <= now) queued.push_back(s.demand);
      }
      AdmissionDecisions d = Admit(cap, running, queued, now);
      for (const Admitted& a : d.admit) {
        SimJob& s = *std::find_if(jobs.begin(), jobs.end(),
                                  [&](const SimJob& j) { return j.demand.uid == a.uid; });
        s.started = now;
        running.push_back({a.uid, s.demand.project, s.demand.priority, false,
                           now + s.demand.max_run, false, a.placement});
        ends[a.uid] = now + s.runs_for;
        if (!arrivals) {
          ASSERT_LE(now, s.first_reserved < 0 ? now : s.first_reserved)
              << "seed " << seed << ": " << a.uid << " started after its reservation";
        }
      }
      if (!d.reserved_uid.empty()) {
        SimJob& head = *std::find_if(jobs.begin(), jobs.end(), [&](const SimJob& j) {
          return j.demand.uid == d.reserved_uid;
        });
        if (head.first_reserved < 0) head.first_reserved = d.reserved_start;
      }
      // No GPU index held twice on a node.
      std::set<std::pair<int, int>> held;
      for (const Allocation& a : running) {
        for (const ReplicaPlacement& r : a.replicas) {
          for (int g : r.gpu_indices) {
            ASSERT_TRUE(held.insert({r.node, g}).second) << "seed " << seed;
          }
        }
      }
      // Advance to the next arrival or end.
      TimeMicros next = std::numeric_limits<TimeMicros>::max();
      for (const SimJob& s : jobs) {
        if (s.demand.queued_since > now) next = std::min(next, s.demand.queued_since);
      }
      for (const auto& [uid, end] : ends) next = std::min(next, end);
      if (next == std::numeric_limits<TimeMicros>::max()) break;
      now = next;
      for (auto it = ends.begin(); it != ends.end();) {
        if (it->second > now) {
          ++it;
          continue;
        }
        running.erase(std::remove_if(running.begin(), running.end(),
                                     [&](const Allocation& a) { return a.uid == it->first; }),
                      running.end());
        it = ends.erase(it);
      }
    }
    for (const SimJob& s : jobs) EXPECT_GE(s.started, 0) << "seed " << seed << " " << s.demand.uid;
  }
}

TEST(AdmissionPropertyTest, BackfillNeverDelaysTheHeadsReservation) {
  for (uint32_t seed = 1; seed <= 40; ++seed) Simulate(seed, /*arrivals=*/false);
}

TEST(AdmissionPropertyTest, EveryJobStartsAndNoGpuIsHeldTwiceAsJobsArrive) {
  for (uint32_t seed = 1; seed <= 40; ++seed) Simulate(seed, /*arrivals=*/true);
}

}  // namespace
}  // namespace ty::scheduler
