// The chaos load and its invariants, shared by every backend's chaos test
// (tests/chaos/chaos_test.cc on the container engine, tests/slurm/slurm_chaos_test.cc on
// Slurm): single- and multi-replica jobs, a tuning study, cancels, jobs queued behind
// full capacity; then the daemon is killed -9 at random moments ten times, with one
// outage of the backend (the engine, the Slurm controller) among them. Every job must
// end as it would have without faults: every accepted job still there, the queue's
// order kept, each replica run exactly once, its real exit code, every log line once
// and in order.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <thread>

#include "integration/daemon_harness.h"
#include "integration/hypertune_trainer.h"

namespace ty::testing::chaos {

using nlohmann::json;

inline constexpr char kJobs[] = "/v1/projects/chaos/locations/us-central1/customJobs";
inline constexpr char kStudies[] =
    "/v1/projects/chaos/locations/us-central1/hyperparameterTuningJobs";
inline constexpr int kLines = 25;
inline const std::vector<std::string> kTerminal = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
                                                   "JOB_STATE_CANCELLED"};

// Records that it ran (one line per run in the bucket), prints kLines numbered lines
// `interval` seconds apart, exits with `code`.
inline std::string Script(const std::string& run_name, int code,
                          const std::string& interval = "0.2") {
  return "echo run >> /gcs/chaos/runs/" + run_name + "; i=0; while [ $i -lt " +
         std::to_string(kLines) + " ]; do echo line-$i; i=$((i+1)); sleep " + interval +
         "; done; exit " + std::to_string(code);
}

inline json Pool(const std::string& script) {
  return {{"machineSpec", {{"machineType", "n1-standard-1"}}},
          {"replicaCount", "1"},
          {"containerSpec", {{"imageUri", kTestImage}, {"command", {"sh", "-c", script}}}}};
}

inline json Job(const std::string& name, std::vector<json> pools) {
  return {{"displayName", name},
          {"jobSpec",
           {{"workerPoolSpecs", pools},
            {"baseOutputDirectory", {{"outputUriPrefix", "gs://chaos/out/" + name + "/"}}}}}};
}

struct Expected {
  std::string path;               // GET path of the job.
  std::string state;              // How it ends without faults.
  std::vector<std::string> runs;  // Run records it leaves (one line each).
  bool lines = false;             // Prints line-0 .. line-(kLines-1) once each.
};

struct Load {
  std::vector<Expected> expected;
  std::vector<std::string> singles;    // In submit order: the queue's order.
  std::vector<std::string> cancelled;  // To cancel while the faults run.
};

struct Figures {
  int lost = 0, wrong = 0, rerun = 0, lines_lost = 0, lines_doubled = 0;
};

