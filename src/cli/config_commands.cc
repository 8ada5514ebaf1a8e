// `trainyard config gcloud`: one step from an installed gcloud to one that talks to
// trainyardd (see cli/gcloud_config.h for what is written where and why).
// `trainyard config registry`: Google's image names to trainyardd's registry for
// podman and docker (cli/registry_config.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>

#include "cli/commands.h"
#include "cli/gcloud_config.h"
#include "cli/registry_config.h"
#include "common/files.h"
#include "images/google_names.h"

namespace ty::cli::internal {
namespace {

struct ConfigState {
  std::string configuration = "trainyard";
  std::string region = "us-central1";  // gcloud ai accepts only Google's region names.
  bool no_activate = false;
};

constexpr char kCommand[] = "trainyard.config.gcloud";

// gcloud's settings directory: $CLOUDSDK_CONFIG, else ~/.config/gcloud.
Result<std::string> GcloudDir(Runtime& rt) {
  std::string dir = rt.getenv("CLOUDSDK_CONFIG").value_or("");
  if (!dir.empty()) return dir;
  std::string home = rt.getenv("HOME").value_or("");
  if (home.empty()) return FailedPrecondition("neither CLOUDSDK_CONFIG nor HOME is set");
  return home + "/.config/gcloud";
}

std::string ReadFileOr(const std::string& path, const std::string& fallback) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : fallback;
}

// Where gcloud reads the token from (auth/access_token_file): --access-token-file as
// given (absolute), or $TRAINYARD_TOKEN written to a file only its owner can read
// beside gcloud's settings; "" when there is no token (gcloud then sends none).
Result<std::string> TokenFileForGcloud(Runtime& rt, const std::string& dir,
                                       const std::string& configuration) {
  ASSIGN_OR_RETURN(std::string token, AccessToken(rt));
  if (token.empty()) return std::string();
  if (!rt.flags.access_token_file.empty()) {
    return std::filesystem::absolute(rt.flags.access_token_file).lexically_normal().string();
  }
  const std::string file = dir + "/trainyard-token-" + configuration;
  RETURN_IF_ERROR(WritePrivateFile(file, token));
  return file;
}

int Run(Runtime& rt, const ConfigState& st) {
  if (Status s = CheckConfigurationName(st.configuration); !s.ok()) {
    return ReportError(rt, kCommand, s);
  }
  Result<std::string> dir = GcloudDir(rt);
  if (!dir.ok()) return ReportError(rt, kCommand, dir.status());
  std::error_code ec;
  std::filesystem::create_directories(*dir + "/configurations", ec);
  if (ec) return ReportError(rt, kCommand, Internal("cannot create " + *dir + ": " + ec.message()));

  const std::string file = *dir + "/configurations/config_" + st.configuration;
  Result<std::string> token_file = TokenFileForGcloud(rt, *dir, st.configuration);
  if (!token_file.ok()) return ReportError(rt, kCommand, token_file.status());
  std::vector<GcloudSetting> settings =
      TrainyardSettings(rt.Endpoint(), rt.Project(), st.region, *token_file);
  // An https:// daemon with its own CA: gcloud trusts it through this file.
  if (const std::string ca = CaFile(rt); !ca.empty()) {
    settings.push_back(
        {"core/custom_ca_certs_file", std::filesystem::absolute(ca).lexically_normal().string()});
  }
  Status written = WriteFileAtomically(file, MergeIni(ReadFileOr(file, ""), settings));
  if (!written.ok()) return ReportError(rt, kCommand, written);
  *rt.out << "Updated gcloud configuration [" << st.configuration << "] (" << file << "):\n";
  for (const GcloudSetting& s : settings) *rt.out << "  " << s.property << " = " << s.value << "\n";

  std::string previous = ReadFileOr(*dir + "/active_config", "default");
  previous = previous.substr(0, previous.find_first_of(" \r\n"));
  if (st.no_activate) {
    *rt.out << "Use it with `gcloud --configuration=" << st.configuration
            << " ...` or `gcloud config configurations activate " << st.configuration << "`.\n";
    return 0;
  }
  Status activated = WriteFileAtomically(*dir + "/active_config", st.configuration);
  if (!activated.ok()) return ReportError(rt, kCommand, activated);
  *rt.out << "Activated [" << st.configuration << "]";
  if (previous != st.configuration) {
    *rt.out << "; switch back with `gcloud config configurations activate " << previous << "`";
  }
  *rt.out << ".\n";
  return 0;
}

struct RegistryState {
  std::string address = images::kDefaultRegistryAddress;  // trainyardd's default --registry.
  std::vector<std::string> extra_hosts;
  std::string hosts_file = "/etc/hosts";
  std::string conf_file = "/etc/containers/registries.conf.d/50-trainyard-registry.conf";
  std::string auth_file;  // "" = $XDG_CONFIG_HOME or ~/.config, /containers/auth.json.
  // Where clients read a registry host's trust: DIR/HOST/ca.crt (podman and
  // containers/image, the Docker CLI and dockerd).
  std::vector<std::string> certs_dirs = {"/etc/containers/certs.d", "/etc/docker/certs.d"};
  bool remove = false;
  bool credential_helper = false;  // Leave the hosts to gcloud's credential helper.
  bool plain_http = false;         // The drop-in even where the daemon serves HTTPS.
};

constexpr char kRegistryCommand[] = "trainyard.config.registry";

// The address's IP. Port 80 only: a name without a port is tried over plain HTTP
// on port 80, and /etc/hosts can move a name to another address but not another port.
Result<std::string> RegistryIp(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || address.substr(colon + 1) != "80") {
    return InvalidArgument(
        "--address must be IP:80 (a name without a port is reached on port "
        "80), not \"" +
        address + "\"");
  }
  std::string ip = address.substr(0, colon);
  if (ip.size() > 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
  if (ip.empty() || ip.find_first_not_of("0123456789abcdefABCDEF.:") != std::string::npos) {
    return InvalidArgument("--address must start with an IP address, not \"" + ip + "\"");
  }
  return ip;
}

// In place, not renamed over: /etc/hosts is often a bind mount (containers, tests).
Status OverwriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out.flush()) return Internal("cannot write " + path);
  return Status::Ok();
}

