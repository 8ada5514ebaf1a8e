// ApiServer: the listener and the io threads; connections are HttpSession.
#include "api/api_server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "api/handlers.h"
#include "api/http_session.h"
#include "service/job_service.h"

namespace ty::api {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// "10.88.0.0/13" -> (network, mask); nullopt when malformed.
std::optional<std::pair<uint32_t, uint32_t>> ParseCidr(const std::string& cidr) {
  size_t slash = cidr.find('/');
  boost::system::error_code ec;
  auto address = net::ip::make_address_v4(cidr.substr(0, slash), ec);
  if (ec) return std::nullopt;
  int bits = 32;
  if (slash != std::string::npos) {
    try {
      bits = std::stoi(cidr.substr(slash + 1));
    } catch (...) {
      return std::nullopt;
    }
  }
  if (bits < 0 || bits > 32) return std::nullopt;
  uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return std::make_pair(address.to_uint() & mask, mask);
}

// The server's TLS context from PEM files; InvalidArgument naming the file at fault.
Result<std::unique_ptr<net::ssl::context>> TlsContext(const std::string& cert_file,
                                                      const std::string& key_file) {
  if (cert_file.empty() != key_file.empty()) {
    return InvalidArgument(
        "TLS needs both a certificate (--tls-cert-file) and its key (--tls-key-file)");
  }
  if (cert_file.empty()) return std::unique_ptr<net::ssl::context>();
  auto ctx = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
  ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                   net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                   net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
  boost::system::error_code ec;
  if (ctx->use_certificate_chain_file(cert_file, ec)) {
    return InvalidArgument("TLS certificate " + cert_file + ": " + ec.message());
  }
  if (ctx->use_private_key_file(key_file, net::ssl::context::pem, ec)) {
    return InvalidArgument("TLS key " + key_file + ": " + ec.message());
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return InvalidArgument("TLS key " + key_file + " does not belong to the certificate " +
                           cert_file);
  }
  return ctx;
}

std::vector<std::unique_ptr<net::io_context>> MakeContexts(int threads) {
  std::vector<std::unique_ptr<net::io_context>> contexts;
  for (int i = 0; i < std::max(threads, 1); ++i) {
    contexts.push_back(std::make_unique<net::io_context>(1));
  }
  return contexts;
}

}  // namespace

class ApiServer::Impl {
 public:
  Impl(service::JobService* service, Options options, std::unique_ptr<net::ssl::context> tls)
      : options_(std::move(options)),
        tls_(std::move(tls)),
        router_(service, options_.storage, options_.random, options_.storage_only,
                AccessGate{options_.tokens, options_.replica_identity}, options_.registry_tokens,
                options_.artifacts, options_.tensorboards),
        io_contexts_(MakeContexts(options_.threads)) {
    acceptor_ = std::make_unique<tcp::acceptor>(*io_contexts_.front());
    limits_.max_body_bytes = options_.max_body_bytes;
    limits_.max_upload_bytes = options_.max_upload_bytes;
    for (const std::string& cidr : options_.allowed_peers) {
      if (auto parsed = ParseCidr(cidr)) peers_.push_back(*parsed);
    }
  }

  ~Impl() { Stop(); }

  Result<int> Start() {
    if (started_) return FailedPrecondition("API server already started");
    tcp::acceptor& acceptor = *acceptor_;
    boost::system::error_code ec;
    tcp::endpoint endpoint;
    net::ip::address address = net::ip::make_address(options_.host, ec);
    if (!ec) {
      endpoint = tcp::endpoint(address, static_cast<unsigned short>(options_.port));
    } else {
      // A host name ("localhost"): take its first address.
      tcp::resolver resolver(*io_contexts_.front());
      auto results = resolver.resolve(options_.host, std::to_string(options_.port), ec);
      if (ec || results.empty()) {
        return InvalidArgument("cannot resolve API host \"" + options_.host +
                               "\": " + ec.message());
      }
      endpoint = results.begin()->endpoint();
    }
    const std::string where = options_.host + ":" + std::to_string(options_.port);
    if (acceptor.open(endpoint.protocol(), ec)) {
      return Unavailable("open " + where + ": " + ec.message());
    }
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (acceptor.bind(endpoint, ec)) {
      acceptor.close(ec);
      return Unavailable("bind " + where + ": " + ec.message());
    }
    if (acceptor.listen(net::socket_base::max_listen_connections, ec)) {
      acceptor.close(ec);
      return Unavailable("listen " + where + ": " + ec.message());
    }
    int port = acceptor.local_endpoint(ec).port();
    started_ = true;
    for (auto& ioc : io_contexts_) {
      work_.push_back(net::make_work_guard(*ioc));
      threads_.emplace_back([ioc = ioc.get()] { ioc->run(); });
    }
    Accept();
    return port;
  }