inline std::string Submit(Daemon& d, const std::string& collection, const json& body) {
  HttpReply r = d.Post(collection, body.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  return collection + "/" + IdOf(r.Json());
}

// A one-replica job that prints its lines `interval` s apart and exits `code`.
inline Expected SubmitSingle(Daemon& d, const std::string& name, int code,
                             const std::string& interval = "0.2") {
  std::string path = Submit(d, kJobs, Job(name, {Pool(Script(name, code, interval))}));
  return {path, code ? "JOB_STATE_FAILED" : "JOB_STATE_SUCCEEDED", {name}, true};
}

// The load: `singles` one-replica jobs (every third exits 3), two two-pool jobs, two
// jobs to cancel, and a 3-trial study, in project "chaos" with bucket "chaos"; the
// jobs print their lines `interval` s apart (25 lines).
inline Load SubmitLoad(Daemon& d, int singles = 10, const std::string& interval = "0.2") {
  EXPECT_EQ(d.Post("/storage/v1/b?project=chaos", R"({"name":"chaos"})").status, 200);
  // Made by hand on the host, so given by hand to root in the replicas' user namespace
  // (the daemon's default replica_uid_base), as a user who copies files in must.
  const std::string runs_dir = d.data_dir() + "/buckets/chaos/runs";
  std::filesystem::create_directories(runs_dir);
  EXPECT_EQ(::chown(runs_dir.c_str(), 2000000000, 2000000000), 0);
  Load load;
  for (int i = 0; i < singles; ++i) {
    Expected e = SubmitSingle(d, "single-" + std::to_string(i), i % 3 == 2 ? 3 : 0, interval);
    load.singles.push_back(e.path);
    load.expected.push_back(std::move(e));
  }
  for (int i = 0; i < 2; ++i) {
    const std::string name = "multi-" + std::to_string(i);
    std::string path = Submit(d, kJobs,
                              Job(name, {Pool(Script(name + "-chief", 0, interval)),
                                         Pool(Script(name + "-worker", 0, interval))}));
    load.expected.push_back(
        {path, "JOB_STATE_SUCCEEDED", {name + "-chief", name + "-worker"}, false});
  }
  for (int i = 0; i < 2; ++i) {
    const std::string name = "cancelled-" + std::to_string(i);
    std::string path = Submit(
        d, kJobs, Job(name, {Pool("echo run >> /gcs/chaos/runs/" + name + "; exec sleep 600")}));
    load.cancelled.push_back(path);
    load.expected.push_back({path, "JOB_STATE_CANCELLED", {}, false});
  }
  json study = {
      {"displayName", "chaos-study"},
      {"studySpec",
       {{"metrics", {{{"metricId", "accuracy"}, {"goal", "MAXIMIZE"}}}},
        {"parameters",
         {{{"parameterId", "x"}, {"doubleValueSpec", {{"minValue", 0}, {"maxValue", 1}}}}}}}},
      {"maxTrialCount", 3},
      {"parallelTrialCount", 1},
      {"trialJobSpec",
       {{"workerPoolSpecs",
         {{{"machineSpec", {{"machineType", "n1-standard-1"}}},
           {"replicaCount", "1"},
           {"containerSpec",
            {{"imageUri", kTestImage},
             {"command", {"sh", "-c", kTrainer, "trainer"}},
             {"env", {{{"name", "SLEEP"}, {"value", "2"}}}}}}}}}}}};
  load.expected.push_back({Submit(d, kStudies, study), "JOB_STATE_SUCCEEDED", {}, false});
  return load;
}

// Ten kill -9s at random moments (restarting with `args`), the cancels after the
// third, `outage` (the backend gone and back) before the sixth, and on a daemon with a
// disk of its own (Daemon::own_disk) that disk full for 8 s around the eighth: the
// daemon is killed and started again while it is full. Returns the kills.
inline int RunFaults(Daemon& d, std::mt19937& rng, const std::vector<std::string>& args,
                     const Load& load, const std::function<void()>& outage) {
  auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto start = std::chrono::steady_clock::now();
  int kills = 0;
  for (int k = 0; k < 10; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(between(500, 3500)));
    if (k == 3) {
      for (const std::string& path : load.cancelled) {
        EXPECT_EQ(d.Post(path + ":cancel", "{}").status, 200);
      }
    }
    if (k == 5) outage();
    const bool full = k == 7 && d.own_disk();
    if (full) {
      d.FillDisk();  // Replicas print and end while no line or exit can be recorded.
      std::this_thread::sleep_for(std::chrono::seconds(5));
      std::cout << "chaos: the data disk is full; /healthz " << d.Get("/healthz").body << "\n";
    }
    d.Kill();
    ++kills;
    std::this_thread::sleep_for(std::chrono::milliseconds(between(0, 800)));
    d.Start(args);
    if (full) {
      std::this_thread::sleep_for(std::chrono::seconds(3));
      d.FreeDisk();
    }
  }
  std::cout << "chaos: " << kills << " kills in "
            << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                start)
                   .count()
            << " s\n";
  return kills;
}

// The messages of a job's log, every page.
inline std::vector<std::string> Lines(Daemon& d, const std::string& path) {
  std::vector<std::string> out;
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    json j = d.Get(path + "/logs" + (cursor.empty() ? "" : "?cursor=" + cursor)).Json();
    for (const auto& e : j.value("entries", json::array())) out.push_back(e.value("message", ""));
    std::string next = j.value("nextCursor", "");
    if (next.empty() || next == cursor || j.value("entries", json::array()).empty()) break;
    cursor = next;
  }
  return out;
}