Result<std::string> AuthFilePath(Runtime& rt, const RegistryState& st) {
  if (!st.auth_file.empty()) return st.auth_file;
  std::string base = rt.getenv("XDG_CONFIG_HOME").value_or("");
  if (base.empty()) {
    std::string home = rt.getenv("HOME").value_or("");
    if (home.empty()) return FailedPrecondition("neither XDG_CONFIG_HOME nor HOME is set");
    base = home + "/.config";
  }
  return base + "/containers/auth.json";
}

// Our entries into (or out of) the auth file, other entries kept.
Status UpdateAuthFile(const std::string& path, const std::vector<std::string>& hosts,
                      AuthEntries mode, const std::string& token) {
  Result<std::string> text = ReadFile(path);
  ASSIGN_OR_RETURN(std::string merged, MergeAuthFile(text.ok() ? *text : "", hosts, mode, token));
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  return WritePrivateFile(path, merged);
}

std::string JoinedDirs(const std::vector<std::string>& dirs) {
  std::string out;
  for (const std::string& d : dirs) out += (out.empty() ? "" : " and ") + d;
  return out;
}

// The daemon's registry authority (GET /registry/ca.crt), "" where it serves no HTTPS
// registry or does not answer (`why` says which).
std::string FetchRegistryCa(Runtime& rt, std::string* why) {
  Result<HttpResponse> got = rt.http->Send("GET", rt.Endpoint() + "/registry/ca.crt", "");
  if (!got.ok()) {
    *why = "trainyardd did not answer at " + rt.Endpoint();
    return "";
  }
  if (got->status != 200 || got->body.rfind("-----BEGIN CERTIFICATE-----", 0) != 0) {
    *why = "trainyardd at " + rt.Endpoint() +
           " serves no HTTPS registry (it runs as root "
           "with --registry IP:80 to serve one on IP:443)";
    return "";
  }
  return got->body;
}

// DIR/HOST/ca.crt for every certs dir and host: `ca` written, or ours removed ("").
Status PlaceRegistryCa(const RegistryState& st, const std::vector<std::string>& hosts,
                       const std::string& ca) {
  for (const std::string& dir : st.certs_dirs) {
    for (const std::string& host : hosts) {
      const std::string host_dir = dir + "/" + host;
      std::error_code ec;
      if (ca.empty()) {
        std::filesystem::remove(host_dir + "/ca.crt", ec);
        std::filesystem::remove(host_dir, ec);  // Only when nothing else is there.
        continue;
      }
      std::filesystem::create_directories(host_dir, ec);
      if (ec) return Internal("cannot create " + host_dir + ": " + ec.message());
      RETURN_IF_ERROR(WriteFileAtomically(host_dir + "/ca.crt", ca));
    }
  }
  return Status::Ok();
}

