#include "daemon/registry_auth.h"

#include <spdlog/spdlog.h>

namespace ty::daemon {
namespace {

std::string HostOf(const std::string& address) {
  if (!address.empty() && address.front() == '[') return address.substr(0, address.find(']') + 1);
  return address.substr(0, address.rfind(':'));
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

bool ServesRegistry(const DaemonConfig& cfg) {
  return cfg.executor != "process" && !cfg.registry.empty();
}

}  // namespace

Status CheckRegistryAddress(const DaemonConfig& cfg, const auth::TokenTable& tokens) {
  if (!ServesRegistry(cfg) || !cfg.registry_serve || IsLoopback(HostOf(cfg.registry))) {
    return Status::Ok();
  }
  if (!tokens.empty()) {
    if (IsLoopback(HostOf(cfg.listen))) {
      // Not refused: this host's own pushes and pulls work; other hosts' do not.
      spdlog::warn(
          "--registry {}: its token service is on --listen {}, which only this host "
          "reaches; other hosts get no token (listen on an address they reach, e.g. "
          "0.0.0.0:PORT)",
          cfg.registry, cfg.listen);
    }
    return Status::Ok();
  }
  return InvalidArgument(
      "--registry " + cfg.registry +
      ": without access tokens the registry takes no credential, so anyone who reaches "
      "this address pushes and pulls every project's images; add `tokens:` to the config "
      "(then pushes and pulls need a token), or give a 127.x.y.z address");
}

Result<std::unique_ptr<auth::RegistryTokenIssuer>> OpenRegistryIssuer(
    const DaemonConfig& cfg, const auth::TokenTable& tokens) {
  if (!ServesRegistry(cfg) || tokens.empty()) return std::unique_ptr<auth::RegistryTokenIssuer>();
  ASSIGN_OR_RETURN(auto issuer, auth::RegistryTokenIssuer::Open(cfg.data_dir + "/registry"));
  if (!issuer->replaced().empty()) {
    spdlog::warn("registry tokens: a new signing key, because {}", issuer->replaced());
  }
  return issuer;
}

std::string RegistryRealm(const DaemonConfig& cfg, const std::string& listen_host, int port) {
  std::string host = listen_host;
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") {
    host = HostOf(cfg.registry);
  }
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  const char* scheme = cfg.tls_cert_file.empty() ? "http" : "https";
  return std::string(scheme) + "://" + host + ":" + std::to_string(port) + "/registry/token";
}

Result<std::unique_ptr<executor::LocalRegistry>> StartRegistry(
    const DaemonConfig& cfg, const std::string& listen_host, int port,
    const auth::RegistryTokenIssuer* issuer) {
  if (!ServesRegistry(cfg) || !cfg.registry_serve) {
    return std::unique_ptr<executor::LocalRegistry>();
  }
  executor::LocalRegistry::Options ro;
  ro.address = cfg.registry;
  ro.storage_dir = cfg.data_dir + "/registry/storage";
  if (issuer != nullptr) {
    ro.token_auth = {.realm = RegistryRealm(cfg, listen_host, port),
                     .service = kRegistryService,
                     .issuer = kRegistryIssuer,
                     .cert_path = issuer->cert_path()};
    spdlog::info("registry: pushes and pulls need a token (token service {})", ro.token_auth.realm);
  }
  auto registry = std::make_unique<executor::LocalRegistry>(std::move(ro));
  RETURN_IF_ERROR(registry->Start());
  return registry;
}

}  // namespace ty::daemon
