// EngineClient: the container engine calls the executor needs (ping, images,
// networks, containers, log streaming), what they return, and the log stream
// demultiplexer. The real engine is EngineApiClient (engine_api_client.h).
//
// Errors: Unavailable when the engine does not answer, NotFound, AlreadyExists
// for a name in use, InvalidArgument for a refused request, Internal otherwise;
// the message carries the engine's own.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace ty::executor {

// Splits a container log stream into lines. The engine sends either Docker's
// multiplexed format (8-byte header: stream id 1 stdout / 2 stderr, 3 zero bytes,
// big-endian payload length) or, for TTY containers, the raw bytes; which one is
// decided from the first 8 bytes (a multiplexed stream starts with 0, 1 or 2 and
// three zero bytes, which no text line does). Lines may span frames; a partial
// line is kept per stream until its newline or Finish(). With `timestamps`, every
// frame starts with "<RFC 3339 time> "; an engine that splits a long line (podman
// when conmon read half a line, Docker past 16 KiB) sends the rest in a new frame
// with its own time, which is dropped so the line is rejoined intact.
// With `frames_only` (containers without a TTY, which every replica is) a stream
// that is not multiplexed is no log at all: podman 4.3 writes an error body into a
// 200 response when it fails after sending the status (its inspect of a container
// that is just exiting); those bytes are kept in unframed(), never emitted as lines.
// Not thread-safe.
class LogDemuxer {
 public:
  // `stream` is 1 (stdout) or 2 (stderr); `line` has no trailing newline.
  using LineCallback = std::function<void(int stream, std::string_view line)>;
  explicit LogDemuxer(LineCallback on_line, bool timestamps = false, bool frames_only = false)
      : on_line_(std::move(on_line)), timestamps_(timestamps), frames_only_(frames_only) {}

  void Feed(std::string_view bytes);
  // Emits what is left of unterminated lines (a program that ended without "\n").
  void Finish();
  // With `frames_only`: the start (up to 4 KiB) of a stream that was not multiplexed.
  const std::string& unframed() const { return unframed_; }

 private:
  void AppendPayload(int stream, std::string_view payload);

  LineCallback on_line_;
  bool timestamps_;
  bool frames_only_;
  std::string unframed_;
  enum class Mode { kUnknown, kMultiplexed, kRaw } mode_ = Mode::kUnknown;
  std::string pending_;      // Undecided bytes / incomplete frame header.
  int frame_stream_ = 0;     // Current frame's stream.
  uint32_t frame_left_ = 0;  // Payload bytes of the current frame not yet seen.
  std::string partial_[3];   // Unterminated line per stream (index 1, 2; 0 unused).
  bool skip_time_[3] = {};   // Drop the time prefix of a continuation frame.
};

// An interactive process the engine started in a running container on a terminal of
// its own (an exec with a TTY), attached through an upgraded connection.
struct TerminalExec {
  std::string id;     // The engine's exec id.
  int fd = -1;        // The connection, now raw terminal bytes both ways; the caller closes it.
  std::string early;  // Bytes that came with the upgrade's answer (the first prompt).
  int pid = 0;        // The process's host pid (0 when the engine does not say).
};

struct ImageSummary {
  std::string id;
  std::vector<std::string> tags;  // "repo:tag"
  int64_t created = 0;            // Unix seconds.
};

struct ContainerSummary {
  std::string id;
  std::string name;   // Without the leading '/'.
  std::string state;  // "created", "running", "exited", ...
  std::map<std::string, std::string> labels;
  // Its IPv4 addresses, one per network (NetworkSettings.Networks; podman also names
  // the network a container joined through another's: a network slot's).
  std::vector<std::string> addresses;

  // The label's value; "" when it has none.
  std::string Label(const char* key) const {
    auto it = labels.find(key);
    return it == labels.end() ? std::string() : it->second;
  }
};

// One address range of a network, as the engine's IPAM chose it.
struct NetworkSubnet {
  std::string subnet;   // CIDR: "10.89.0.0/24" (or an IPv6 prefix).
  std::string gateway;  // "10.89.0.1"; "" when the engine names none.
};

// What an image runs by default, and which image a name stands for now.
struct ImageConfig {
  std::string id;                       // Content id ("sha256:..." or bare hex).
  std::vector<std::string> entrypoint;  // Config.Entrypoint; empty when none.
  std::vector<std::string> cmd;         // Config.Cmd; empty when none.
  // RepoDigests: "repository@sha256:..." for each registry manifest it was pulled by or
  // pushed as; empty for an image only built here.
  std::vector<std::string> repo_digests;
};

struct ContainerState {
  std::string id;
  std::string status;  // "created", "running", "exited", ...
  bool running = false;
  int exit_code = 0;
  bool oom_killed = false;
  int pid = 0;                 // Host pid of its first process while running; 0 otherwise.
  TimeMicros started_at = 0;   // State.StartedAt of its last start; 0 if never started.
  TimeMicros finished_at = 0;  // State.FinishedAt once exited; 0 if unknown.
};

// The container engine as the executor uses it. The real one is EngineApiClient
// (engine_api_client.h); tests of executor logic use a fake (tests/fakes) so that
// failures at each call can be provoked without podman. Implementations are
// thread-safe: the executor calls them from launch, watcher and API threads at once.
// A registry credential for a pull (Docker's X-Registry-Auth); no username = none.
struct RegistryLogin {
  std::string username;
  std::string password;
};