// HTTPS where the daemon serves it (its authority placed for every host, and no host
// marked plain), else the plain-HTTP drop-in. Says which, for the summary.
Result<std::string> ConfigureTransport(Runtime& rt, const RegistryState& st,
                                       const std::vector<std::string>& hosts,
                                       const std::string& ip) {
  std::string no_https = "--plain-http";
  const std::string ca = st.plain_http ? "" : FetchRegistryCa(rt, &no_https);
  if (!ca.empty()) {
    RETURN_IF_ERROR(PlaceRegistryCa(st, hosts, ca));
    ::unlink(st.conf_file.c_str());
    return "clients trust the registry's HTTPS on " + ip +
           ":443 by its authority, in <dir>/<host>/ca.crt under " + JoinedDirs(st.certs_dirs) +
           " (read at every connection: running clients too)";
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(st.conf_file).parent_path(), ec);
  RETURN_IF_ERROR(WriteFileAtomically(st.conf_file, RegistriesConfDropIn(hosts)));
  return "marked them plain HTTP in " + st.conf_file + " (" + no_https +
         "; a podman service started before this needs a restart)";
}

int RunRegistry(Runtime& rt, const RegistryState& st) {
  std::string ip;
  if (!st.remove) {
    Result<std::string> parsed = RegistryIp(st.address);
    if (!parsed.ok()) return ReportError(rt, kRegistryCommand, parsed.status());
    ip = *parsed;
  }
  std::vector<std::string> hosts = images::GoogleRegistryHosts();
  hosts.insert(hosts.end(), st.extra_hosts.begin(), st.extra_hosts.end());
  for (const std::string& h : st.extra_hosts) {
    if (!images::IsGoogleRegistryHost(h)) {
      return ReportError(rt, kRegistryCommand,
                         InvalidArgument("--host " + h + " is not gcr.io, *.gcr.io or *.pkg.dev"));
    }
  }
  Result<std::string> hosts_text = ReadFile(st.hosts_file);
  if (!hosts_text.ok()) return ReportError(rt, kRegistryCommand, hosts_text.status());
  Result<std::string> auth_file = AuthFilePath(rt, st);
  if (!auth_file.ok()) return ReportError(rt, kRegistryCommand, auth_file.status());
  Result<std::string> token = AccessToken(rt);
  if (!token.ok()) return ReportError(rt, kRegistryCommand, token.status());
  const AuthEntries mode = st.remove || st.credential_helper ? AuthEntries::kRemove
                           : token->empty()                  ? AuthEntries::kPlaceholder
                                                             : AuthEntries::kToken;
  Status s = UpdateAuthFile(*auth_file, hosts, mode, *token);
  if (!s.ok()) return ReportError(rt, kRegistryCommand, s);
  s = OverwriteFile(st.hosts_file, MergeHostsBlock(*hosts_text, ip, hosts));
  if (!s.ok()) return ReportError(rt, kRegistryCommand, s);
  if (st.remove) {
    ::unlink(st.conf_file.c_str());
    PlaceRegistryCa(st, hosts, "").IgnoreError();  // What is left says why.
    *rt.out << "Removed the registry block from " << st.hosts_file << ", " << st.conf_file
            << ", the registry's certificate authority and our entries from " << *auth_file
            << ".\n";
    return 0;
  }
  Result<std::string> transport = ConfigureTransport(rt, st, hosts, ip);
  if (!transport.ok()) return ReportError(rt, kRegistryCommand, transport.status());
  *rt.out << "Mapped " << hosts.size() << " registry names (gcr.io, us-central1-docker.pkg.dev, "
          << "...) to " << ip << " in " << st.hosts_file << "; " << *transport << "; " << *auth_file
          << (mode == AuthEntries::kToken ? " gives them your token (pushes and pulls as its "
                                            "grant).\n"
              : mode == AuthEntries::kRemove
                  ? " leaves them to `gcloud auth configure-docker`'s credential helper "
                    "(gcloud's access token).\n"
                  : " keeps `gcloud auth configure-docker`'s credential helper from running "
                    "for them (no token: a daemon with tokens lets them pull only the shared "
                    "runtimes; give --access-token-file or $TRAINYARD_TOKEN).\n")
          << "`docker push gcr.io/PROJECT/IMAGE:TAG` now stores in trainyardd's registry at "
          << st.address << ", and jobs pull by that name. Undo with `trainyard config registry "
          << "--remove`.\n";
  return 0;
}

