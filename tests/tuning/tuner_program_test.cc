// build/bin/trainyard-tuner as a benchmark driver runs it: one request line written,
// then exactly one reply line read before the next (a reply left in a buffer would
// hang here, as it would hang the driver), stdout holding nothing else.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace ty::tuning {
namespace {

class TunerProcess {
 public:
  explicit TunerProcess(const std::string& algorithm) {
    int in[2], out[2];
    EXPECT_EQ(pipe(in), 0);
    EXPECT_EQ(pipe(out), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[1]);
      close(out[0]);
      std::string bin = std::string(TY_BINARY_DIR) + "/bin/trainyard-tuner";
      execl(bin.c_str(), bin.c_str(), "--algorithm", algorithm.c_str(), nullptr);
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = fdopen(in[1], "w");
    from_ = fdopen(out[0], "r");
  }
  ~TunerProcess() {
    if (to_ != nullptr) fclose(to_);
    fclose(from_);
    if (pid_ > 0) {  // Never kill(-1): that signals every process we may signal.
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  nlohmann::json Call(const std::string& line) {
    fputs((line + "\n").c_str(), to_);
    fflush(to_);
    char buf[1 << 16];
    if (fgets(buf, sizeof buf, from_) == nullptr) return nullptr;
    return nlohmann::json::parse(buf, nullptr, false);
  }
  // Closes stdin and returns the exit status.
  int Finish() {
    fclose(to_);
    to_ = nullptr;
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

// The spec's Branin transcript (docs/contracts/tuner-protocol.md §5), B=5, p=2, seed 7.
TEST(TunerProgramTest, AnswersTheSpecTranscriptLineByLineAndExits) {
  for (const char* algorithm : {"ALGORITHM_UNSPECIFIED", "RANDOM_SEARCH"}) {
    TunerProcess tuner(algorithm);
    nlohmann::json created = tuner.Call(
        R"({"op":"create","study":{"goal":"MINIMIZE","hyperparameterMetricTag":"value","maxTrials":5,"maxParallelTrials":2,"params":[{"parameterName":"x1","type":"DOUBLE","minValue":-5.0,"maxValue":10.0,"scaleType":"UNIT_LINEAR_SCALE"},{"parameterName":"x2","type":"DOUBLE","minValue":0.0,"maxValue":15.0,"scaleType":"UNIT_LINEAR_SCALE"}]},"seed":7})");
    ASSERT_EQ(created["ok"], true) << created.dump();
    int done = 0;
    while (done < 5) {
      int k = std::min(2, 5 - done);
      nlohmann::json s = tuner.Call(R"({"op":"suggest","count":)" + std::to_string(k) + "}");
      ASSERT_EQ(s["ok"], true) << s.dump();
      ASSERT_EQ(s["trials"].size(), static_cast<size_t>(k));
      for (const auto& t : s["trials"]) {
        double x1 = t["params"]["x1"], x2 = t["params"]["x2"];
        EXPECT_TRUE(x1 >= -5 && x1 <= 10 && x2 >= 0 && x2 <= 15) << t.dump();
        nlohmann::json r = tuner.Call(R"({"op":"report","trial":)" + t["trial"].dump() +
                                      R"(,"value":)" + std::to_string(x1 * x1 + x2) + "}");
        EXPECT_EQ(r["ok"], true) << r.dump();
        ++done;
      }
    }
    EXPECT_EQ(tuner.Call(R"({"op":"suggest","count":1,"future_field":true})")["ok"], true);
    EXPECT_EQ(tuner.Call("this is not json")["ok"], false);
    EXPECT_EQ(tuner.Call(R"({"op":"close"})")["ok"], true);
    EXPECT_EQ(tuner.Finish(), 0);
  }
}

}  // namespace
}  // namespace ty::tuning
