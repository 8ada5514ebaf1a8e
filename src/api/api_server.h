// ApiServer: the HTTP/1.1 front door of the daemon. Serves the Vertex v1 and ml v1
// REST surfaces plus our log endpoints (routes in handlers.h) over a JobService.
//
// Boost.Beast, asynchronous: `Options::threads` threads run one io_context; each
// connection is serialized on its own strand, keep-alive is honoured, and log follow
// streams wait on timers instead of holding a thread. Service calls run inline on
// the io thread (they are short: reads come from memory, mutations wait only for the
// service's loop).
//
// Ownership: does not own the JobService, which must outlive the server.
// Thread-safety: Start and Stop must be called from one thread (the owner's); the
// destructor calls Stop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/registry_token.h"
#include "artifacts/repositories.h"
#include "auth/tokens.h"
#include "common/random.h"
#include "common/status.h"
#include "tensorboard/store.h"

namespace ty::service {
class JobService;
}  // namespace ty::service
namespace ty::gcs {
class ObjectStore;
}  // namespace ty::gcs

namespace ty::api {

class ApiServer {
 public:
  struct Options {
    std::string host = "127.0.0.1";                 // Numeric address or a resolvable name.
    int port = 8080;                                // 0 = pick a free port (tests).
    size_t max_body_bytes = 4 << 20;                // Larger bodies answer 413 (uploads: below).
    uint64_t max_upload_bytes = uint64_t{5} << 40;  // Cloud Storage uploads, spooled to disk.
    int threads = 2;
    // The Cloud Storage JSON API over these buckets (not owned); null = not served.
    gcs::ObjectStore* storage = nullptr;
    // Required with `storage`: the ids of its resumable upload sessions (main wires the
    // system's; an id lets its holder write the object, so it must not be guessable).
    Random* random = nullptr;
    // Peers allowed to connect, as IPv4 CIDRs ("10.88.0.0/13"); empty = anyone.
    // Loopback is always allowed. Others are closed at once (the replica listener
    // binds 0.0.0.0 so containers reach it through their network's gateway, but
    // only container networks may use it). InvalidArgument for a malformed CIDR.
    std::vector<std::string> allowed_peers;
    // The replica listener: serves the Cloud Storage API and /healthz only, never the
    // jobs API, Logging or /metrics (a replica once read another project's jobs,
    // with their env, and created jobs anywhere through it).
    bool storage_only = false;
    // Access tokens (not owned; api/access.h): with any, every request but /healthz
    // needs one; null or empty = none (then the daemon listens on loopback only).
    const auth::TokenTable* tokens = nullptr;
    // The replica listener: the job whose replica connects from a peer address or
    // carries a credential (AccessGate::replica), as a principal holding that job's
    // buckets (nullopt = none: refused).
    std::function<std::optional<auth::Principal>(const std::string& peer,
                                                 const std::string& credential)>
        replica_identity;
    // TLS: PEM files of the certificate (chain) and its private key; both or neither.
    // With them the listener speaks only HTTPS (TLS 1.2 and later).
    std::string tls_cert_file;
    std::string tls_key_file;
    // GET /registry/token for the daemon's registry (api/registry_token.h); no issuer:
    // not served (a daemon without tokens runs its registry without authentication).
    RegistryTokenService registry_tokens;
    // Artifact Registry's repositories (not owned); null: those routes are not served.
    artifacts::Repositories* artifacts = nullptr;
    // Vertex AI TensorBoard's resources (not owned); null: those routes are not served.
    tensorboard::Store* tensorboards = nullptr;
  };

  // InvalidArgument for bad options (threads < 1, port outside 0..65535, a TLS
  // certificate or key that cannot be read or does not match, naming the file).
  static Result<std::unique_ptr<ApiServer>> Create(service::JobService* service, Options options);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds, listens and starts serving. Returns the bound port (useful with port 0).
  // Unavailable if the address cannot be bound; FailedPrecondition if already started.
  Result<int> Start();
  // Stops accepting, joins the io threads and closes every open connection (a
  // request being served finishes first). Idempotent; the server cannot restart.
  void Stop();

 private:
  class Impl;
  explicit ApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ty::api
