// LocalRegistry: the daemon's own OCI registry (Debian's docker-registry, the CNCF
// distribution registry), standing in for gcr.io and *.pkg.dev (images/google_names.h).
// Plain HTTP on a loopback address by default; with the daemon's tokens configured it
// takes only tokens of the daemon's token service (auth/registry_tokens.h) and may
// listen beyond loopback. Images are stored under the daemon's data directory. A supervising thread
// starts it, and starts it again should it exit; where something already answers the registry API
// at the address (another daemon's registry, or one the operator runs), that one is used and
// nothing is started.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"

namespace ty::executor {

class LocalRegistry {
 public:
  struct Options {
    std::string binary = "/usr/bin/docker-registry";
    std::string address;      // "HOST:PORT" to listen on (HOST a literal address).
    std::string storage_dir;  // Images; its parent gets the generated config and log.
    // docker-registry's `auth: token:` settings; no realm = no authentication.
    struct TokenAuth {
      std::string realm;      // "http://127.0.0.1:8080/registry/token"
      std::string service;    // The token's audience.
      std::string issuer;     // The token's issuer.
      std::string cert_path;  // PEM certificate of the signing key.
    };
    TokenAuth token_auth;
    // Set: HTTPS with this certificate and key (auth/registry_tls.h), else plain HTTP.
    struct Tls {
      std::string cert_path;
      std::string key_path;
    };
    Tls tls;
    // Its generated config and log: <storage_dir's parent>/NAME.yml and NAME.log (two
    // registries, HTTP and HTTPS, share one storage).
    std::string name = "registry";
  };
  explicit LocalRegistry(Options options);
  LocalRegistry(const LocalRegistry&) = delete;
  LocalRegistry& operator=(const LocalRegistry&) = delete;
  ~LocalRegistry();  // Stop().

  // Starts supervising (returns at once; the registry comes up in the background).
  // InvalidArgument for an address that is not HOST:PORT.
  Status Start();
  // Stops the registry it started (not one it found) and the supervisor.
  void Stop();

  // Waits up to `timeout_ms` for `GET /v2/` to answer at the address: 200, or the 401
  // of a registry that wants a token. `https`: over TLS (any certificate: a liveness
  // probe of the daemon's own address).
  static bool Answers(const std::string& address, long timeout_ms, bool https = false);
  // The HTTP status of `GET /v2/` there; 0 when nothing answers.
  static long Probe(const std::string& address, long timeout_ms, bool https = false);

 private:
  void Supervise();
  Status WriteConfig() const;
  pid_t Spawn() const;
  bool SleepUnlessStopping(int ms);

  Options options_;
  std::string config_path_;
  std::string log_path_;
  std::thread supervisor_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<pid_t> child_{0};
};

}  // namespace ty::executor
