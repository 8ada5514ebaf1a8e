// ContainerExecutor behaviour beyond the shared contract: image pulls, failed
// creates, networks, mounts, large outputs and start-up overhead, on the real engine.
#include "executor/container/container_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "executor/executor_contract.h"

namespace ty::testing {
namespace {

using executor::AttemptSpec;
using executor::ExecutorEventKind;
using executor::ReplicaLaunch;
using ::testing::HasSubstr;

// A daemon that dies inside a warm launch, between the hand-overs (StartWarmGang):
// replica `never_handed` keeps its launch prepared and never gets it. The fault is
// injected by overriding the one step, the executor's code unchanged.
class DyingWarmExecutor : public executor::ContainerExecutor {
 public:
  static Result<std::unique_ptr<ContainerExecutor>> Create(Options options, size_t never_handed) {
    return ContainerExecutor::Create(std::move(options), [never_handed](Options checked) {
      return std::unique_ptr<ContainerExecutor>(
          new DyingWarmExecutor(std::move(checked), never_handed));
    });
  }

 protected:
  Status HandOverLaunch(size_t replica, const std::string& sandbox_dir) override {
    if (replica == never_handed_) return Status::Ok();
    return ContainerExecutor::HandOverLaunch(replica, sandbox_dir);
  }

 private:
  DyingWarmExecutor(Options options, size_t never_handed)
      : ContainerExecutor(std::move(options)), never_handed_(never_handed) {}
  const size_t never_handed_;
};

class ContainerExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TY_REQUIRE_ENGINE_OR_SKIP();
    uid_ = UniqueJobUid();
    auto ex = warm_ ? NewWarmExecutor() : NewContainerExecutor(&sink_, events_.Callback(), native_);
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    ex_ = std::move(*ex);
  }
  void TearDown() override {
    if (ex_ != nullptr) ex_->Cleanup(uid_, 1).IgnoreError();
    ex_.reset();
    ContainerBackend().ForceClean(uid_);
    if (warm_) {
      RemoveLabelled(InstanceLabel());
      std::error_code ec;
      std::filesystem::remove_all(sandbox_dir_, ec);
    }
  }

  // Warm mode (WarmContainerExecutorTest): an executor with its own instance and
  // sandbox directory whose pool fills only through PrewarmForTest.
  Result<std::unique_ptr<executor::ContainerExecutor>> NewWarmExecutor(bool refill = false) {
    if (sandbox_dir_.empty()) {
      char tmpl[] = "/tmp/ty-warm-test-XXXXXX";
      sandbox_dir_ = mkdtemp(tmpl);
    }
    executor::ContainerExecutor::Options o;
    o.clock = SystemClock::Get();
    o.random = SystemRandom::Get();
    o.engine_socket = EngineSocket();
    o.log_sink = &sink_;
    o.instance = "warm" + uid_;
    o.warm_sandboxes = 16;
    o.sandbox_dir = sandbox_dir_;
    o.sandbox_init = std::string(TY_BINARY_DIR) + "/bin/ty-sandbox-init";
    o.warm_refill = refill;
    ASSIGN_OR_RETURN(auto ex, dies_before_handing_over_
                                  ? DyingWarmExecutor::Create(o, *dies_before_handing_over_)
                                  : executor::ContainerExecutor::Create(o));
    ex->SetEventCallback(events_.Callback());
    return ex;
  }
  std::string InstanceLabel() const {
    return std::string(executor::kLabelInstance) + "=warm" + uid_;
  }
  // Networks this test's executor made that are still there.
  size_t NetworksLeft() {
    if (!warm_) return 0;
    auto networks = engine_.ListNetworks({InstanceLabel()});
    return networks.ok() ? networks->size() : 999;
  }

  ReplicaLaunch Replica(int pool, int index, const std::string& script) {
    ReplicaLaunch r = TestReplica(uid_, pool, index);
    r.image = kTestImage;
    r.command = {"/bin/sh", "-c", script};
    return r;
  }
  AttemptSpec Attempt(std::vector<ReplicaLaunch> replicas) {
    return TestAttempt(uid_, std::move(replicas));
  }
  // Several replicas on the attempt's own network, as the service launches them.
  AttemptSpec NetworkedAttempt(std::vector<ReplicaLaunch> replicas) {
    AttemptSpec a = Attempt(std::move(replicas));
    a.peers_talk = true;
    return a;
  }
  // Launches `a` and waits for kAttemptStarted.
  ::testing::AssertionResult LaunchAndWaitStarted(const AttemptSpec& a) {
    if (warm_) {
      Status warmed = ex_->PrewarmForTest(a);
      if (!warmed.ok()) return ::testing::AssertionFailure() << "prewarm: " << warmed.ToString();
    }
    Status s = ex_->Launch(a);
    if (!s.ok()) return ::testing::AssertionFailure() << "Launch: " << s.ToString();
    auto launched = events_.WaitForLaunch(uid_);
    if (!launched) return ::testing::AssertionFailure() << "no launch event";
    if (launched->kind != ExecutorEventKind::kAttemptStarted) {
      return ::testing::AssertionFailure() << "launch failed: " << launched->message;
    }
    if (warm_ && launched->message != "started from warm sandboxes") {
      return ::testing::AssertionFailure() << "not started warm: \"" << launched->message << "\"";
    }
    return ::testing::AssertionSuccess();
  }

  void ReplicasReachEachOtherByHostname();
  void PeersResolveFromHostsAtFixedAddressesAtOnce();
  void RestartedReplicaIsReachableByItsHostnameAgain();

  bool warm_ = false;
  bool native_ = false;
  // Warm mode: the executor is a DyingWarmExecutor that never hands this replica over.
  std::optional<size_t> dies_before_handing_over_;
  std::string sandbox_dir_;

  std::string uid_;
  RecordingLogSink sink_;
  EventRecorder events_{&sink_};
  std::unique_ptr<executor::ContainerExecutor> ex_;
  executor::EngineApiClient engine_{EngineSocket()};
};

// The same tests with every attempt started from a warm gang of its shape.
class WarmContainerExecutorTest : public ContainerExecutorTest {
 protected:
  void SetUp() override {
    warm_ = true;
    ContainerExecutorTest::SetUp();
  }
};

