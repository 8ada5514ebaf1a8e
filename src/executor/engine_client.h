// EngineClient: the Docker Engine API (v1.41) over a unix socket, as served by
// Docker and by `podman system service` (shared/notes/containers-here.md).
//
// Only the calls ContainerExecutor needs: ping, images, networks, containers and
// log streaming. Each call uses its own libcurl easy handle, so one client may be
// used from any number of threads at once; non-streaming calls carry a timeout,
// streaming calls (logs, wait) can be aborted through a caller-owned flag.
//
// Errors: Unavailable when the socket does not answer, NotFound for 404,
// AlreadyExists for 409, InvalidArgument for other 4xx, Internal for 5xx and
// unparsable answers; the message carries the engine's own `message`.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/files.h"  // UrlEncode
#include "common/status.h"

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
// Not thread-safe.
class LogDemuxer {
 public:
  // `stream` is 1 (stdout) or 2 (stderr); `line` has no trailing newline.
  using LineCallback = std::function<void(int stream, std::string_view line)>;
  explicit LogDemuxer(LineCallback on_line, bool timestamps = false)
      : on_line_(std::move(on_line)), timestamps_(timestamps) {}

  void Feed(std::string_view bytes);
  // Emits what is left of unterminated lines (a program that ended without "\n").
  void Finish();

 private:
  void AppendPayload(int stream, std::string_view payload);

  LineCallback on_line_;
  bool timestamps_;
  enum class Mode { kUnknown, kMultiplexed, kRaw } mode_ = Mode::kUnknown;
  std::string pending_;      // Undecided bytes / incomplete frame header.
  int frame_stream_ = 0;     // Current frame's stream.
  uint32_t frame_left_ = 0;  // Payload bytes of the current frame not yet seen.
  std::string partial_[3];   // Unterminated line per stream (index 1, 2; 0 unused).
  bool skip_time_[3] = {};   // Drop the time prefix of a continuation frame.
};

struct ContainerSummary {
  std::string id;
  std::string name;   // Without the leading '/'.
  std::string state;  // "created", "running", "exited", ...
  std::map<std::string, std::string> labels;

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
};

struct ContainerState {
  std::string id;
  std::string status;  // "created", "running", "exited", ...
  bool running = false;
  int exit_code = 0;
  bool oom_killed = false;
  int pid = 0;  // Host pid of its first process while running; 0 otherwise.
};

class EngineClient {
 public:
  // `socket_path`: e.g. "/run/podman/podman.sock". Calls curl_global_init once.
  explicit EngineClient(std::string socket_path, int request_timeout_ms = 30000);

  const std::string& socket_path() const { return socket_path_; }

  // OK when the engine answers `GET /_ping`.
  Status Ping();

  // True when the engine has `image` locally.
  Result<bool> ImageExists(const std::string& image);
  // NotFound when the engine lacks `image`.
  Result<ImageConfig> InspectImage(const std::string& image);
  // Pulls `image` ("host:port/repo:tag", "repo@sha256:..."); the engine's error
  // (sent inside a 200 progress stream) becomes the Status message. A registry on a
  // loopback address may speak plain HTTP, as Docker allows by default.
  Status PullImage(const std::string& image);

  // AlreadyExists if a network of that name exists.
  Status CreateNetwork(const std::string& name, const std::map<std::string, std::string>& labels);
  // OK if it does not exist.
  Status RemoveNetwork(const std::string& name);
  Result<bool> NetworkExists(const std::string& name);
  // The subnets of the network's IPAM config. NotFound if it does not exist.
  Result<std::vector<NetworkSubnet>> NetworkSubnets(const std::string& name);
  // Names of the networks carrying every `label_filters` entry ("k" or "k=v").
  Result<std::vector<std::string>> ListNetworks(const std::vector<std::string>& label_filters);

  // `body` is the JSON of `POST /containers/create`. Returns the container id.
  Result<std::string> CreateContainer(const std::string& name, const std::string& body_json);
  Status StartContainer(const std::string& id);
  // NotFound if the container does not exist.
  Result<ContainerState> InspectContainer(const std::string& id);
  // Blocks until the container stops; returns its exit code. Cancelled when
  // `*cancel` becomes true.
  Result<int> WaitContainer(const std::string& id, const std::atomic<bool>* cancel);
  Status KillContainer(const std::string& id, int signal);
  // SIGTERM (the image's stop signal), SIGKILL after `timeout_s`; returns once the
  // container stopped. OK if it was not running.
  Status StopContainer(const std::string& id, int timeout_s);
  // force=true, v=true. OK if it does not exist.
  Status RemoveContainer(const std::string& id);
  // Containers (all states) carrying every `label_filters` entry ("k" or "k=v").
  Result<std::vector<ContainerSummary>> ListContainers(
      const std::vector<std::string>& label_filters);

  // Streams the container's stdout+stderr with timestamps. `follow`: until the
  // container stops. `since_s`: only lines at or after this Unix second (0 = all).
  // Lines arrive through `on_line` with the engine's RFC 3339 timestamp prefix
  // ("2024-01-01T00:00:00.123Z message"). Cancelled when `*cancel` becomes true.
  // With `flush_partial` false an unterminated last line is left out (the replica
  // is still writing it); a later read from an earlier second returns it whole.
  Status StreamLogs(const std::string& id, bool follow, int64_t since_s,
                    const LogDemuxer::LineCallback& on_line, const std::atomic<bool>* cancel,
                    bool flush_partial = true);

 private:
  struct Response {
    long status = 0;
    std::string body;
  };
  // `on_data`: streams the body instead of collecting it. `timeout_ms` 0 = none.
  Result<Response> Call(const std::string& method, const std::string& path,
                        const std::string* body_json, long timeout_ms,
                        const std::function<void(std::string_view)>* on_data,
                        const std::atomic<bool>* cancel);
  static bool IsLoopbackRegistry(const std::string& repo);
  Status PullInsecureLoopback(const std::string& image, const std::string& first_error);
  // Maps a non-2xx answer to a Status naming `what`.
  static Status ErrorFrom(const Response& r, const std::string& what);

  std::string socket_path_;
  int request_timeout_ms_;
};

}  // namespace ty::executor