  void Stop() {
    if (!started_ || stopped_) return;
    stopped_ = true;
    work_.clear();
    for (auto& ioc : io_contexts_) ioc->stop();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    // No thread runs handlers now. Closing the acceptor, then destroying the
    // io_context, destroys every pending handler and with it every session, which
    // closes their sockets.
    acceptor_.reset();
    io_contexts_.clear();
  }

 private:
  bool PeerAllowed(const tcp::socket& socket) const {
    if (peers_.empty()) return true;
    boost::system::error_code ec;
    net::ip::address a = socket.remote_endpoint(ec).address();
    if (ec) return false;
    if (a.is_v6() && a.to_v6().is_v4_mapped()) {
      a = net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6());
    }
    if (a.is_loopback()) return true;
    if (!a.is_v4()) return false;
    const uint32_t v = a.to_v4().to_uint();
    for (const auto& [net_addr, mask] : peers_) {
      if ((v & mask) == net_addr) return true;
    }
    return false;
  }

  void Accept() {
    // Connections take the io threads in turn, each on its thread's own io_context:
    // a connection's handlers never run at once (no strand needed) and a request's
    // steps never hop threads (one thread's wakeups, not a shared queue's).
    net::io_context& ioc = *io_contexts_[next_ioc_++ % io_contexts_.size()];
    acceptor_->async_accept(ioc, [this](boost::system::error_code ec, tcp::socket socket) {
      if (!acceptor_->is_open()) return;
      if (!ec && PeerAllowed(socket)) {
        if (tls_) {
          std::make_shared<internal::HttpSession<internal::TlsStream>>(
              std::move(socket), tls_.get(), &router_, &limits_)
              ->Run();
        } else {
          std::make_shared<internal::HttpSession<internal::PlainStream>>(std::move(socket), nullptr,
                                                                         &router_, &limits_)
              ->Run();
        }
      }
      // Transient failures (EMFILE, aborted handshakes) must not
      // stop the listener.
      Accept();
    });
  }

  // Declaration order is destruction order reversed: sessions die with their io_context, and
  // they point at router_ and limits_, which therefore come first. The acceptor
  // must go before its io_context.
  Options options_;
  std::unique_ptr<net::ssl::context> tls_;            // Null: plain HTTP.
  std::vector<std::pair<uint32_t, uint32_t>> peers_;  // (network, mask), IPv4.
  Router router_;
  internal::SessionLimits limits_;
  // One io_context per io thread (the first also runs the acceptor).
  std::vector<std::unique_ptr<net::io_context>> io_contexts_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  size_t next_ioc_ = 0;  // Used by the acceptor's handler only (one thread).
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  bool started_ = false;
  bool stopped_ = false;
};

Result<std::unique_ptr<ApiServer>> ApiServer::Create(service::JobService* service,
                                                     Options options) {
  if (service == nullptr) return InvalidArgument("API server needs a JobService");
  if (options.threads < 1) return InvalidArgument("API server threads must be >= 1");
  if (options.port < 0 || options.port > 65535) {
    return InvalidArgument("API port must be in 0..65535, got " + std::to_string(options.port));
  }
  if (options.max_body_bytes == 0) return InvalidArgument("max_body_bytes must be > 0");
  if (options.storage != nullptr && options.random == nullptr) {
    return InvalidArgument("API server with storage needs a random source (upload session ids)");
  }
  for (const std::string& cidr : options.allowed_peers) {
    if (!ParseCidr(cidr)) return InvalidArgument("not an IPv4 CIDR: \"" + cidr + "\"");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<net::ssl::context> tls,
                   TlsContext(options.tls_cert_file, options.tls_key_file));
  return std::unique_ptr<ApiServer>(
      new ApiServer(std::make_unique<Impl>(service, std::move(options), std::move(tls))));
}

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ApiServer::~ApiServer() = default;

Result<int> ApiServer::Start() { return impl_->Start(); }
void ApiServer::Stop() { impl_->Stop(); }

}  // namespace ty::api