// The same tests with every container created through podman's native API, as those
// with GPUs are: fixed addresses, MACs, aliases and /etc/hosts entries must hold there.
class NativeContainerExecutorTest : public ContainerExecutorTest {
 protected:
  void SetUp() override {
    native_ = true;
    ContainerExecutorTest::SetUp();
  }
};

TEST(ContainerExecutorCreateTest, UnavailableWhenEngineDoesNotAnswer) {
  RecordingLogSink sink;
  executor::ContainerExecutor::Options o;
  o.clock = SystemClock::Get();
  o.random = SystemRandom::Get();
  o.engine_socket = "/nonexistent/engine.sock";
  o.log_sink = &sink;
  auto ex = executor::ContainerExecutor::Create(o);
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(ex.status().message(), HasSubstr("/nonexistent/engine.sock"));
}

TEST(ContainerExecutorBodyTest, FollowsDockerCommandSemantics) {
  AttemptSpec a;
  a.job_uid = "u";
  a.attempt = 2;
  a.peers_talk = true;
  a.labels = {{"user", "x"}};
  ReplicaLaunch r;
  r.name = "ty-u-2-1-0";
  r.task_name = "workerpool1-0";
  r.pool = 1;
  r.hostname = "workerpool1-0";
  r.image = "img";
  r.command = {"python3", "-m", "trainer"};
  r.mounts = {{"/data/b", "/gcs/b", false}, {"/data/c", "/gcs/c", true}};
  r.accelerator_type = "NVIDIA_TESLA_T4";
  r.accelerator_count = 2;
  auto body = nlohmann::json::parse(executor::ContainerExecutor::CreateBodyForTest(a, r));
  EXPECT_EQ(body["Entrypoint"], nlohmann::json({"python3", "-m", "trainer"}));
  EXPECT_EQ(body["Cmd"], nlohmann::json::array());  // Command runs alone.
  EXPECT_EQ(body["Hostname"], "workerpool1-0");
  EXPECT_EQ(body["Labels"]["trainyard.job"], "u");
  EXPECT_EQ(body["Labels"]["trainyard.attempt"], "2");
  EXPECT_EQ(body["Labels"]["trainyard.pool"], "1");
  EXPECT_EQ(body["Labels"]["trainyard.task"], "workerpool1-0");
  EXPECT_EQ(body["Labels"]["user"], "x");
  EXPECT_EQ(body["HostConfig"]["Binds"], nlohmann::json({"/data/b:/gcs/b", "/data/c:/gcs/c:ro"}));
  // /gcs itself is empty and read-only: what is written beside the buckets fails.
  EXPECT_EQ(body["HostConfig"]["Tmpfs"], nlohmann::json({{"/gcs", "ro,size=64k,mode=0755"}}));
  EXPECT_EQ(body["HostConfig"]["DeviceRequests"][0]["Count"], 2);
  EXPECT_THAT(body["Env"].get<std::vector<std::string>>(),
              ::testing::Not(::testing::Contains("NVIDIA_VISIBLE_DEVICES=void")));
  EXPECT_EQ(body["HostConfig"]["NetworkMode"], "ty-u-2");  // The executor names it.
  EXPECT_EQ(body["NetworkingConfig"]["EndpointsConfig"]["ty-u-2"]["Aliases"][0], "workerpool1-0");

  // Accelerators the engine cannot give (TPUs) ask for no device.
  r.accelerator_type = "TPU_V2";
  body = nlohmann::json::parse(executor::ContainerExecutor::CreateBodyForTest(a, r));
  EXPECT_FALSE(body["HostConfig"].contains("DeviceRequests"));

  r.command.clear();
  r.args = {"--epochs", "3"};
  r.accelerator_count = 0;
  body = nlohmann::json::parse(executor::ContainerExecutor::CreateBodyForTest(a, r));
  EXPECT_FALSE(body.contains("Entrypoint"));  // The image's ENTRYPOINT stays.
  EXPECT_EQ(body["Cmd"], nlohmann::json({"--epochs", "3"}));
  EXPECT_FALSE(body["HostConfig"].contains("DeviceRequests"));
  // No GPU asked for: none even from NVIDIA's hook in a CUDA image (ENV ...=all).
  EXPECT_THAT(body["Env"].get<std::vector<std::string>>(),
              ::testing::Contains("NVIDIA_VISIBLE_DEVICES=void"));
  r.args.clear();
  body = nlohmann::json::parse(executor::ContainerExecutor::CreateBodyForTest(a, r));
  EXPECT_FALSE(body.contains("Cmd"));  // The image's CMD stays.
}

TEST(ContainerExecutorBodyTest, PinsAddressesAndListsEveryPeerInHosts) {
  AttemptSpec a;
  a.job_uid = "u";
  a.peers_talk = true;
  for (int i = 0; i < 3; ++i) {
    ReplicaLaunch r;
    r.name = "ty-u-1-0-" + std::to_string(i);
    r.hostname = "workerpool0-" + std::to_string(i);
    r.image = "img";
    a.replicas.push_back(r);
  }
  std::vector<std::string> addresses = {"10.89.3.2", "10.89.3.3", "10.89.3.4"};
  auto body = nlohmann::json::parse(
      executor::ContainerExecutor::CreateBodyForTest(a, a.replicas[1], addresses));
  const auto& endpoint = body["NetworkingConfig"]["EndpointsConfig"]["ty-u-1"];
  EXPECT_EQ(endpoint["IPAMConfig"]["IPv4Address"], "10.89.3.3");
  // The MAC follows the address, so a restart in place keeps it (ARP caches of peers).
  EXPECT_EQ(endpoint["MacAddress"], "02:42:0a:59:03:03");
  EXPECT_EQ(endpoint["Aliases"], nlohmann::json({"workerpool0-1"}));  // DNS stays too.
  EXPECT_EQ(body["HostConfig"]["ExtraHosts"],
            nlohmann::json(
                {"workerpool0-0:10.89.3.2", "workerpool0-1:10.89.3.3", "workerpool0-2:10.89.3.4"}));

  // Without addresses (a subnet too small) the engine picks and DNS alone remains.
  body = nlohmann::json::parse(executor::ContainerExecutor::CreateBodyForTest(a, a.replicas[1]));
  EXPECT_FALSE(body["NetworkingConfig"]["EndpointsConfig"]["ty-u-1"].contains("IPAMConfig"));
  EXPECT_FALSE(body["HostConfig"].contains("ExtraHosts"));
}

