#include "daemon/registry_auth.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

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

std::string RegistryRealm(const DaemonConfig& cfg, const std::string& listen_host, int port) {
  std::string host = listen_host;
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") {
    host = HostOf(cfg.registry);
  }
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  const char* scheme = cfg.tls_cert_file.empty() ? "http" : "https";
  return std::string(scheme) + "://" + host + ":" + std::to_string(port) + "/registry/token";
}

std::string RegistryTlsAddress(const DaemonConfig& cfg) {
  if (!ServesRegistry(cfg) || !cfg.registry_serve || ::geteuid() != 0) return "";
  const std::string host = HostOf(cfg.registry);
  if (cfg.registry != host + ":80" || host.empty() || host.front() == '[') return "";
  return host + ":443";
}

namespace {

Result<std::unique_ptr<auth::RegistryTokenIssuer>> OpenRegistryIssuer(
    const DaemonConfig& cfg, const auth::TokenTable& tokens) {
  if (!ServesRegistry(cfg) || tokens.empty()) return std::unique_ptr<auth::RegistryTokenIssuer>();
  ASSIGN_OR_RETURN(auto issuer, auth::RegistryTokenIssuer::Open(cfg.data_dir + "/registry"));
  if (!issuer->replaced().empty()) {
    spdlog::warn("registry tokens: a new signing key, because {}", issuer->replaced());
  }
  return issuer;
}

Result<std::optional<auth::RegistryTlsFiles>> OpenRegistryTlsFor(const DaemonConfig& cfg) {
  const std::string address = RegistryTlsAddress(cfg);
  if (address.empty()) return std::optional<auth::RegistryTlsFiles>();
  ASSIGN_OR_RETURN(auth::RegistryTlsFiles files,
                   auth::OpenRegistryTls(cfg.data_dir + "/registry/tls", HostOf(address)));
  if (!files.replaced.empty()) {
    spdlog::warn(
        "registry: a new HTTPS authority, because {}; run `trainyard config registry` "
        "again on every machine that pushes or pulls",
        files.replaced);
  }
  return std::optional<auth::RegistryTlsFiles>(std::move(files));
}

}  // namespace

Result<RegistryKeys> OpenRegistryKeys(const DaemonConfig& cfg, const auth::TokenTable& tokens) {
  RegistryKeys keys;
  ASSIGN_OR_RETURN(keys.issuer, OpenRegistryIssuer(cfg, tokens));
  ASSIGN_OR_RETURN(keys.tls, OpenRegistryTlsFor(cfg));
  return keys;
}

Result<std::vector<std::unique_ptr<executor::LocalRegistry>>> StartRegistry(
    const DaemonConfig& cfg, const std::string& listen_host, int port, const RegistryKeys& keys) {
  const auth::RegistryTokenIssuer* issuer = keys.issuer.get();
  std::vector<std::unique_ptr<executor::LocalRegistry>> started;
  if (!ServesRegistry(cfg) || !cfg.registry_serve) return started;
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
  if (keys.tls) {
    executor::LocalRegistry::Options secure = ro;
    secure.address = RegistryTlsAddress(cfg);
    secure.tls = {.cert_path = keys.tls->cert, .key_path = keys.tls->key};
    secure.name = "registry-tls";
    started.push_back(std::make_unique<executor::LocalRegistry>(std::move(secure)));
  }
  started.insert(started.begin(), std::make_unique<executor::LocalRegistry>(std::move(ro)));
  for (const auto& registry : started) RETURN_IF_ERROR(registry->Start());
  return started;
}

}  // namespace ty::daemon
