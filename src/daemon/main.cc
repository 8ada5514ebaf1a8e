// trainyardd: the Trainyard daemon. Reads flags (and an optional YAML config),
// builds the concrete backends (SQLite store, log store, container or process
// executor), wires them into the service and the HTTP API, and runs until SIGINT or
// SIGTERM. Only this file names every implementation (STYLE.md §2).
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <tuple>

#include "api/api_server.h"
#include "auth/replica_credentials.h"
#include "auth/tokens.h"
#include "common/files.h"
#include "executor/container_executor.h"
#include "executor/local_registry.h"
#include "executor/process_executor.h"
#include "executor/slurm_executor.h"
#include "format/yaml_json.h"
#include "logs/log_store.h"
#include "model/registry_names.h"
#include "model/spec_limits.h"
#include "service/capacity_config.h"
#include "service/job_service.h"
#include "storage/object_store.h"
#include "store/sqlite_job_store.h"

namespace {

struct DaemonConfig {
  std::string listen = "127.0.0.1:8080";
  std::string port_file;
  std::string data_dir;
  std::string executor = "container";
  std::string engine_socket = "/run/podman/podman.sock";
  std::string bucket_root;  // Default <data_dir>/buckets.
  double stop_grace_seconds = 10;
  int warm_pool = 0;  // Containers started ahead of demand (executor/warm_pool.h); 0 = none.
  // Idle network namespaces kept for single-replica jobs (executor/network_slots.h).
  int network_slots = 16;
  // Replicas' user namespace: container root is this host uid and gid, 65,536 ids
  // from it (executor/container_executor.h); 0 = the host's ids. Far above the
  // subordinate ids useradd hands out (from 100000) and any real user.
  int64_t replica_uid_base = 2000000000;
  ty::model::SpecLimits limits;  // Bounds on accepted specs (model/spec_limits.h).
  // Where containers reach the Cloud Storage API (container executor): every
  // address, so each engine network's gateway (host.containers.internal) answers,
  // but only peers in the engine's address pools are served. "" = off.
  std::string replica_listen = "0.0.0.0:0";
  // HTTPS on the main listener: PEM certificate (chain) and key; "" = plain HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;
  // The registry standing in for gcr.io and *.pkg.dev (executor/local_registry.h):
  // "HOST:PORT", "" = none.
  std::string registry = ty::model::kDefaultRegistryAddress;
  bool registry_serve = true;  // Run docker-registry there; false = one is already there.
  // The Slurm executor (executor/slurm_executor.h): attempt directories on a filesystem
  // every Slurm host mounts at the same path (default <data_dir>/slurm), the launcher as
  // the hosts run it (default beside trainyardd), sbatch's partition and QOS, and how
  // replicas on the hosts reach this machine (default its host name).
  std::string slurm_dir;
  std::string slurm_launcher;
  std::string slurm_partition;
  std::string slurm_qos;
  std::string slurm_spot_partition;  // Spot jobs' partition and QOS ("" = as the others).
  std::string slurm_spot_qos;
  std::string slurm_daemon_host;
  // The config file's admission keys (service/capacity_config.h); null = defaults.
  nlohmann::json admission_doc;
  // The config file's `tokens` list (auth/tokens.h); null = no tokens.
  nlohmann::json tokens_doc;
};

// The largest replica_uid_base whose 65,536 ids still fit in a uid_t.
constexpr int64_t kMaxUidBase = 4294967295LL - 65536;

// Podman's default network (10.88.0.0/16) and netavark's default pool for new
// networks (10.89.0.0/16 up to 10.255.255.0/24).
const std::vector<std::string> kContainerNetworks = {"10.88.0.0/13", "10.96.0.0/11",
                                                     "10.128.0.0/9"};

// "HOST:PORT" -> (host, port). InvalidArgument naming `flag` otherwise.
ty::Result<std::pair<std::string, int>> SplitHostPort(const std::string& value,
                                                      const std::string& flag) {
  size_t colon = value.rfind(':');
  if (colon == std::string::npos) return ty::InvalidArgument(flag + " must be HOST:PORT");
  try {
    return std::make_pair(value.substr(0, colon), std::stoi(value.substr(colon + 1)));
  } catch (...) {
    return ty::InvalidArgument(flag + ": bad port in \"" + value + "\"");
  }
}

// The API runs other people's code on this host (the process executor runs it as
// the daemon's user): without access tokens, only this machine may reach it. A
// request from another host once ran `id` here as root through --listen 0.0.0.0.
ty::Status CheckListenHost(const std::string& host, const ty::auth::TokenTable& tokens) {
  const bool loopback =
      host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
  if (loopback || !tokens.empty()) return ty::Status::Ok();
  return ty::InvalidArgument(
      "--listen " + host +
      ": without access tokens this daemon serves only loopback addresses (127.0.0.1, ::1, "
      "localhost), because it cannot tell one caller from another and anyone who reaches "
      "the port can run code on this host; add `tokens:` to the config (`trainyard token "
      "create`), or reach it through an SSH tunnel");
}

std::string DefaultDataDir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return std::string(xdg) + "/trainyard";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/root") + "/.local/share/trainyard";
}