class EngineClient {
 public:
  virtual ~EngineClient() = default;

  // OK when the engine answers.
  virtual Status Ping() = 0;

  // True when the engine has `image` locally.
  virtual Result<bool> ImageExists(const std::string& image) = 0;
  // NotFound when the engine lacks `image`.
  virtual Result<ImageConfig> InspectImage(const std::string& image) = 0;
  // Pulls `image` ("host:port/repo:tag", "repo@sha256:..."); the engine's error
  // becomes the Status message.
  virtual Status PullImage(const std::string& image) = 0;
  // Pulls `image` from a registry known to speak plain HTTP (the daemon's own, at any
  // address: on a cluster it is not on loopback), with `login` when it has a username
  // (the engine then asks the registry's token service with it).
  virtual Status PullImagePlainHttp(const std::string& image, const RegistryLogin& login) = 0;
  // Gives the local image `source` the further name `target` ("repo:tag").
  virtual Status TagImage(const std::string& source, const std::string& target) = 0;
  // The local images named `reference` (a repository: "localhost/trainyard/packages").
  virtual Result<std::vector<ImageSummary>> ListImages(const std::string& reference) = 0;
  // Removes the name (the image once no name is left); FailedPrecondition while a
  // container uses it, NotFound if there is no such name.
  virtual Status RemoveImage(const std::string& name) = 0;

  // AlreadyExists if a network of that name exists.
  virtual Status CreateNetwork(const std::string& name,
                               const std::map<std::string, std::string>& labels) = 0;
  // OK if it does not exist.
  virtual Status RemoveNetwork(const std::string& name) = 0;
  virtual Result<bool> NetworkExists(const std::string& name) = 0;
  // The subnets of the network's IPAM config. NotFound if it does not exist.
  virtual Result<std::vector<NetworkSubnet>> NetworkSubnets(const std::string& name) = 0;
  // Names of the networks carrying every `label_filters` entry ("k" or "k=v").
  virtual Result<std::vector<std::string>> ListNetworks(
      const std::vector<std::string>& label_filters) = 0;

  // `body` is the JSON of `POST /containers/create`. Returns the container id.
  // AlreadyExists when a container has that name.
  virtual Result<std::string> CreateContainer(const std::string& name,
                                              const std::string& body_json) = 0;
  // The same through podman's native API: `body` is a SpecGenerator (POST
  // /libpod/containers/create), naming the container itself.
  virtual Result<std::string> CreateContainerLibpod(const std::string& name,
                                                    const std::string& body_json) = 0;
  // Whether the engine is podman, i.e. answers its native API too.
  virtual Result<bool> SpeaksLibpod() = 0;
  virtual Status StartContainer(const std::string& id) = 0;
  // NotFound if the container does not exist.
  virtual Result<ContainerState> InspectContainer(const std::string& id) = 0;
  // Blocks until the container stops; returns its exit code. Cancelled when
  // `*cancel` becomes true.
  virtual Result<int> WaitContainer(const std::string& id, const std::atomic<bool>* cancel) = 0;
  virtual Status KillContainer(const std::string& id, int signal) = 0;
  // SIGTERM (the image's stop signal), SIGKILL after `timeout_s`; returns once the
  // container stopped. OK if it was not running.
  virtual Status StopContainer(const std::string& id, int timeout_s) = 0;
  // Forced, with its volumes. OK if it does not exist.
  virtual Status RemoveContainer(const std::string& id) = 0;
  // Saves a stopped container's filesystem as the image `repo:tag`.
  virtual Status CommitContainer(const std::string& id, const std::string& repo,
                                 const std::string& tag) = 0;
  // Containers (all states) carrying every `label_filters` entry ("k" or "k=v").
  virtual Result<std::vector<ContainerSummary>> ListContainers(
      const std::vector<std::string>& label_filters) = 0;

  // Streams the container's stdout+stderr with timestamps. `follow`: until the
  // container stops. `since_s`: only lines at or after this Unix second (0 = all).
  // Lines arrive through `on_line` with the engine's RFC 3339 timestamp prefix
  // ("2024-01-01T00:00:00.123Z message"). Cancelled when `*cancel` becomes true.
  // With `flush_partial` false an unterminated last line is left out (the replica
  // is still writing it); a later read from an earlier second returns it whole.
  virtual Status StreamLogs(const std::string& id, bool follow, int64_t since_s,
                            const LogDemuxer::LineCallback& on_line,
                            const std::atomic<bool>* cancel, bool flush_partial = true) = 0;

  // Runs `cmd` in the running container `id` on a new terminal (never privileged, as
  // the container's own user), attached. FailedPrecondition when it is not running.
  // Engines that cannot say Unimplemented.
  virtual Result<TerminalExec> StartTerminal(const std::string& id,
                                             const std::vector<std::string>& cmd,
                                             const std::vector<std::string>& env) {
    (void)id, (void)cmd, (void)env;
    return Status(StatusCode::kUnimplemented, "this engine runs no terminals");
  }
  // Sets the size of a StartTerminal's terminal.
  virtual Status ResizeTerminal(const std::string& exec_id, int rows, int cols) {
    (void)exec_id, (void)rows, (void)cols;
    return Status(StatusCode::kUnimplemented, "this engine runs no terminals");
  }
};

}  // namespace ty::executor