TEST(ContainerExecutorAddressTest, PicksHostAddressesInOrderSkippingTheGateway) {
  using executor::ContainerExecutor;
  auto picked = ContainerExecutor::PickReplicaAddresses("10.89.0.0/24", "10.89.0.1", 3);
  ASSERT_TRUE(picked.ok()) << picked.status().ToString();
  EXPECT_THAT(*picked, ::testing::ElementsAre("10.89.0.2", "10.89.0.3", "10.89.0.4"));
  // A gateway elsewhere in the range is skipped where it sits.
  picked = ContainerExecutor::PickReplicaAddresses("10.0.0.0/29", "10.0.0.3", 5);
  ASSERT_TRUE(picked.ok()) << picked.status().ToString();
  EXPECT_THAT(*picked,
              ::testing::ElementsAre("10.0.0.1", "10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"));
  // No gateway named: the first host address is left to the conventional one.
  picked = ContainerExecutor::PickReplicaAddresses("192.168.7.9/30", "", 1);
  ASSERT_TRUE(picked.ok()) << picked.status().ToString();
  EXPECT_THAT(*picked, ::testing::ElementsAre("192.168.7.10"));
  EXPECT_EQ(ContainerExecutor::PickReplicaAddresses("10.0.0.0/29", "10.0.0.1", 6).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(ContainerExecutor::PickReplicaAddresses("10.0.0.0/31", "", 1).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(ContainerExecutor::PickReplicaAddresses("fd00::/64", "fd00::1", 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ContainerExecutor::PickReplicaAddresses("10.0.0.0/33", "", 1).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ContainerExecutorTest, ImageCmdIsDroppedWhenCommandIsSet) {
  // The test image's CMD is ["/bin/sh"]; with an overriding command and no args
  // only the command runs (sh would otherwise receive "/bin/sh" as its script).
  ReplicaLaunch r = Replica(0, 0, "");
  r.command = {"/bin/echo", "alone"};
  ASSERT_TRUE(ex_->Launch(Attempt({r})).ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 0);
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("alone"));
}

TEST_F(ContainerExecutorTest, MissingImageFailsLaunchAndLeavesNothing) {
  ReplicaLaunch r = Replica(0, 0, "true");
  r.image = "localhost/trainyard/no-such-image:" + uid_;
  ASSERT_TRUE(ex_->Launch(Attempt({r})).ok());
  auto launched = events_.WaitForLaunch(uid_);
  ASSERT_TRUE(launched.has_value());
  EXPECT_EQ(launched->kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(launched->message, HasSubstr("image pull failed for " + r.image));
  EXPECT_FALSE(ContainerBackend().Leftovers(uid_));
}

// What submit asks (executor.h HoldsRuntime), answered by the real engine.
TEST_F(ContainerExecutorTest, HoldsRuntimeIsWhatTheEngineHolds) {
  EXPECT_TRUE(ex_->HoldsRuntime(kTestImage));
  EXPECT_FALSE(ex_->HoldsRuntime("localhost/trainyard/no-such-runtime:" + uid_));
}

TEST_F(ContainerExecutorTest, FailedCreateRemovesEarlierReplicas) {
  AttemptSpec a = NetworkedAttempt({Replica(0, 0, "sleep 100"), Replica(1, 0, "sleep 100")});
  // Someone already holds the second replica's name: its create fails with 409.
  nlohmann::json squatter = {{"Image", kTestImage},
                             {"Cmd", {"true"}},
                             {"Labels", {{kTestLabel, "1"}, {"trainyard.squatter", uid_}}}};
  auto id = engine_.CreateContainer(a.replicas[1].name, squatter.dump());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(ex_->Launch(a).ok());
  auto launched = events_.WaitForLaunch(uid_);
  engine_.RemoveContainer(*id).IgnoreError();
  ASSERT_TRUE(launched.has_value());
  EXPECT_EQ(launched->kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(launched->message, HasSubstr(a.replicas[1].name));
  EXPECT_EQ(engine_.InspectContainer(a.replicas[0].name).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(*engine_.NetworkExists(
      executor::ContainerExecutor::AttemptNetworkName(a.job_uid, a.attempt)));
  EXPECT_EQ(NetworksLeft(), 0u);
  EXPECT_FALSE(ContainerBackend().Leftovers(uid_));
}

void ContainerExecutorTest::ReplicasReachEachOtherByHostname() {
  // The server listens until a connection brings "ping" (busybox nc now and then
  // accepts an empty one); the client sends until the server is gone after a send.
  ReplicaLaunch server =
      Replica(0, 0,
              "until grep -q ping /tmp/got 2>/dev/null; do nc -l -p 2222 > /tmp/got; done; "
              "cat /tmp/got");
  server.hostname = "workerpool0-0";
  ReplicaLaunch client = Replica(1, 0,
                                 "sent=0; for i in $(seq 1 200); do if echo ping | nc -w 1 "
                                 "workerpool0-0 2222; then sent=1; elif [ $sent = 1 ]; then "
                                 "exit 0; fi; sleep 0.1; done; exit 1");
  client.hostname = "workerpool1-0";
  AttemptSpec a = NetworkedAttempt({server, client});
  ASSERT_TRUE(LaunchAndWaitStarted(a));
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2, 60000);
  ASSERT_EQ(exits.size(), 2u);
  for (const auto& e : exits) EXPECT_EQ(e.exit_code, 0) << "pool " << e.pool;
  EXPECT_THAT(sink_.Messages(uid_, "workerpool0-0"), ::testing::Contains("ping"));
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  EXPECT_FALSE(*engine_.NetworkExists(
      executor::ContainerExecutor::AttemptNetworkName(a.job_uid, a.attempt)));
  EXPECT_EQ(NetworksLeft(), 0u);
}
// Found by the chaos test: the daemon killed while a networked attempt launched left
// its network behind; podman answers the relaunch's create with 500 "network already
// exists" (Docker: 409), which failed the job. The relaunch now uses the network.
TEST_F(ContainerExecutorTest, ARelaunchUsesTheNetworkAnInterruptedLaunchLeft) {
  AttemptSpec a = NetworkedAttempt({Replica(0, 0, "echo chief"), Replica(1, 0, "echo worker")});
  const std::string network = executor::ContainerExecutor::AttemptNetworkName(a.job_uid, a.attempt);
  ASSERT_TRUE(engine_.CreateNetwork(network, {{"trainyard.instance", "left-behind"}}).ok());
  Status again = engine_.CreateNetwork(network, {});
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
  ASSERT_TRUE(LaunchAndWaitStarted(a));
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2, 60000);
  ASSERT_EQ(exits.size(), 2u);
  for (const auto& e : exits) EXPECT_EQ(e.exit_code, 0) << "pool " << e.pool;
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  (void)engine_.RemoveNetwork(network);
}

TEST_F(ContainerExecutorTest, ReplicasReachEachOtherByHostname) {
  ReplicasReachEachOtherByHostname();
}
TEST_F(WarmContainerExecutorTest, ReplicasReachEachOtherByHostname) {
  ReplicasReachEachOtherByHostname();
}
TEST_F(NativeContainerExecutorTest, ReplicasReachEachOtherByHostname) {
  ReplicasReachEachOtherByHostname();
}

// Each replica prints its own address and what /etc/hosts says of every peer.
constexpr char kReportAddresses[] =
    "echo \"addr $(hostname) $(ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1)\"; "
    "for h in workerpool0-0 workerpool1-0 workerpool1-1; do "
    "echo \"hosts $h $(grep -w \"$h\" /etc/hosts | awk '{print $1}' | head -n 1)\"; done; ";

// "<kind> <host> <ip>" lines of `messages` as host -> ip, for one kind.
std::map<std::string, std::string> AddressLines(const std::vector<std::string>& messages,
                                                const std::string& kind) {
  std::map<std::string, std::string> out;
  for (const std::string& m : messages) {
    std::istringstream in(m);
    std::string k, host, ip;
    if (in >> k >> host >> ip && k == kind) out[host] = ip;
  }
  return out;
}

// Peers are in /etc/hosts at fixed addresses before any replica runs, so a lookup
// made at once succeeds on the first try (no DNS race with a peer's creation),
// and a restarted replica comes back at the same address.
void ContainerExecutorTest::PeersResolveFromHostsAtFixedAddressesAtOnce() {
  // The server listens before anything else (one answer per connection, until
  // both clients were served); its second run (after a restart) only reports.
  ReplicaLaunch server = Replica(
      0, 0,
      std::string("if [ -f /ran ]; then ") + kReportAddresses + "exit 0; fi; touch /ran; " +
          "timeout 60 nc -ll -p 2222 -e sh -c 'read l; echo \"$l\" >> /tmp/got; echo pong' & " +
          "srv=$!; " + kReportAddresses +
          "i=0; until [ \"$(cat /tmp/got 2>/dev/null | wc -l)\" -ge 2 ]; do "
          "i=$((i+1)); [ $i -ge 600 ] && exit 4; sleep 0.1; done; cat /tmp/got; kill $srv");
  server.hostname = "workerpool0-0";
  // A client retries only a refused connection (sent before the server listens);
  // any other failure, such as an unresolved name, ends it at once. The replicas
  // start together, and on a loaded 2-core machine the server's container can take
  // seconds to listen (CI failed this test once; a client that gave up after 2 s of
  // refusals is the likeliest cause), so a refused client tries for up to a minute
  // and waits up to 10 s for the answer.
  std::string client_script =
      std::string(kReportAddresses) +
      "i=0; until out=$(echo \"ping from $(hostname)\" | nc -w 10 workerpool0-0 2222 2>/tmp/err); "
      "do case \"$(cat /tmp/err)\" in *refused*) ;; *) echo \"nc: $(cat /tmp/err)\"; exit 2;; "
      "esac; i=$((i+1)); [ $i -ge 600 ] && { echo gave up; exit 3; }; sleep 0.1; done; "
      "echo \"got $out\"";
  ReplicaLaunch client0 = Replica(1, 0, client_script);
  client0.hostname = "workerpool1-0";
  ReplicaLaunch client1 = Replica(1, 1, client_script);
  client1.hostname = "workerpool1-1";
  AttemptSpec a = NetworkedAttempt({server, client0, client1});
  ASSERT_TRUE(LaunchAndWaitStarted(a));
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 3, 60000);
  ASSERT_EQ(exits.size(), 3u);
  for (const auto& e : exits) {
    EXPECT_EQ(e.exit_code, 0) << "pool " << e.pool << " index " << e.index << ": "
                              << ::testing::PrintToString(sink_.Messages(uid_));
  }
  EXPECT_THAT(sink_.Messages(uid_, "workerpool0-0"),
              ::testing::IsSupersetOf({"ping from workerpool1-0", "ping from workerpool1-1"}));
  EXPECT_THAT(sink_.Messages(uid_, "workerpool1-0"), ::testing::Contains("got pong"));
  EXPECT_THAT(sink_.Messages(uid_, "workerpool1-1"), ::testing::Contains("got pong"));

  // Every replica sees the same table; each entry is that replica's real address;
  // addresses follow launch order.
  std::map<std::string, std::string> actual;
  for (const char* task : {"workerpool0-0", "workerpool1-0", "workerpool1-1"}) {
    auto own = AddressLines(sink_.Messages(uid_, task), "addr");
    ASSERT_EQ(own.count(task), 1u)
        << task << ": " << ::testing::PrintToString(sink_.Messages(uid_, task));
    actual[task] = own[task];
  }
  for (const char* task : {"workerpool0-0", "workerpool1-0", "workerpool1-1"}) {
    EXPECT_EQ(AddressLines(sink_.Messages(uid_, task), "hosts"), actual) << task;
  }
  auto last_octet = [](const std::string& ip) { return std::stoi(ip.substr(ip.rfind('.') + 1)); };
  EXPECT_LT(last_octet(actual["workerpool0-0"]), last_octet(actual["workerpool1-0"]));
  EXPECT_LT(last_octet(actual["workerpool1-0"]), last_octet(actual["workerpool1-1"]));

  // Restarted in place: same address, same hosts table.
  ASSERT_TRUE(ex_->RestartReplica(uid_, 1, 0, 0).ok());
  exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 4, 60000);
  ASSERT_EQ(exits.size(), 4u);
  EXPECT_EQ(exits[3].exit_code, 0);
  auto server_lines = sink_.Messages(uid_, "workerpool0-0");
  EXPECT_EQ(std::count(server_lines.begin(), server_lines.end(),
                       "addr workerpool0-0 " + actual["workerpool0-0"]),
            2)
      << ::testing::PrintToString(server_lines);
  for (const auto& [host, ip] : actual) {
    EXPECT_EQ(std::count(server_lines.begin(), server_lines.end(), "hosts " + host + " " + ip), 2)
        << host;
  }
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  EXPECT_FALSE(*engine_.NetworkExists(
      executor::ContainerExecutor::AttemptNetworkName(a.job_uid, a.attempt)));
  EXPECT_EQ(NetworksLeft(), 0u);
}
TEST_F(ContainerExecutorTest, PeersResolveFromHostsAtFixedAddressesAtOnce) {
  PeersResolveFromHostsAtFixedAddressesAtOnce();
}
TEST_F(WarmContainerExecutorTest, PeersResolveFromHostsAtFixedAddressesAtOnce) {
  PeersResolveFromHostsAtFixedAddressesAtOnce();
}
TEST_F(NativeContainerExecutorTest, PeersResolveFromHostsAtFixedAddressesAtOnce) {
  PeersResolveFromHostsAtFixedAddressesAtOnce();
}

// Spec §9: a restarted replica keeps its name, host name and network, so a peer
// that kept trying reaches it again by host name.
void ContainerExecutorTest::RestartedReplicaIsReachableByItsHostnameAgain() {
  // B serves only in its second run; its first run exits at once.
  ReplicaLaunch server =
      Replica(0, 0,
              "if [ -f /ran ]; then nc -l -p 2222 -e echo pong; echo served; exit 0; fi; "
              "touch /ran; exit 1");
  server.hostname = "workerpool0-0";
  ReplicaLaunch client =
      Replica(1, 0,
              "i=0; until out=$(nc -w 1 workerpool0-0 2222 </dev/null 2>/dev/null) && "
              "[ \"$out\" = pong ]; do i=$((i+1)); [ $i -ge 300 ] && exit 1; sleep 0.1; done; "
              "echo got $out");
  client.hostname = "workerpool1-0";
  AttemptSpec a = NetworkedAttempt({server, client});
  ASSERT_TRUE(LaunchAndWaitStarted(a));
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  ASSERT_EQ(exits[0].pool, 0);
  ASSERT_EQ(exits[0].exit_code, 1);

  ASSERT_TRUE(ex_->RestartReplica(uid_, 1, 0, 0).ok());
  exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 3, 60000);
  ASSERT_EQ(exits.size(), 3u);
  for (size_t i = 1; i < exits.size(); ++i) {
    EXPECT_EQ(exits[i].exit_code, 0) << "pool " << exits[i].pool;
  }
  EXPECT_THAT(sink_.Messages(uid_, "workerpool0-0"), ::testing::ElementsAre("served"));
  EXPECT_THAT(sink_.Messages(uid_, "workerpool1-0"), ::testing::ElementsAre("got pong"));
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  EXPECT_FALSE(*engine_.NetworkExists(
      executor::ContainerExecutor::AttemptNetworkName(a.job_uid, a.attempt)));
  EXPECT_EQ(NetworksLeft(), 0u);
}
TEST_F(ContainerExecutorTest, RestartedReplicaIsReachableByItsHostnameAgain) {
  RestartedReplicaIsReachableByItsHostnameAgain();
}
TEST_F(WarmContainerExecutorTest, RestartedReplicaIsReachableByItsHostnameAgain) {
  RestartedReplicaIsReachableByItsHostnameAgain();
}
TEST_F(NativeContainerExecutorTest, RestartedReplicaIsReachableByItsHostnameAgain) {
  RestartedReplicaIsReachableByItsHostnameAgain();
}

// The engine joins a line the first run left unfinished with the next run's first
// line on that stream; the capture must still take each run's output once.
TEST_F(ContainerExecutorTest, RestartAfterAnUnfinishedLineLosesNothing) {
  ASSERT_TRUE(ex_->Launch(Attempt({Replica(0, 0,
                                           "if [ -f /ran ]; then echo err >&2; echo second; "
                                           "echo third; exit 0; fi; touch /ran; echo first; "
                                           "printf part; exit 3")}))
                  .ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("first", "part"));
  ASSERT_TRUE(ex_->RestartReplica(uid_, 1, 0, 0).ok());
  exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2);
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits[1].exit_code, 0);
  auto messages = sink_.Messages(uid_);
  // stderr and stdout are read apart, so "err" may come anywhere in the new run.
  ASSERT_EQ(messages.size(), 5u) << ::testing::PrintToString(messages);
  EXPECT_EQ(messages[0], "first");
  EXPECT_EQ(messages[1], "part");
  std::vector<std::string> stdout_lines;
  for (const auto& e : sink_.Entries(uid_)) {
    if (e.stream == logs::LogStream::kStdout) stdout_lines.push_back(e.message);
  }
  EXPECT_THAT(stdout_lines, ::testing::ElementsAre("first", "part", "second", "third"));
  EXPECT_THAT(messages, ::testing::Contains("err"));
}