void AddGcloudCommand(CLI::App* config, const std::shared_ptr<ConfigState>& st,
                      Selection* selection) {
  CLI::App* gcloud = config->add_subcommand(
      "gcloud",
      "Create or update a gcloud configuration whose training (aiplatform, ml), logging "
      "and storage endpoints are trainyardd (--api-endpoint), for --project, and make it "
      "active. With --access-token-file or $TRAINYARD_TOKEN, gcloud sends that token; with "
      "--ca-file or $TRAINYARD_CA_FILE, it trusts an https:// daemon's certificate by it.");
  gcloud->add_option("--configuration", st->configuration,
                     "Name of the gcloud configuration (default: trainyard).");
  gcloud->add_option("--region", st->region,
                     "Region for ai/region and compute/region (default: us-central1; gcloud ai "
                     "refuses names it does not know, such as local).");
  gcloud->add_flag("--no-activate", st->no_activate, "Leave the active configuration as it is.");
  gcloud->callback([st, selection] {
    selection->command_path = kCommand;
    selection->run = [st](Runtime& rt) { return Run(rt, *st); };
  });
}

void AddRegistryCommand(CLI::App* config, const std::shared_ptr<RegistryState>& reg,
                        Selection* selection) {
  CLI::App* registry = config->add_subcommand(
      "registry",
      "Make gcr.io, *.gcr.io and *-docker.pkg.dev image names reach trainyardd's registry for "
      "podman and docker (push and pull): maps them to its address in /etc/hosts (a marked "
      "block; the real registries are then out of reach from this machine) and installs the "
      "daemon's HTTPS authority for them under certs.d (where it serves no HTTPS, marks them "
      "plain HTTP in a registries.conf.d drop-in instead). With --access-token-file or "
      "$TRAINYARD_TOKEN, podman and docker send that token to a registry that takes tokens. "
      "Needs root.");
  registry->add_option("--address", reg->address,
                       "IP:80 of trainyardd's registry (its --registry; default 127.77.0.1:80). "
                       "Other machines of a cluster give the registry host's IP.");
  registry->add_option("--host", reg->extra_hosts,
                       "A further registry name to map (REGION-docker.pkg.dev of a region not "
                       "in the built-in list); repeatable.");
  registry->add_option("--hosts-file", reg->hosts_file, "Default /etc/hosts.");
  registry->add_option("--registries-conf", reg->conf_file,
                       "Default /etc/containers/registries.conf.d/50-trainyard-registry.conf.");
  registry->add_option("--auth-file", reg->auth_file,
                       "containers-auth.json to add entries to (default "
                       "~/.config/containers/auth.json, read by podman before ~/.docker).");
  registry->add_option("--certs-dir", reg->certs_dirs,
                       "Where clients read a registry host's trust (DIR/HOST/ca.crt); repeat "
                       "for several (default /etc/containers/certs.d and /etc/docker/certs.d).");
  registry->add_flag("--plain-http", reg->plain_http,
                     "Mark the names plain HTTP (a registries.conf drop-in, read by clients "
                     "started after it) instead of installing the daemon's HTTPS authority.");
  registry->add_flag("--remove", reg->remove,
                     "Undo: remove the block, the drop-in and the registry's authority.");
  registry->add_flag("--credential-helper", reg->credential_helper,
                     "Leave the registry names' credentials to `gcloud auth configure-docker`'s "
                     "helper (gcloud's access token: the daemon's token once `trainyard config "
                     "gcloud` set it up with one) instead of entries in the auth file.");
  registry->callback([reg, selection] {
    selection->command_path = kRegistryCommand;
    selection->run = [reg](Runtime& rt) { return RunRegistry(rt, *reg); };
  });
}

}  // namespace

std::shared_ptr<void> RegisterConfig(CLI::App& app, Selection* selection) {
  auto st = std::make_shared<ConfigState>();
  auto reg = std::make_shared<RegistryState>();
  CLI::App* config = app.add_subcommand("config", "Set up other tools to use trainyardd.");
  config->require_subcommand(1);
  AddGcloudCommand(config, st, selection);
  AddRegistryCommand(config, reg, selection);
  return std::make_shared<std::pair<std::shared_ptr<ConfigState>, std::shared_ptr<RegistryState>>>(
      st, reg);
}

}  // namespace ty::cli::internal
