// EngineApiClient: the Docker Engine API (v1.41) over a unix socket, as served
// by Docker and by `podman system service` (podman 4.3 here; scripts/setup starts it).
//
// Each call uses its own libcurl easy handle, so one client may be used from any
// number of threads at once; non-streaming calls carry a timeout, streaming calls
// (logs, wait) can be aborted through a caller-owned flag.
//
// Errors: Unavailable when the socket does not answer, NotFound for 404,
// AlreadyExists for 409, InvalidArgument for other 4xx, Internal for 5xx and
// unparsable answers; the message carries the engine's own `message`.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "common/files.h"  // UrlEncode
#include "executor/container/engine_client.h"

namespace ty::executor {

class EngineApiClient final : public EngineClient {
 public:
  // `socket_path`: e.g. "/run/podman/podman.sock". Calls curl_global_init once.
  explicit EngineApiClient(std::string socket_path, int request_timeout_ms = 30000);

  const std::string& socket_path() const { return socket_path_; }

  // EngineClient (see there); a loopback registry may speak plain HTTP on pull,
  // as Docker allows by default.
  Status Ping() override;
  Result<bool> ImageExists(const std::string& image) override;
  Result<ImageConfig> InspectImage(const std::string& image) override;
  Status PullImage(const std::string& image) override;
  Status PullImagePlainHttp(const std::string& image, const RegistryLogin& login) override;
  Status TagImage(const std::string& source, const std::string& target) override;
  Result<std::vector<ImageSummary>> ListImages(const std::string& reference) override;
  Status RemoveImage(const std::string& name) override;
  Status CreateNetwork(const std::string& name,
                       const std::map<std::string, std::string>& labels) override;
  Status RemoveNetwork(const std::string& name) override;
  Result<bool> NetworkExists(const std::string& name) override;
  Result<std::vector<NetworkSubnet>> NetworkSubnets(const std::string& name) override;
  Result<std::vector<std::string>> ListNetworks(
      const std::vector<std::string>& label_filters) override;
  Result<std::string> CreateContainer(const std::string& name,
                                      const std::string& body_json) override;
  Result<std::string> CreateContainerLibpod(const std::string& name,
                                            const std::string& body_json) override;
  Result<bool> SpeaksLibpod() override;
  Status StartContainer(const std::string& id) override;
  Result<ContainerState> InspectContainer(const std::string& id) override;
  Result<int> WaitContainer(const std::string& id, const std::atomic<bool>* cancel) override;
  Status KillContainer(const std::string& id, int signal) override;
  Status StopContainer(const std::string& id, int timeout_s) override;
  Status CommitContainer(const std::string& id, const std::string& repo,
                         const std::string& tag) override;
  Status RemoveContainer(const std::string& id) override;
  Result<std::vector<ContainerSummary>> ListContainers(
      const std::vector<std::string>& label_filters) override;
  Status StreamLogs(const std::string& id, bool follow, int64_t since_s,
                    const LogDemuxer::LineCallback& on_line, const std::atomic<bool>* cancel,
                    bool flush_partial = true) override;
  // POST /containers/{id}/exec, then /exec/{id}/start upgraded to a raw stream on a
  // connection of its own (engine_terminal.cc).
  Result<TerminalExec> StartTerminal(const std::string& id, const std::vector<std::string>& cmd,
                                     const std::vector<std::string>& env) override;
  Status ResizeTerminal(const std::string& exec_id, int rows, int cols) override;

 private:
  // The upgrade of `POST /exec/{id}/start` on a new connection to the socket: the
  // connection, and what followed the answer's header.
  Result<TerminalExec> AttachTerminal(const std::string& exec_id);
  struct Response {
    long status = 0;
    std::string body;
  };
  // `on_data`: streams the body instead of collecting it. `timeout_ms` 0 = none.
  Result<Response> Call(const std::string& method, const std::string& path,
                        const std::string* body_json, long timeout_ms,
                        const std::function<void(std::string_view)>* on_data,
                        const std::atomic<bool>* cancel,
                        const std::vector<std::string>& extra_headers = {});
  static bool IsLoopbackRegistry(const std::string& repo);
  Status PullInsecureLoopback(const std::string& image, const std::string& first_error,
                              const RegistryLogin& login = {});
  // Maps a non-2xx answer to a Status naming `what`.
  static Status ErrorFrom(const Response& r, const std::string& what);
  // POST `body_json` to a create endpoint; the new container's id.
  Result<std::string> CreateAt(const std::string& path, const std::string& name,
                               const std::string& body_json);

  std::string socket_path_;
  int request_timeout_ms_;
};

}  // namespace ty::executor