// Hands the admission keys and `tokens` their documents; InvalidArgument for a key
// nobody reads (a typo must not pass silently).
ty::Status SortConfigKeys(const std::string& path, const nlohmann::json& doc, DaemonConfig& cfg) {
  static const char* kKnown[] = {"listen",
                                 "port_file",
                                 "data_dir",
                                 "executor",
                                 "engine_socket",
                                 "bucket_root",
                                 "stop_grace_seconds",
                                 "warm_pool",
                                 "network_slots",
                                 "replica_uid_base",
                                 "max_replicas_per_pool",
                                 "max_replicas_per_job",
                                 "replica_listen",
                                 "tls_cert_file",
                                 "tls_key_file",
                                 "registry",
                                 "registry_serve",
                                 "slurm_dir",
                                 "slurm_launcher",
                                 "slurm_partition",
                                 "slurm_qos",
                                 "slurm_spot_partition",
                                 "slurm_spot_qos",
                                 "slurm_daemon_host"};
  const auto& admission_keys = ty::service::AdmissionConfigKeys();
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (std::find(admission_keys.begin(), admission_keys.end(), it.key()) != admission_keys.end()) {
      cfg.admission_doc[it.key()] = *it;
      continue;
    }
    if (it.key() == "tokens") {
      cfg.tokens_doc = *it;
      continue;
    }
    if (std::find(std::begin(kKnown), std::end(kKnown), it.key()) == std::end(kKnown)) {
      return ty::InvalidArgument("config " + path + ": unknown key \"" + it.key() + "\"");
    }
  }
  return ty::Status::Ok();
}