TEST_F(ContainerExecutorTest, BindMountsWriteToTheHost) {
  char tmpl[] = "/tmp/ty-mount-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string ro_dir = dir + "-ro";
  std::filesystem::create_directories(ro_dir);
  ReplicaLaunch r = Replica(0, 0, "echo written > /out/result.txt && ! touch /in/denied");
  r.mounts = {{dir, "/out", false}, {ro_dir, "/in", true}};
  ASSERT_TRUE(ex_->Launch(Attempt({r})).ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 0);
  std::ifstream in(dir + "/result.txt");
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "written");
  EXPECT_FALSE(std::filesystem::exists(ro_dir + "/denied"));
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(ro_dir);
}

// Root in a replica keeps no way to gain privileges (no_new_privs) and lacks the
// capabilities training does not need (issue 19), through both engine APIs and from a
// warm sandbox. Read from the kernel inside the replica.
void ExpectHardened(executor::ContainerExecutor* ex, const std::string& uid,
                    const AttemptSpec& attempt, EventRecorder* events, RecordingLogSink* sink) {
  ASSERT_TRUE(ex->Launch(attempt).ok());
  auto exits = events->WaitFor(uid, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 0);
  std::string status;
  for (const auto& line : sink->Messages(uid)) status += line + "\n";
  EXPECT_NE(status.find("NoNewPrivs:\t1"), std::string::npos) << status;
  size_t at = status.find("CapBnd:\t");
  ASSERT_NE(at, std::string::npos) << status;
  const uint64_t bounding = std::stoull(status.substr(at + 8, 16), nullptr, 16);
  // CAP_SETPCAP 8, CAP_NET_RAW 13, CAP_SYS_CHROOT 18, CAP_MKNOD 27, CAP_SETFCAP 31.
  for (int bit : {8, 13, 18, 27, 31}) EXPECT_EQ((bounding >> bit) & 1, 0u) << "capability " << bit;
  EXPECT_EQ(bounding & 1, 1u) << "CAP_CHOWN is kept";
}

