// LoopbackRegistry: a real OCI registry (Debian's `docker-registry`, distribution
// 2.8; scripts/setup installs it) run by a test through the daemon's own supervisor
// (executor/container/local_registry.h), on a free 127.0.0.1 port with a temporary storage
// directory, so image pulls are tested end
// to end without any outside registry. Plain HTTP and no auth, as the project's
// "Artifact Registry" stand-in (local_registry.h). The packaged
// service (port 5000, htpasswd auth) is not used.
//
// Also the engine calls a test needs to put an image there (tag, push, untag), made
// over the same Docker Engine API socket the executor uses, so the image lands in
// the registry of the very engine under test. Not thread-safe.
#pragma once

#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "executor/container/engine_api_client.h"
#include "executor/container/local_registry.h"

namespace ty::testing {

inline constexpr char kRegistryBinary[] = "/usr/bin/docker-registry";

namespace internal {

struct HttpAnswer {
  long status = 0;
  std::string body;
};

inline size_t CollectBody(char* data, size_t size, size_t nmemb, void* user) {
  static_cast<std::string*>(user)->append(data, size * nmemb);
  return size * nmemb;
}

// One HTTP request; `unix_socket` "" = plain TCP. Unavailable when nothing answers.
inline Result<HttpAnswer> HttpCall(const std::string& method, const std::string& url,
                                   const std::string& unix_socket, long timeout_ms) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Internal("curl_easy_init failed");
  HttpAnswer answer;
  // Docker requires an auth header on push even for a registry without auth; "{}"
  // says "no credentials" and podman ignores it.
  curl_slist* headers = curl_slist_append(nullptr, "X-Registry-Auth: e30=");
  if (!unix_socket.empty()) curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, unix_socket.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &CollectBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) return Unavailable(method + " " + url + ": " + curl_easy_strerror(rc));
  return answer;
}

inline Result<HttpAnswer> EngineCall(const std::string& socket, const std::string& method,
                                     const std::string& path) {
  return HttpCall(method, "http://engine/v1.41" + path, socket, 5L * 60 * 1000);
}

// Splits "host:port/repo:tag" at the tag's colon (the port's colon comes before a '/').
inline void SplitTag(const std::string& image, std::string* repo, std::string* tag) {
  size_t colon = image.rfind(':');
  size_t slash = image.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    *repo = image.substr(0, colon);
    *tag = image.substr(colon + 1);
  } else {
    *repo = image;
    *tag = "latest";
  }
}

// A free TCP port on 127.0.0.1 (the kernel's pick; free again once closed, so a
// caller must cope with losing a race for it).
inline int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace internal

// Removes the local tag `image` from the engine; OK if it is not there. The image
// itself stays while other tags name it.
inline Status UntagImage(const std::string& engine_socket, const std::string& image) {
  ASSIGN_OR_RETURN(internal::HttpAnswer r,
                   internal::EngineCall(engine_socket, "DELETE", "/images/" + image));
  if (r.status == 200 || r.status == 404) return Status::Ok();
  return Internal("untag " + image + ": HTTP " + std::to_string(r.status) + ": " + r.body);
}

// One tag and push of PushImage.
inline Status TagAndPushOnce(const std::string& engine_socket, const std::string& source,
                             const std::string& target, const std::string& repo,
                             const std::string& tag) {
  ASSIGN_OR_RETURN(internal::HttpAnswer tagged,
                   internal::EngineCall(engine_socket, "POST",
                                        "/images/" + source + "/tag?repo=" + ty::UrlEncode(repo) +
                                            "&tag=" + ty::UrlEncode(tag)));
  if (tagged.status != 201 && tagged.status != 200) {
    return Internal("tag " + source + " as " + target + ": HTTP " + std::to_string(tagged.status) +
                    ": " + tagged.body);
  }
  // `tlsVerify=false` is podman's knob for a plain-HTTP registry; Docker ignores
  // it and speaks plain HTTP to loopback registries anyway. Errors come inside the
  // 200 progress stream.
  ASSIGN_OR_RETURN(internal::HttpAnswer pushed,
                   internal::EngineCall(
                       engine_socket, "POST",
                       "/images/" + repo + "/push?tag=" + ty::UrlEncode(tag) + "&tlsVerify=false"));
  Status untagged = UntagImage(engine_socket, target);
  if (pushed.status != 200 || pushed.body.find("\"error\"") != std::string::npos) {
    return Internal("push " + target + ": HTTP " + std::to_string(pushed.status) + ": " +
                    pushed.body);
  }
  return untagged;
}

// Pushes the local image `source` to `target` ("127.0.0.1:PORT/repo:tag") through
// the engine, then removes the local `target` tag again, so that using `target`
// afterwards needs a real pull. Image names keep their '/' in the path, as
// EngineClient does.
inline Status PushImage(const std::string& engine_socket, const std::string& source,
                        const std::string& target) {
  std::string repo, tag;
  internal::SplitTag(target, &repo, &tag);
  // podman 4.3 was seen (once in a full suite run, other tests writing images at
  // the same time) to answer the push of a name it had just tagged with 404
  // "image not known": its image store reloaded underneath. Tag and push again.
  for (int attempt = 1;; ++attempt) {
    Status s = TagAndPushOnce(engine_socket, source, target, repo, tag);
    if (s.ok() || attempt == 3 || s.message().find("image not known") == std::string::npos) {
      return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

class LoopbackRegistry {
 public:
  LoopbackRegistry() = default;
  LoopbackRegistry(const LoopbackRegistry&) = delete;
  LoopbackRegistry& operator=(const LoopbackRegistry&) = delete;
  ~LoopbackRegistry() { Stop(); }

  // Starts the registry (the daemon's own supervisor, executor/container/local_registry.h) and
  // waits until `GET /v2/` answers 200.
  Status Start() {
    char tmpl[] = "/tmp/ty-registry-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Internal("mkdtemp failed");
    dir_ = tmpl;
    port_ = internal::FreeLoopbackPort();
    if (port_ == 0) return Internal("no free port on 127.0.0.1");
    registry_ = std::make_unique<executor::LocalRegistry>(
        executor::LocalRegistry::Options{.binary = kRegistryBinary,
                                         .address = host(),
                                         .storage_dir = dir_ + "/storage",
                                         .token_auth = {}});
    RETURN_IF_ERROR(registry_->Start());
    for (int i = 0; i < 150; ++i) {
      if (executor::LocalRegistry::Answers(host(), 1000)) return Status::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return DeadlineExceeded("docker-registry did not answer at " + host() + ": " + Log());
  }

  // Stops the registry and deletes its storage; idempotent.
  void Stop() {
    registry_.reset();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      dir_.clear();
    }
  }

  // "127.0.0.1:PORT", the registry part of an image reference.
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

  // What the registry printed, for failure messages.
  std::string Log() const {
    std::ifstream in(dir_ + "/registry.log");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<executor::LocalRegistry> registry_;
};

}  // namespace ty::testing