// Applies the YAML config file's keys; flags given on the command line win.
ty::Status ApplyConfigFile(const std::string& path, DaemonConfig& cfg, const CLI::App& app) {
  ASSIGN_OR_RETURN(nlohmann::json doc, ty::format::ReadYamlOrJsonFile(path));
  if (!doc.is_object()) return ty::InvalidArgument("config " + path + ": expected a mapping");
  auto str = [&](const char* key, const char* flag, std::string& out) -> ty::Status {
    if (!doc.contains(key)) return ty::Status::Ok();
    if (!doc[key].is_string())
      return ty::InvalidArgument("config " + path + ": " + key + " must be a string");
    if (app.count(flag) == 0) out = doc[key].get<std::string>();
    return ty::Status::Ok();
  };
  RETURN_IF_ERROR(SortConfigKeys(path, doc, cfg));
  RETURN_IF_ERROR(str("listen", "--listen", cfg.listen));
  RETURN_IF_ERROR(str("port_file", "--port-file", cfg.port_file));
  RETURN_IF_ERROR(str("data_dir", "--data-dir", cfg.data_dir));
  RETURN_IF_ERROR(str("executor", "--executor", cfg.executor));
  RETURN_IF_ERROR(str("engine_socket", "--engine-socket", cfg.engine_socket));
  RETURN_IF_ERROR(str("bucket_root", "--bucket-root", cfg.bucket_root));
  RETURN_IF_ERROR(str("replica_listen", "--replica-listen", cfg.replica_listen));
  RETURN_IF_ERROR(str("tls_cert_file", "--tls-cert-file", cfg.tls_cert_file));
  RETURN_IF_ERROR(str("tls_key_file", "--tls-key-file", cfg.tls_key_file));
  RETURN_IF_ERROR(str("registry", "--registry", cfg.registry));
  RETURN_IF_ERROR(str("slurm_dir", "--slurm-dir", cfg.slurm_dir));
  RETURN_IF_ERROR(str("slurm_launcher", "--slurm-launcher", cfg.slurm_launcher));
  RETURN_IF_ERROR(str("slurm_partition", "--slurm-partition", cfg.slurm_partition));
  RETURN_IF_ERROR(str("slurm_qos", "--slurm-qos", cfg.slurm_qos));
  RETURN_IF_ERROR(str("slurm_spot_partition", "--slurm-spot-partition", cfg.slurm_spot_partition));
  RETURN_IF_ERROR(str("slurm_spot_qos", "--slurm-spot-qos", cfg.slurm_spot_qos));
  RETURN_IF_ERROR(str("slurm_daemon_host", "--slurm-daemon-host", cfg.slurm_daemon_host));
  if (doc.contains("registry_serve") && app.count("--registry-serve") == 0) {
    if (!doc["registry_serve"].is_boolean())
      return ty::InvalidArgument("config: registry_serve must be true or false");
    cfg.registry_serve = doc["registry_serve"].get<bool>();
  }
  if (doc.contains("stop_grace_seconds") && app.count("--stop-grace") == 0) {
    if (!doc["stop_grace_seconds"].is_number())
      return ty::InvalidArgument("config: stop_grace_seconds must be a number");
    cfg.stop_grace_seconds = doc["stop_grace_seconds"].get<double>();
  }
  for (auto [key, flag, out] :
       {std::tuple{"warm_pool", "--warm-pool", &cfg.warm_pool},
        std::tuple{"network_slots", "--network-slots", &cfg.network_slots}}) {
    if (!doc.contains(key) || app.count(flag) != 0) continue;
    if (!doc[key].is_number_integer() || doc[key].get<int64_t>() < 0 ||
        doc[key].get<int64_t>() > 256) {
      return ty::InvalidArgument(std::string("config: ") + key +
                                 " must be an integer from 0 to 256");
    }
    *out = doc[key].get<int>();
  }
  if (doc.contains("replica_uid_base") && app.count("--replica-uid-base") == 0) {
    const nlohmann::json& v = doc["replica_uid_base"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxUidBase) {
      return ty::InvalidArgument("config: replica_uid_base must be an integer from 0 to " +
                                 std::to_string(kMaxUidBase));
    }
    cfg.replica_uid_base = v.get<int64_t>();
  }
  for (auto [key, flag, out] : {std::tuple{"max_replicas_per_pool", "--max-replicas-per-pool",
                                           &cfg.limits.max_replicas_per_pool},
                                std::tuple{"max_replicas_per_job", "--max-replicas-per-job",
                                           &cfg.limits.max_replicas_per_job}}) {
    if (!doc.contains(key) || app.count(flag) > 0) continue;
    if (!doc[key].is_number_integer() || doc[key].get<int64_t>() < 1) {
      return ty::InvalidArgument(std::string("config: ") + key +
                                 " must be an integer of at least 1");
    }
    *out = doc[key].get<int64_t>();
  }
  return ty::Status::Ok();
}

// A random id for this data dir, made on first start and kept: it labels every
// container so daemons sharing one engine never touch each other's replicas.
ty::Result<std::string> InstanceId(const std::string& data_dir) {
  std::string path = data_dir + "/instance-id";
  {
    std::ifstream in(path);
    std::string id;
    if (in >> id && !id.empty()) return id;
  }
  std::random_device rd;
  char buf[17];
  snprintf(buf, sizeof(buf), "%08x%08x", rd(), rd());
  RETURN_IF_ERROR(ty::WriteFileAtomically(path, std::string(buf) + "\n"));
  return std::string(buf);
}