constexpr char kShowPrivileges[] = "grep -E '^(NoNewPrivs|CapBnd)' /proc/self/status";

TEST_F(ContainerExecutorTest, ReplicasRunWithoutNewPrivilegesOrNeedlessCapabilities) {
  ExpectHardened(ex_.get(), uid_, Attempt({Replica(0, 0, kShowPrivileges)}), &events_, &sink_);
}
TEST_F(WarmContainerExecutorTest, ReplicasRunWithoutNewPrivilegesOrNeedlessCapabilities) {
  ExpectHardened(ex_.get(), uid_, Attempt({Replica(0, 0, kShowPrivileges)}), &events_, &sink_);
}
TEST_F(NativeContainerExecutorTest, ReplicasRunWithoutNewPrivilegesOrNeedlessCapabilities) {
  ExpectHardened(ex_.get(), uid_, Attempt({Replica(0, 0, kShowPrivileges)}), &events_, &sink_);
}

TEST_F(ContainerExecutorTest, LargeBurstArrivesCompleteAndInOrder) {
  ASSERT_TRUE(ex_->Launch(Attempt({Replica(0, 0, "seq 1 20000")})).ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 60000);
  ASSERT_EQ(exits.size(), 1u);
  auto lines = sink_.Messages(uid_);
  ASSERT_EQ(lines.size(), 20000u);
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(lines[i], std::to_string(i + 1)) << "line " << i;
  auto entries = sink_.Entries(uid_);
  for (size_t i = 1; i < entries.size(); ++i) ASSERT_LT(entries[i - 1].time, entries[i].time);
}