// How many lines `run` recorded in the bucket.
inline int Runs(Daemon& d, const std::string& run) {
  std::ifstream in(d.data_dir() + "/buckets/chaos/runs/" + run);
  int runs = 0;
  for (std::string l; std::getline(in, l);) ++runs;
  return runs;
}

// Every job ends as expected, each replica ran once, every line once and in order.
inline void CheckLines(Daemon& d, const Expected& e, Figures* f) {
  std::vector<std::string> numbered;
  for (const std::string& l : Lines(d, e.path)) {
    if (l.rfind("line-", 0) == 0) numbered.push_back(l);
  }
  for (int i = 0; i < kLines; ++i) {
    int seen =
        static_cast<int>(std::count(numbered.begin(), numbered.end(), "line-" + std::to_string(i)));
    if (seen == 0) ++f->lines_lost;
    if (seen > 1) ++f->lines_doubled;
  }
  EXPECT_EQ(numbered.size(), static_cast<size_t>(kLines)) << e.path;
  for (size_t i = 0; i < numbered.size(); ++i) {
    EXPECT_EQ(numbered[i], "line-" + std::to_string(i)) << e.path;
  }
}

inline Figures CheckEnds(Daemon& d, const Load& load, int timeout_s = 240) {
  Figures f;
  for (const Expected& e : load.expected) {
    json done = d.WaitForField(e.path, "state", kTerminal, timeout_s);
    if (!done.is_object() || !done.contains("state")) {
      ++f.lost;
      ADD_FAILURE() << e.path << " is gone: " << done.dump();
      continue;
    }
    if (done["state"] != e.state) {
      ++f.wrong;
      ADD_FAILURE() << e.path << " ended " << done["state"] << ", not " << e.state << ": "
                    << done.dump();
    }
    if (e.state == "JOB_STATE_FAILED") {
      EXPECT_NE(done.dump().find("exit"), std::string::npos) << done.dump();
      EXPECT_NE(done.dump().find('3'), std::string::npos) << "the real exit code: " << done.dump();
    }
    if (done.contains("startTime") && done.contains("endTime")) {
      EXPECT_LE(std::string(done["startTime"]), std::string(done["endTime"])) << e.path;
    }
    for (const std::string& run : e.runs) {
      const int runs = Runs(d, run);
      if (runs != 1) ++f.rerun;
      EXPECT_EQ(runs, 1) << run << " ran " << runs << " times";
    }
    if (e.lines) CheckLines(d, e, &f);
  }
  // The queue's order: same size, same project, same priority: admitted in submit order
  // (those admitted in one pass share a time; their starts race each other).
  std::string previous;
  for (const std::string& path : load.singles) {
    json phases = d.Get(path + "/details").Json().value("phases", json::object());
    std::string admitted = phases.value("admitTime", "");
    EXPECT_FALSE(admitted.empty()) << path << ": " << phases.dump();
    EXPECT_LE(previous, admitted) << path << " was admitted before a job submitted earlier";
    previous = admitted;
  }
  std::cout << "chaos: " << load.expected.size() << " jobs, lost " << f.lost << ", ended otherwise "
            << f.wrong << ", replicas run again " << f.rerun << ", log lines lost " << f.lines_lost
            << ", doubled " << f.lines_doubled << "\n";
  return f;
}

// SIGTERM is quick, and a running job keeps running through it and ends well.
inline void CheckSigtermLeavesJobsRunning(Daemon& d, const std::vector<std::string>& args) {
  std::string last = Submit(d, kJobs, Job("through-sigterm", {Pool(Script("through-sigterm", 0))}));
  ASSERT_EQ(d.WaitForField(last, "state", {"JOB_STATE_RUNNING"}, 60)["state"], "JOB_STATE_RUNNING");
  const auto term = std::chrono::steady_clock::now();
  d.Stop();
  const double term_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - term).count();
  std::cout << "chaos: SIGTERM took " << term_s << " s\n";
  EXPECT_LT(term_s, 1.0);
  d.Start(args);
  json through = d.WaitForField(last, "state", kTerminal, 120);
  EXPECT_EQ(through["state"], "JOB_STATE_SUCCEEDED") << through.dump();
  EXPECT_EQ(Runs(d, "through-sigterm"), 1);
}

}  // namespace ty::testing::chaos