// The directory of this binary: ty-sandbox-init is installed beside it.
std::string ExecutableDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// The executor `cfg.executor` names, over this daemon's data dir and buckets.
ty::Result<std::unique_ptr<ty::executor::Executor>> MakeExecutor(const DaemonConfig& cfg,
                                                                 ty::logs::LogSink* sink) {
  if (cfg.executor == "container") {
    ty::executor::ContainerExecutor::Options o;
    o.engine_socket = cfg.engine_socket;
    o.log_sink = sink;
    ASSIGN_OR_RETURN(o.instance, InstanceId(cfg.data_dir));
    o.warm_sandboxes = cfg.warm_pool;
    o.network_slots = cfg.network_slots;
    o.sandbox_dir = cfg.data_dir + "/sandboxes";
    o.sandbox_init = ExecutableDir() + "/ty-sandbox-init";
    if (o.network_slots > 0 && ::access(o.sandbox_init.c_str(), X_OK) != 0) {
      spdlog::warn("network slots off: {} is not executable", o.sandbox_init);
      o.network_slots = 0;
    }
    o.bucket_root = cfg.bucket_root;
    o.replica_userns_base = static_cast<uint32_t>(cfg.replica_uid_base);
    o.google_registry = cfg.registry;
    ASSIGN_OR_RETURN(auto e, ty::executor::ContainerExecutor::Create(o));
    return std::unique_ptr<ty::executor::Executor>(std::move(e));
  }
  if (cfg.executor == "slurm") {
    ty::executor::SlurmExecutor::Options o;
    o.state_dir = cfg.slurm_dir.empty() ? cfg.data_dir + "/slurm" : cfg.slurm_dir;
    o.launcher =
        cfg.slurm_launcher.empty() ? ExecutableDir() + "/ty-slurm-launch" : cfg.slurm_launcher;
    o.log_sink = sink;
    o.bucket_root = cfg.bucket_root;
    o.daemon_host = cfg.slurm_daemon_host;
    o.partition = cfg.slurm_partition;
    o.qos = cfg.slurm_qos;
    o.spot_partition = cfg.slurm_spot_partition;
    o.spot_qos = cfg.slurm_spot_qos;
    o.userns_base = static_cast<uint32_t>(cfg.replica_uid_base);
    o.stop_grace_s = static_cast<int>(std::ceil(cfg.stop_grace_seconds));
    ASSIGN_OR_RETURN(auto e, ty::executor::SlurmExecutor::Create(o));
    return std::unique_ptr<ty::executor::Executor>(std::move(e));
  }
  ty::executor::ProcessExecutor::Options o;
  o.state_dir = cfg.data_dir + "/processes";
  o.bucket_root = cfg.bucket_root;
  o.log_sink = sink;
  ASSIGN_OR_RETURN(auto e, ty::executor::ProcessExecutor::Create(o));
  return std::unique_ptr<ty::executor::Executor>(std::move(e));
}

int Fail(const ty::Status& s) {
  spdlog::critical("{}", s.ToString());
  return 1;
}

void LogCapacity(const ty::scheduler::Capacity& c) {
  for (const auto& n : c.nodes) {
    spdlog::info(
        "capacity: node {}: {} vCPUs, {:.1f} GB, {} GPUs (overcommit cpu {}x, memory {}x{})",
        n.name, n.cpus, n.memory_gb, n.gpus.size(), c.cpu_overcommit, c.memory_overcommit,
        c.strict ? ", strict" : "");
  }
}

}  // namespace

// Who a replica listener's request speaks for: the job of a running replica, known by
// the container address it connects from or by the credential it carries
// (auth/replica_credentials.h). It may use the buckets its job's project owns (the
// ones mounted at /gcs) and read its own job's Logging entries; nothing else.
std::function<std::optional<ty::auth::Principal>(const std::string&, const std::string&)>
ReplicaIdentity(ty::service::JobService* service, ty::storage::ObjectStore* objects,
                std::shared_ptr<const ty::auth::ReplicaCredentials> credentials) {
  return [service, objects, credentials](
             const std::string& peer,
             const std::string& credential) -> std::optional<ty::auth::Principal> {
    std::optional<ty::service::JobService::ReplicaJob> job;
    if (credential.empty()) {
      job = service->JobOfReplicaAt(peer);
    } else if (std::optional<std::string> uid = credentials->JobOf(credential)) {
      job = service->LiveReplicaJob(*uid);
    }
    if (!job) return std::nullopt;
    ty::auth::Principal who;
    who.name = "replica of job " + job->uid + " (project " + job->project + ")";
    who.buckets = objects->BucketsOwnedBy(job->project);
    // Logging: a viewer of its project whose reads are narrowed to its own job.
    who.role = ty::auth::Role::kViewer;
    who.projects = {job->project};
    who.only_job = job->uid;
    return who;
  };
}