TEST_F(ContainerExecutorTest, StartOverheadComparedWithPodmanRun) {
  int64_t start = MonotonicMicros();
  ASSERT_TRUE(ex_->Launch(Attempt({Replica(0, 0, "true")})).ok());
  auto launched = events_.WaitForLaunch(uid_);
  double launch_s = (MonotonicMicros() - start) / 1e6;
  ASSERT_TRUE(launched.has_value());
  ASSERT_EQ(launched->kind, ExecutorEventKind::kAttemptStarted) << launched->message;
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);

  start = MonotonicMicros();
  int rc = std::system(
      (std::string("podman run --rm --label ") + kTestLabel + "=1 " + kTestImage + " true")
          .c_str());
  double podman_s = (MonotonicMicros() - start) / 1e6;
  std::printf("[ timing ] Launch() -> kAttemptStarted (1 replica, busybox `true`): %.3f s\n",
              launch_s);
  std::printf("[ timing ] `podman run --rm %s true` wall time: %.3f s (rc %d)\n", kTestImage,
              podman_s, rc);
}

TEST_F(ContainerExecutorTest, RecoverReportsOomAndSignalOfExitedReplicas) {
  ASSERT_TRUE(ex_->Launch(Attempt({Replica(0, 0, "sh -c 'kill -9 $$'; exit $?")})).ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 137);
  EXPECT_EQ(exits[0].signal, 9);
  auto recovered = ex_->Recover();
  ASSERT_TRUE(recovered.ok());
  bool found = false;
  for (const auto& o : *recovered) {
    if (o.job_uid != uid_) continue;
    found = true;
    EXPECT_FALSE(o.running);
    EXPECT_EQ(o.exit_code, 137);
    EXPECT_EQ(o.signal, 9);
    EXPECT_FALSE(o.oom_killed);
  }
  EXPECT_TRUE(found);
}

TEST_F(ContainerExecutorTest, RecoverCapturesLinesWrittenWhileNoDaemonWatched) {
  ASSERT_TRUE(
      LaunchAndWaitStarted(Attempt({Replica(0, 0, "echo one; sleep 2; echo two; exit 4")})));
  // Let the watcher take "one" first, so Recover() must also drop what it already has.
  ASSERT_TRUE(sink_.WaitForMessage(uid_, "one", 10000));
  ex_.reset();  // The daemon goes away: watchers are aborted, the replica runs on.
  ASSERT_THAT(sink_.Messages(uid_), ::testing::Not(::testing::Contains("two")))
      << "the replica outran the test: the gap was not exercised";

  const std::string name = executor::ReplicaName(uid_, 1, 0, 0);
  bool exited = false;
  for (int i = 0; i < 300 && !exited; ++i) {
    auto state = engine_.InspectContainer(name);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    exited = !state->running;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(exited);

  auto ex = NewContainerExecutor(&sink_, events_.Callback());
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  ex_ = std::move(*ex);
  auto recovered = ex_->Recover();
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  // Checked right away: the lines must be in the sink when Recover() returns.
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("one", "two"));
  int mine = 0;
  for (const auto& o : *recovered) {
    if (o.job_uid != uid_) continue;
    ++mine;
    EXPECT_FALSE(o.running);
    EXPECT_EQ(o.exit_code, 4);
    EXPECT_EQ(o.signal, std::nullopt);
  }
  EXPECT_EQ(mine, 1);
  // A second Recover() (or one by yet another daemon) adds nothing.
  ASSERT_TRUE(ex_->Recover().ok());
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("one", "two"));
}

}  // namespace
}  // namespace ty::testing