// The listener replicas use for the Cloud Storage API (see --replica-listen), and
// the endpoint the service puts in their environment. Local processes use the main
// listener. Null when there is none.
ty::Result<std::unique_ptr<ty::api::ApiServer>> StartReplicaApi(const DaemonConfig& cfg,
                                                                ty::service::JobService* service,
                                                                ty::storage::ObjectStore* objects,
                                                                int main_port) {
  if (cfg.executor == "process" || cfg.replica_listen.empty()) {
    // Process replicas use the main listener; over HTTPS their Storage clients
    // (plain http:// to an emulator host) could not.
    const bool plain_main = cfg.tls_cert_file.empty();
    if (cfg.executor == "process" && !plain_main) {
      spdlog::warn("the main listener speaks HTTPS: process replicas get no STORAGE_EMULATOR_HOST");
    }
    service->SetReplicaStoragePort(cfg.executor != "process" || !plain_main ? 0 : main_port);
    return std::unique_ptr<ty::api::ApiServer>();
  }
  ASSIGN_OR_RETURN(auto where, SplitHostPort(cfg.replica_listen, "--replica-listen"));
  ty::api::ApiServer::Options o;
  o.host = where.first;
  o.port = where.second;
  // Port 0: the port of the previous run when it is free again, because replicas that
  // outlive a restart keep STORAGE_EMULATOR_HOST as they were launched with.
  const std::string port_record = cfg.data_dir + "/replica-port";
  int previous = 0;
  if (o.port == 0) {
    std::ifstream in(port_record);
    if (!(in >> previous) || previous <= 0 || previous > 65535) previous = 0;
    o.port = previous;
  }
  o.storage = objects;
  o.storage_only = true;  // Replicas get Cloud Storage, never the jobs API.
  // The daemon's secret outlives restarts, and so do the credentials of replicas
  // that run on meanwhile.
  ASSIGN_OR_RETURN(ty::auth::ReplicaCredentials credentials,
                   ty::auth::ReplicaCredentials::Open(cfg.data_dir + "/replica-secret"));
  auto shared = std::make_shared<const ty::auth::ReplicaCredentials>(std::move(credentials));
  if (cfg.executor == "slurm") {
    // Slurm replicas connect from their hosts' addresses, which every job on a host
    // shares: they are known by their job's credential alone (any address may try;
    // nothing is served without one).
    service->SetReplicaCredentials(
        [shared](const std::string& job_uid) { return shared->TokenFor(job_uid); });
  } else {
    o.allowed_peers = kContainerNetworks;
  }
  o.replica_identity = ReplicaIdentity(service, objects, shared);
  ASSIGN_OR_RETURN(std::unique_ptr<ty::api::ApiServer> server,
                   ty::api::ApiServer::Create(service, o));
  ty::Result<int> bound = server->Start();
  if (!bound.ok() && previous != 0) {  // Taken meanwhile: any free port, as asked.
    spdlog::warn(
        "replica listener: port {} of the previous run is taken ({}); running "
        "replicas of that run lose the Storage API",
        previous, bound.status().message());
    o.port = 0;
    ASSIGN_OR_RETURN(server, ty::api::ApiServer::Create(service, o));
    bound = server->Start();
  }
  ASSIGN_OR_RETURN(int port, std::move(bound));
  if (where.second == 0)
    RETURN_IF_ERROR(ty::WriteFileAtomically(port_record, std::to_string(port)));
  service->SetReplicaStoragePort(port);
  spdlog::info("replicas reach the storage API on port {} ({})", port,
               cfg.executor == "slurm" ? "with their job's credential" : "from container networks");
  return server;
}

// The Slurm executor's flags (executor/slurm_executor.h).
void AddSlurmFlags(CLI::App& app, DaemonConfig& cfg) {
  app.add_option("--slurm-dir", cfg.slurm_dir,
                 "Slurm executor: attempt directories, on a filesystem every Slurm host mounts "
                 "at the same path (default <data-dir>/slurm)");
  app.add_option("--slurm-launcher", cfg.slurm_launcher,
                 "Slurm executor: ty-slurm-launch as the hosts run it (default beside trainyardd)");
  app.add_option("--slurm-partition", cfg.slurm_partition, "Slurm executor: sbatch --partition");
  app.add_option("--slurm-qos", cfg.slurm_qos, "Slurm executor: sbatch --qos");
  app.add_option("--slurm-spot-partition", cfg.slurm_spot_partition,
                 "Slurm executor: the partition of spot jobs (a preemptible one)");
  app.add_option("--slurm-spot-qos", cfg.slurm_spot_qos,
                 "Slurm executor: the QOS of spot jobs (a preemptible one)");
  app.add_option("--slurm-daemon-host", cfg.slurm_daemon_host,
                 "Slurm executor: the address replicas on the hosts reach this machine by");
}

// Every flag, each also a key of the --config file (ApplyConfigFile).
void AddFlags(CLI::App& app, DaemonConfig& cfg, std::string* config_path) {
  app.add_option("--listen", cfg.listen,
                 "HOST:PORT to serve the REST API on; port 0 picks a free one");
  app.add_option("--port-file", cfg.port_file, "Write the bound port here (useful with port 0)");
  app.add_option("--data-dir", cfg.data_dir,
                 "Where the database, logs and buckets live (default ~/.local/share/trainyard)");
  app.add_option("--executor", cfg.executor,
                 "container (podman/Docker Engine API), slurm (sbatch onto a Slurm cluster) or "
                 "process")
      ->check(CLI::IsMember({"container", "slurm", "process"}));
  AddSlurmFlags(app, cfg);
  app.add_option("--engine-socket", cfg.engine_socket,
                 "Docker Engine API unix socket (podman or Docker)");
  app.add_option(
      "--bucket-root", cfg.bucket_root,
      "Host directory holding one directory per gs:// bucket (default <data-dir>/buckets)");
  app.add_option("--stop-grace", cfg.stop_grace_seconds,
                 "Seconds between SIGTERM and SIGKILL when stopping replicas");
  app.add_option(
         "--warm-pool", cfg.warm_pool,
         "Containers to keep started ahead of demand for job shapes seen before, so their next "
         "attempts start without the engine's create/start (container executor; 0 = off)")
      ->check(CLI::Range(0, 256));
  app.add_option("--network-slots", cfg.network_slots,
                 "Network namespaces kept set up between single-replica jobs, which join one "
                 "instead of the engine making one per container (podman; 0 = off)")
      ->check(CLI::Range(0, 256));
  app.add_option("--replica-uid-base", cfg.replica_uid_base,
                 "Host uid (and gid) of root in every replica's user namespace of 65536 ids, so "
                 "root in a replica is not root on the host; buckets and metrics directories "
                 "are given to it (podman; 0 = replicas use the host's ids)")
      ->check(CLI::Range(int64_t{0}, kMaxUidBase));
  app.add_option("--max-replicas-per-pool", cfg.limits.max_replicas_per_pool,
                 "Largest replica count of one worker pool a job may ask for (default 1024)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-replicas-per-job", cfg.limits.max_replicas_per_job,
                 "Largest total replica count of a job (default 1024)")
      ->check(CLI::PositiveNumber);
  app.add_option("--replica-listen", cfg.replica_listen,
                 "HOST:PORT where containers reach the Cloud Storage API (STORAGE_EMULATOR_HOST "
                 "in replicas; only container networks may connect); \"\" = off");
  app.add_option("--tls-cert-file", cfg.tls_cert_file,
                 "PEM certificate (chain) for HTTPS on --listen; with --tls-key-file");
  app.add_option("--tls-key-file", cfg.tls_key_file,
                 "PEM private key of --tls-cert-file (keep it readable by the daemon only)");
  app.add_option("--registry", cfg.registry,
                 "HOST:PORT of the registry that serves gcr.io and *.pkg.dev image names (pushed "
                 "with docker push after `trainyard config registry`); \"\" = none");
  app.add_option("--registry-serve", cfg.registry_serve,
                 "Run that registry (docker-registry, images under <data-dir>/registry); false = "
                 "use one already there");
  app.add_option(
      "--config", *config_path,
      "YAML file with the same keys (listen, data_dir, executor, engine_socket, bucket_root, "
      "port_file, stop_grace_seconds, warm_pool, max_replicas_per_pool, max_replicas_per_job, "
      "replica_listen, tls_cert_file, tls_key_file, registry, registry_serve, slurm_dir, "
      "slurm_launcher, slurm_partition, slurm_qos, slurm_spot_partition, slurm_spot_qos, "
      "slurm_daemon_host), and capacity, "
      "overcommit, strict, quotas, "
      "machine_types, tokens "
      "(README)");
}