namespace ty::testing {
namespace {

// Two daemons sharing one engine: each sees, stops and removes only its own replicas.
TEST(ContainerExecutorInstanceTest, ExecutorsOfOtherInstancesLeaveEachOthersReplicasAlone) {
  TY_REQUIRE_ENGINE_OR_SKIP();
  RecordingLogSink sink;
  EventRecorder events{&sink};
  auto make = [&](const std::string& instance) {
    executor::ContainerExecutor::Options o;
    o.clock = SystemClock::Get();
    o.random = SystemRandom::Get();
    o.engine_socket = EngineSocket();
    o.log_sink = &sink;
    o.instance = instance;
    auto ex = executor::ContainerExecutor::Create(o);
    EXPECT_TRUE(ex.ok()) << ex.status().ToString();
    return std::move(ex).value();
  };
  std::string uid = UniqueJobUid();
  auto a = make("instance-a-" + uid);
  auto b = make("instance-b-" + uid);
  a->SetEventCallback(events.Callback());
  executor::ReplicaLaunch r = TestReplica(uid, 0, 0);
  r.image = kTestImage;
  r.command = {"/bin/sh", "-c", "sleep 1000"};
  ASSERT_TRUE(a->Launch(TestAttempt(uid, {r})).ok());
  auto launched = events.WaitForLaunch(uid);
  ASSERT_TRUE(launched.has_value());
  ASSERT_EQ(launched->kind, executor::ExecutorEventKind::kAttemptStarted) << launched->message;

  auto seen_by = [&](executor::ContainerExecutor& ex) {
    auto recovered = ex.Recover();
    EXPECT_TRUE(recovered.ok());
    for (const auto& o : *recovered) {
      if (o.job_uid == uid) return true;
    }
    return false;
  };
  EXPECT_FALSE(seen_by(*b));
  EXPECT_TRUE(b->Cleanup(uid, 1).ok());  // Finds nothing of its own to remove.
  EXPECT_TRUE(seen_by(*a));

  ASSERT_TRUE(a->Stop(uid, 1, 1000000).ok());
  EXPECT_EQ(events.WaitFor(uid, executor::ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  EXPECT_TRUE(a->Cleanup(uid, 1).ok());
  EXPECT_FALSE(seen_by(*a));
  b.reset();
  a.reset();
  ContainerBackend().ForceClean(uid);
}

// ---- Warm pool (warm_pool.h) ------------------------------------------------

// A warm replica runs what the engine would have run (executor.h's Docker
// semantics over the test image's CMD ["/bin/sh"]), with the job's environment.
TEST_F(WarmContainerExecutorTest, RunsWhatTheEngineWouldRun) {
  ReplicaLaunch both = Replica(0, 0, "");
  both.command = {"/bin/echo"};
  both.args = {"command", "and", "args"};
  ReplicaLaunch alone = Replica(1, 0, "");
  alone.command = {"/bin/echo", "alone"};
  ReplicaLaunch args_only = Replica(1, 1, "");
  args_only.command = {};
  args_only.args = {"/bin/echo", "args replace CMD"};
  ReplicaLaunch image_default = Replica(1, 2, "");
  image_default.command = {};  // The image's /bin/sh, with no input: exits 0.
  ReplicaLaunch env = Replica(1, 3, "echo \"$TY_WARM\" \"$PATH\"");
  env.env = {{"TY_WARM", "a b=c"}};
  ReplicaLaunch missing = Replica(1, 4, "");
  missing.command = {"/no/such/program"};
  ASSERT_TRUE(LaunchAndWaitStarted(Attempt({both, alone, args_only, image_default, env, missing})));
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 6, 30000);
  ASSERT_EQ(exits.size(), 6u);
  std::map<std::string, int> codes;
  for (const auto& e : exits)
    codes["workerpool" + std::to_string(e.pool) + "-" + std::to_string(e.index)] = e.exit_code;
  EXPECT_THAT(sink_.Messages(uid_, "workerpool0-0"), ::testing::ElementsAre("command and args"));
  EXPECT_THAT(sink_.Messages(uid_, "workerpool1-0"), ::testing::ElementsAre("alone"));
  EXPECT_THAT(sink_.Messages(uid_, "workerpool1-1"), ::testing::ElementsAre("args replace CMD"));
  EXPECT_TRUE(sink_.Messages(uid_, "workerpool1-2").empty());
  EXPECT_EQ(codes["workerpool1-2"], 0);
  // The image's ENV (PATH) stays under the job's variables.
  EXPECT_THAT(sink_.Messages(uid_, "workerpool1-3"),
              ::testing::ElementsAre(::testing::StartsWith("a b=c /")));
  EXPECT_EQ(codes["workerpool1-4"], 127);
  EXPECT_THAT(sink_.Messages(uid_, "workerpool1-4"),
              ::testing::ElementsAre(HasSubstr("cannot run \"/no/such/program\"")));
}

// A gang made before its image name was pointed at a new image is not used: the
// attempt starts cold on the new image, and the stale gang goes.
TEST_F(WarmContainerExecutorTest, StaleImageFallsBackToAColdLaunch) {
  const std::string image = "localhost/trainyard/warm-stale:" + uid_;
  ASSERT_EQ(std::system(("podman tag " + std::string(kTestImage) + " " + image).c_str()), 0);
  ReplicaLaunch r = Replica(0, 0, "cat /marker 2>/dev/null || echo no marker");
  r.image = image;
  AttemptSpec a = Attempt({r});
  ASSERT_TRUE(ex_->PrewarmForTest(a).ok());
  EXPECT_EQ(ex_->WarmSandboxesForTest(), 1u);
  // A new image under the same name (a push to the tag).
  const std::string builder = "ty-warm-stale-" + uid_;
  ASSERT_EQ(
      std::system(("podman run --name " + builder + " " + image +
                   " sh -c 'echo new image > /marker' >/dev/null && podman commit -q " + builder +
                   " " + image + " >/dev/null && podman rm " + builder + " >/dev/null")
                      .c_str()),
      0);
  ASSERT_TRUE(ex_->Launch(a).ok());
  auto launched = events_.WaitForLaunch(uid_);
  ASSERT_TRUE(launched.has_value());
  ASSERT_EQ(launched->kind, ExecutorEventKind::kAttemptStarted) << launched->message;
  EXPECT_EQ(launched->message, "");  // Not from the warm gang.
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("new image"));
  EXPECT_EQ(ex_->WarmSandboxesForTest(), 0u);
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  auto left = engine_.ListContainers({InstanceLabel()});
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
  EXPECT_EQ(NetworksLeft(), 0u);
  std::system(("podman rmi -f " + image + " >/dev/null 2>&1").c_str());
}

// With refill on, a launch leaves a gang of its shape behind for the next one,
// and the pool's gangs go with the executor.
TEST_F(WarmContainerExecutorTest, ALaunchRefillsThePoolForItsShape) {
  ex_.reset();
  auto ex = NewWarmExecutor(/*refill=*/true);
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  ex_ = std::move(*ex);
  AttemptSpec first = NetworkedAttempt({Replica(0, 0, "echo first"), Replica(1, 0, "true")});
  ASSERT_TRUE(ex_->Launch(first).ok());
  auto launched = events_.WaitForLaunch(uid_);
  ASSERT_TRUE(launched.has_value());
  EXPECT_EQ(launched->message, "");  // Cold: nothing was warm yet.
  for (int i = 0; i < 300 && ex_->WarmSandboxesForTest() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(ex_->WarmSandboxesForTest(), 2u);

  std::string second_uid = UniqueJobUid();
  AttemptSpec second =
      TestAttempt(second_uid, {TestReplica(second_uid, 0, 0), TestReplica(second_uid, 1, 0)});
  second.peers_talk = true;
  for (ReplicaLaunch& r : second.replicas) {
    r.image = kTestImage;
    r.command = {"/bin/sh", "-c", "echo second"};
  }
  ASSERT_TRUE(ex_->Launch(second).ok());
  auto warm = events_.WaitForLaunch(second_uid);
  ASSERT_TRUE(warm.has_value());
  EXPECT_EQ(warm->message, "started from warm sandboxes");
  EXPECT_EQ(events_.WaitFor(second_uid, ExecutorEventKind::kReplicaExited, 2).size(), 2u);
  EXPECT_THAT(sink_.Messages(second_uid, "workerpool0-0"), ::testing::ElementsAre("second"));
  EXPECT_TRUE(ex_->Cleanup(second_uid, 1).ok());
  EXPECT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2).size(), 2u);
  EXPECT_TRUE(ex_->Cleanup(uid_, 1).ok());
  ex_.reset();  // Removes the gang made after the second launch.
  auto left = engine_.ListContainers({InstanceLabel()});
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
  EXPECT_EQ(NetworksLeft(), 0u);
}

// Sandboxes a previous daemon of the same instance left untaken are removed when
// a new one recovers; taken ones stay replicas.
TEST_F(WarmContainerExecutorTest, RecoverRemovesUntakenSandboxesOfItsInstance) {
  AttemptSpec taken = Attempt({Replica(0, 0, "sleep 30")});
  ASSERT_TRUE(LaunchAndWaitStarted(taken));
  AttemptSpec shape = NetworkedAttempt({Replica(0, 0, "true"), Replica(1, 0, "true")});
  ASSERT_TRUE(ex_->PrewarmForTest(shape).ok());
  auto before = engine_.ListContainers({InstanceLabel()});
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->size(), 3u);