// Blocks the stop signals in every thread (threads started later inherit the
// mask); main waits for them with sigwait.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return stop_signals;
}

// The Cloud Storage JSON API over the same directories replicas see at /gcs; it also
// knows which project owns each bucket, which decides what replicas see. Where replicas
// run in a user namespace, what it writes belongs to their root.
ty::Result<std::unique_ptr<ty::storage::ObjectStore>> OpenObjectStore(
    const DaemonConfig& cfg, const ty::executor::Executor* executor) {
  ASSIGN_OR_RETURN(auto objects,
                   ty::storage::ObjectStore::Open(cfg.bucket_root, cfg.data_dir + "/storage",
                                                  ty::SystemClock::Get()));
  if (uint32_t base = executor->ReplicaUidBase(); base > 0) {
    RETURN_IF_ERROR(objects->SetObjectOwner(base));
    spdlog::info("replicas run in user namespaces: their root is uid {} on the host", base);
  }
  return objects;
}

// The service's options from the config: limits, grace, admission (its capacity
// logged) and the bucket owners `buckets` keeps.
ty::Result<ty::service::JobServiceOptions> ServiceOptionsFor(const DaemonConfig& cfg,
                                                             ty::storage::ObjectStore* buckets) {
  ty::service::JobServiceOptions so;
  so.stop_grace = static_cast<ty::DurationMicros>(cfg.stop_grace_seconds * 1e6);
  so.limits = cfg.limits;
  // Each trial job's cloudml-hypertune file (service/trial_jobs.h).
  so.trial_root = cfg.data_dir + "/trials";
  if (cfg.executor == "slurm") {
    // Admission counts the cluster's nodes, not this machine's (Slurm places the jobs).
    ASSIGN_OR_RETURN(auto nodes, ty::executor::SlurmExecutor::ReadNodes({}));
    std::vector<ty::service::HostInventory> hosts;
    for (const auto& n : nodes) {
      ty::service::HostInventory h;
      h.name = n.name;
      h.cpus = n.cpus;
      h.memory_gb = n.memory_gb;
      for (int i = 0; i < n.gpus; ++i) h.gpus.push_back({n.gpu_type, i});
      hosts.push_back(std::move(h));
    }
    ASSIGN_OR_RETURN(so.admission,
                     ty::service::AdmissionOptionsForCluster(cfg.admission_doc, hosts));
  } else {
    ASSIGN_OR_RETURN(so.admission, ty::service::AdmissionOptionsFromConfig(
                                       cfg.admission_doc, ty::service::DetectHost()));
  }
  LogCapacity(so.admission.capacity);
  so.claim_buckets = [buckets](const std::string& project, const std::vector<std::string>& b) {
    return buckets->ClaimBuckets(project, b);
  };
  so.project_buckets = [buckets](const std::string& project) {
    return buckets->BucketsOwnedBy(project);
  };
  return so;
}

// Opens the backends, starts the servers and the service, and runs until a stop
// signal arrives.
int Serve(const DaemonConfig& cfg, const std::string& host, int port,
          const ty::auth::TokenTable& tokens, sigset_t stop_signals) {
  auto store = ty::store::SqliteJobStore::Open(cfg.data_dir + "/trainyard.db");
  if (!store.ok()) return Fail(store.status());
  auto logs = ty::logs::LogStore::Create(cfg.data_dir + "/logs");
  if (!logs.ok()) return Fail(logs.status());

  auto executor = MakeExecutor(cfg, logs->get());
  if (!executor.ok()) return Fail(executor.status());
  std::unique_ptr<ty::executor::LocalRegistry> registry;
  if (cfg.executor != "process" && !cfg.registry.empty() && cfg.registry_serve) {
    registry = std::make_unique<ty::executor::LocalRegistry>(ty::executor::LocalRegistry::Options{
        .address = cfg.registry, .storage_dir = cfg.data_dir + "/registry/storage"});
    if (ty::Status s = registry->Start(); !s.ok()) return Fail(s);
  }

  auto objects = OpenObjectStore(cfg, executor->get());
  if (!objects.ok()) return Fail(objects.status());
  auto so = ServiceOptionsFor(cfg, objects->get());
  if (!so.ok()) return Fail(so.status());
  auto service = ty::service::JobService::Create(store->get(), executor->get(), logs->get(),
                                                 ty::SystemClock::Get(), *so);
  if (!service.ok()) return Fail(service.status());

  // The servers start before the service, whose first launches need the port
  // replicas reach the storage API on (requests wait for the loop meanwhile).
  ty::api::ApiServer::Options ao;
  ao.host = host;
  ao.port = port;
  ao.storage = objects->get();
  ao.tokens = &tokens;
  ao.tls_cert_file = cfg.tls_cert_file;
  ao.tls_key_file = cfg.tls_key_file;
  auto api = ty::api::ApiServer::Create(service->get(), ao);
  if (!api.ok()) return Fail(api.status());
  auto bound = (*api)->Start();
  if (!bound.ok()) return Fail(bound.status());
  auto replica_api = StartReplicaApi(cfg, service->get(), objects->get(), *bound);
  if (!replica_api.ok()) return Fail(replica_api.status());
  if (ty::Status s = (*service)->Start(); !s.ok()) return Fail(s);
  if (!cfg.port_file.empty()) {
    if (ty::Status s = ty::WriteFileAtomically(cfg.port_file, std::to_string(*bound) + "\n");
        !s.ok()) {
      return Fail(s);
    }
  }
  spdlog::info("trainyardd listening on {}://{}:{} (data {}, executor {})",
               cfg.tls_cert_file.empty() ? "http" : "https", host, *bound, cfg.data_dir,
               cfg.executor);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  spdlog::info("signal {}: shutting down (running replicas keep running)", sig);
  (*api)->Stop();
  if (*replica_api) (*replica_api)->Stop();
  (*service)->Shutdown();
  return 0;
}

int main(int argc, char** argv) {
  DaemonConfig cfg;
  std::string config_path;
  CLI::App app{
      "trainyardd: self-hosted training jobs (Vertex AI custom jobs / AI Platform Training API)"};
  AddFlags(app, cfg, &config_path);
  CLI11_PARSE(app, argc, argv);

  if (!config_path.empty()) {
    if (ty::Status s = ApplyConfigFile(config_path, cfg, app); !s.ok()) return Fail(s);
  }
  if (cfg.data_dir.empty()) cfg.data_dir = DefaultDataDir();
  if (cfg.bucket_root.empty()) cfg.bucket_root = cfg.data_dir + "/buckets";
  auto listen = SplitHostPort(cfg.listen, "--listen");
  if (!listen.ok()) return Fail(listen.status());
  auto tokens = ty::auth::TokenTable::FromConfig(cfg.tokens_doc);
  if (!tokens.ok()) return Fail(tokens.status());
  if (ty::Status s = CheckListenHost(listen->first, *tokens); !s.ok()) return Fail(s);
  if (!tokens->empty()) {
    spdlog::info("access tokens: {} (every request but /healthz needs one)", tokens->size());
  }

  std::error_code ec;
  std::filesystem::create_directories(cfg.data_dir, ec);
  std::filesystem::create_directories(cfg.bucket_root, ec);
  if (ec) return Fail(ty::Internal("cannot create " + cfg.bucket_root + ": " + ec.message()));
  // Absolute, because the engine reads a relative bind-mount source as a volume name
  // ("data/buckets" failed every replica) and the process executor changes directory.
  cfg.data_dir = std::filesystem::absolute(cfg.data_dir).lexically_normal().string();
  cfg.bucket_root = std::filesystem::absolute(cfg.bucket_root).lexically_normal().string();
  return Serve(cfg, listen->first, listen->second, *tokens, BlockStopSignals());
}