  auto next = NewWarmExecutor();  // The restarted daemon.
  ASSERT_TRUE(next.ok());
  auto recovered = (*next)->Recover();
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  ASSERT_EQ(recovered->size(), 1u);
  EXPECT_EQ((*recovered)[0].name, executor::ReplicaName(uid_, 1, 0, 0));
  EXPECT_TRUE((*recovered)[0].running);
  auto after = engine_.ListContainers({InstanceLabel()});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), 1u);
  EXPECT_EQ(NetworksLeft(), 0u);
  ASSERT_TRUE((*next)->Stop(uid_, 1, 1000000).ok());
  ASSERT_TRUE((*next)->Cleanup(uid_, 1).ok());
}

// Issue 31: a daemon that dies between the hand-overs of a warm gang's launches
// leaves one replica run and one sandbox waiting with its launch prepared. Recovery
// says the second never started; starting it in place runs it, with its own command.
// Before, that start was refused ("the replica is running": the sandbox's init waits)
// and the attempt failed for a daemon's death.
TEST_F(WarmContainerExecutorTest, AReplicaADyingDaemonLeftUnlaunchedStartsInPlace) {
  dies_before_handing_over_ = 1;
  ex_.reset();
  auto dying = NewWarmExecutor();
  ASSERT_TRUE(dying.ok()) << dying.status().ToString();
  ex_ = std::move(*dying);
  AttemptSpec a = NetworkedAttempt({Replica(0, 0, "echo zero"), Replica(1, 0, "echo one; exit 5")});
  ASSERT_TRUE(LaunchAndWaitStarted(a));
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  ex_.reset();  // The daemon died before handing replica 1 its launch.
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("zero"));

  dies_before_handing_over_.reset();
  auto next = NewWarmExecutor();
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ex_ = std::move(*next);
  auto recovered = ex_->Recover();
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  ASSERT_EQ(recovered->size(), 2u);
  for (const executor::ObservedReplica& o : *recovered) {
    EXPECT_FALSE(o.running) << o.name;
    EXPECT_EQ(o.exit_code, o.pool == 0 ? 0 : executor::ObservedReplica::kNeverStarted) << o.name;
  }
  ASSERT_TRUE(ex_->RestartReplica(uid_, 1, 1, 0).ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2);
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits[1].pool, 1);
  EXPECT_EQ(exits[1].exit_code, 5);
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("zero", "one"));
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  EXPECT_EQ(NetworksLeft(), 0u);
}

}  // namespace
}  // namespace ty::testing
