// trainyardd: the Trainyard daemon. Reads flags (and an optional YAML config:
// daemon/daemon_config.h), builds the concrete backends (SQLite store, log store,
// the container, Slurm or process executor, or the container and Slurm executors
// side by side for projects routed to each), wires them into the service and the
// HTTP API, and runs until SIGINT or SIGTERM. Only this file names every
// implementation (docs/style.md §2).
#include <signal.h>
#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "api/api_server.h"
#include "artifacts/repositories.h"
#include "auth/replica_credentials.h"
#include "auth/tokens.h"
#include "common/files.h"
#include "common/random.h"
#include "daemon/daemon_config.h"
#include "daemon/data_dir.h"
#include "daemon/periodic_backup.h"
#include "daemon/registry_auth.h"
#include "daemon/store_check.h"
#include "daemon/tensorboard_targets.h"
#include "executor/container/container_executor.h"
#include "executor/container/local_registry.h"
#include "executor/process_executor.h"
#include "executor/slurm/slurm_executor.h"
#include "gcs/object_store.h"
#include "images/google_names.h"
#include "jobstore/sqlite_job_store.h"
#include "logs/log_store.h"
#include "service/capacity_config.h"
#include "service/job_service.h"
#include "tensorboard/indexing_loop.h"
#include "tensorboard/store.h"

namespace {

using ty::daemon::DaemonConfig;

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

// A random id for this data dir, made on first start and kept: it labels every
// container so daemons sharing one engine never touch each other's replicas.
ty::Result<std::string> InstanceId(const std::string& data_dir) {
  std::string path = data_dir + "/instance-id";
  {
    std::ifstream in(path);
    std::string id;
    if (in >> id && !id.empty()) return id;
  }
  const std::string id = ty::RandomHex(*ty::SystemRandom::Get(), 16);
  RETURN_IF_ERROR(ty::WritePrivateFile(path, id + "\n"));
  return id;
}

// The directory of this binary: ty-sandbox-init is installed beside it.
std::string ExecutableDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// The executor `kind` names, over this daemon's data dir and buckets.
// `registry_credential`: set where the registry takes tokens (daemon/registry_auth.h).
ty::Result<std::unique_ptr<ty::executor::Executor>> MakeExecutor(
    const DaemonConfig& cfg, const std::string& kind, ty::logs::LogSink* sink,
    const std::function<std::string(const std::string&)>& registry_credential) {
  if (kind == "container") {
    ty::executor::ContainerExecutor::Options o;
    o.clock = ty::SystemClock::Get();
    o.random = ty::SystemRandom::Get();
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
    o.wheelhouse = cfg.wheelhouse;
    o.replica_userns_base = static_cast<uint32_t>(cfg.replica_uid_base);
    o.google_registry = cfg.registry;
    o.registry_credential = registry_credential;
    ASSIGN_OR_RETURN(auto e, ty::executor::ContainerExecutor::Create(o));
    return std::unique_ptr<ty::executor::Executor>(std::move(e));
  }
  if (kind == "slurm") {
    ty::executor::SlurmExecutor::Options o;
    o.clock = ty::SystemClock::Get();
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
    o.registry_credential = registry_credential;
    ASSIGN_OR_RETURN(auto e, ty::executor::SlurmExecutor::Create(o));
    return std::unique_ptr<ty::executor::Executor>(std::move(e));
  }
  ty::executor::ProcessExecutor::Options o;
  o.clock = ty::SystemClock::Get();
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

void LogCapacity(const std::string& kind, const ty::scheduler::Capacity& c) {
  for (const auto& n : c.nodes) {
    spdlog::info(
        "capacity ({} executor): node {}: {} vCPUs, {:.1f} GB, {} GPUs (overcommit cpu {}x, "
        "memory {}x{})",
        kind, n.name, n.cpus, n.memory_gb, n.gpus.size(), c.cpu_overcommit, c.memory_overcommit,
        c.strict ? ", strict" : "");
  }
}

}  // namespace

// Who a replica listener's request speaks for: the job of a running replica, known by
// the container address it connects from or by the credential it carries
// (auth/replica_credentials.h). It may use the buckets its job's project owns (the
// ones mounted at /gcs) and read its own job's Logging entries; nothing else.
std::function<std::optional<ty::auth::Principal>(const std::string&, const std::string&)>
ReplicaIdentity(ty::service::JobService* service, ty::gcs::ObjectStore* objects,
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

// The port a replica-port record holds ("45123\n"); 0 when it holds anything else.
static int PortIn(const std::string& text) {
  int port = 0;
  const char* end = text.data() + text.size();
  while (end > text.data() && std::isspace(static_cast<unsigned char>(end[-1]))) --end;
  auto [at, ec] = std::from_chars(text.data(), end, port);
  return ec == std::errc() && at == end && port > 0 && port <= 65535 ? port : 0;
}

// The listener replicas use for the Cloud Storage API (see --replica-listen), and
// the endpoint the service puts in their environment. Local processes use the main
// listener. Null when there is none.
// The replica listener's port of the previous run (0: none). Read back as untrusted: a
// regular file of a few bytes (a FIFO would block the start).
int PreviousReplicaPort(const std::string& record) {
  ty::Result<std::string> text = ty::ReadStateFile(record, 16);
  return text.ok() ? PortIn(*text) : 0;
}

// Written only when it changed, and a failure (a full data disk) is said, never fatal:
// the daemon must start on a full disk to finish what waits for room.
void RememberReplicaPort(const std::string& record, int port) {
  if (ty::Status s = ty::WritePrivateFile(record, std::to_string(port)); !s.ok()) {
    spdlog::warn("replica listener: cannot record port {} for the next start: {}", port,
                 s.message());
  }
}

using ReplicaListener = std::pair<std::unique_ptr<ty::api::ApiServer>, int>;

// The replica listener on `o.port` (the previous run's, `previous`), or on any free port
// when that one is taken meanwhile.
ty::Result<ReplicaListener> StartReplicaListener(ty::service::JobService* service,
                                                 ty::api::ApiServer::Options o, int previous) {
  ASSIGN_OR_RETURN(std::unique_ptr<ty::api::ApiServer> server,
                   ty::api::ApiServer::Create(service, o));
  ty::Result<int> bound = server->Start();
  if (!bound.ok() && previous != 0) {
    spdlog::warn(
        "replica listener: port {} of the previous run is taken ({}); running "
        "replicas of that run lose the Storage API",
        previous, bound.status().message());
    o.port = 0;
    ASSIGN_OR_RETURN(server, ty::api::ApiServer::Create(service, o));
    bound = server->Start();
  }
  ASSIGN_OR_RETURN(int port, std::move(bound));
  return ReplicaListener{std::move(server), port};
}

ty::Result<std::unique_ptr<ty::api::ApiServer>> StartReplicaApi(
    const DaemonConfig& cfg, ty::service::JobService* service, ty::gcs::ObjectStore* objects,
    int main_port, std::shared_ptr<const ty::auth::ReplicaCredentials> shared) {
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
  const int previous = o.port == 0 ? PreviousReplicaPort(port_record) : 0;
  if (o.port == 0) o.port = previous;
  o.storage = objects;
  o.random = ty::SystemRandom::Get();
  o.storage_only = true;  // Replicas get Cloud Storage, never the jobs API.
  const bool slurm = ty::daemon::ExecutorKinds(cfg).count("slurm") > 0;
  if (slurm) {
    // Slurm replicas connect from their hosts' addresses, which every job on a host
    // shares: they are known by their job's credential alone (any address may try;
    // nothing is served without one). Container replicas beside them are still known
    // by their container's address, which only this machine's engine networks hold:
    // a remote host claiming one never completes the TCP handshake, whose answer
    // goes to the local bridge.
    service->SetReplicaCredentials(
        [shared](const std::string& job_uid) { return shared->TokenFor(job_uid); });
  } else {
    o.allowed_peers = kContainerNetworks;
  }
  o.replica_identity = ReplicaIdentity(service, objects, shared);
  ASSIGN_OR_RETURN(ReplicaListener listener, StartReplicaListener(service, o, previous));
  auto& [server, port] = listener;
  if (where.second == 0 && port != previous) RememberReplicaPort(port_record, port);
  service->SetReplicaStoragePort(port);
  spdlog::info("replicas reach the storage API on port {} ({})", port,
               slurm ? "Slurm's with their job's credential" : "from container networks");
  return std::move(server);
}

// --port-file: the bound port, for scripts and tests that asked for port 0.
ty::Status WritePortFile(const DaemonConfig& cfg, int port) {
  if (cfg.port_file.empty()) return ty::Status::Ok();
  return ty::WriteFileAtomically(cfg.port_file, std::to_string(port) + "\n");
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
ty::Result<std::unique_ptr<ty::gcs::ObjectStore>> OpenObjectStore(
    const DaemonConfig& cfg, const ty::executor::Executor* executor) {
  ASSIGN_OR_RETURN(auto objects,
                   ty::gcs::ObjectStore::Open(cfg.bucket_root, cfg.data_dir + "/storage",
                                              ty::SystemClock::Get()));
  for (const std::string& why : objects->set_aside()) spdlog::error("storage: {}", why);
  if (uint32_t base = executor->ReplicaUidBase(); base > 0) {
    RETURN_IF_ERROR(objects->SetObjectOwner(base));
    spdlog::info("replicas run in user namespaces: their root is uid {} on the host", base);
  }
  return objects;
}

// What the jobs of executor `kind` are admitted against (its capacity logged): a
// Slurm cluster's nodes (Slurm places the jobs), else this machine.
ty::Result<ty::service::AdmissionOptions> AdmissionFor(const DaemonConfig& cfg,
                                                       const std::string& kind) {
  ty::service::AdmissionOptions admission;
  if (kind == "slurm") {
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
    ASSIGN_OR_RETURN(admission, ty::service::AdmissionOptionsForCluster(cfg.admission_doc, hosts));
  } else {
    ASSIGN_OR_RETURN(admission, ty::service::AdmissionOptionsFromConfig(cfg.admission_doc,
                                                                        ty::service::DetectHost()));
  }
  LogCapacity(kind, admission.capacity);
  return admission;
}

// The service's options from the config: limits, grace, admission, the bucket owners
// `buckets` keeps, and the executors (`executors`, by kind) beside the default one
// with the projects routed to each.
ty::Result<ty::service::JobServiceOptions> ServiceOptionsFor(
    const DaemonConfig& cfg, ty::gcs::ObjectStore* buckets,
    const std::map<std::string, std::unique_ptr<ty::executor::Executor>>& executors) {
  ty::service::JobServiceOptions so;
  so.random = [] { return ty::SystemRandom::Get()->Next(); };  // Job ids.
  so.jobs.stop_grace = static_cast<ty::DurationMicros>(cfg.stop_grace_seconds * 1e6);
  so.jobs.limits = cfg.limits;
  so.max_work_bytes = ty::daemon::MaxWorkBytes(cfg);
  spdlog::info("memory budget of unfinished work: {} MiB (max_daemon_memory)",
               so.max_work_bytes >> 20);
  so.data_disk = [dir = cfg.data_dir] { return ty::service::MeasureDisk(dir); };
  so.backup_dir = cfg.data_dir + "/backups";
  if (cfg.data_reserve_mb >= 0)
    so.data_reserve_bytes = static_cast<uint64_t>(cfg.data_reserve_mb) << 20;
  // Each trial job's cloudml-hypertune file (machines/trial_jobs.h).
  so.jobs.trial_root = cfg.data_dir + "/trials";
  so.executor_name = cfg.executor;
  ASSIGN_OR_RETURN(so.admission, AdmissionFor(cfg, cfg.executor));
  for (const auto& [kind, executor] : executors) {
    if (kind == cfg.executor) continue;
    ty::service::JobServiceOptions::OtherExecutor other;
    other.name = kind;
    other.executor = executor.get();
    ASSIGN_OR_RETURN(other.admission, AdmissionFor(cfg, kind));
    for (const auto& [project, routed] : cfg.project_executors) {
      if (routed == kind) other.projects.push_back(project);
    }
    spdlog::info("projects on the {} executor: {}", kind, fmt::join(other.projects, ", "));
    so.other_executors.push_back(std::move(other));
  }
  so.claim_buckets = [buckets](const std::string& project, const std::vector<std::string>& b) {
    return buckets->ClaimBuckets(project, b);
  };
  so.jobs.project_buckets = [buckets](const std::string& project) {
    return buckets->BucketsOwnedBy(project);
  };
  return so;
}

// The executors of every kind this daemon runs, by kind.
ty::Result<std::map<std::string, std::unique_ptr<ty::executor::Executor>>> MakeExecutors(
    const DaemonConfig& cfg, ty::logs::LogSink* sink,
    const std::function<std::string(const std::string&)>& registry_credential) {
  std::map<std::string, std::unique_ptr<ty::executor::Executor>> executors;
  for (const std::string& kind : ty::daemon::ExecutorKinds(cfg)) {
    auto made = MakeExecutor(cfg, kind, sink, registry_credential);
    if (!made.ok()) return made.status().WithContext(kind + " executor");
    executors[kind] = std::move(made).value();
  }
  return executors;
}

// The registry's routes: GET /registry/token's settings (the daemon's tokens, and a
// live job's credential for the daemon's own pulls on its behalf) where the registry
// takes tokens, and the HTTPS authority where it is served over HTTPS.
ty::api::RegistryTokenService RegistryServiceFor(
    const ty::daemon::RegistryKeys& keys, const ty::auth::TokenTable* tokens,
    ty::service::JobService* service, ty::gcs::ObjectStore* objects,
    std::shared_ptr<const ty::auth::ReplicaCredentials> credentials) {
  ty::api::RegistryTokenService out;
  if (keys.tls) out.ca_pem = keys.tls->ca_pem;
  if (!keys.issuer) return out;
  auto identity = ReplicaIdentity(service, objects, std::move(credentials));
  return {.issuer = keys.issuer.get(),
          .tokens = tokens,
          .job = [identity](const std::string& credential) { return identity("", credential); },
          .shared_projects = ty::images::SharedImageProjects(),
          .service = ty::daemon::kRegistryService,
          .issuer_name = ty::daemon::kRegistryIssuer,
          .now_s = [] { return ty::SystemClock::Get()->Now() / 1000000; },
          .ca_pem = out.ca_pem};
}

// The servers and the service, running until a stop signal.
struct Running {
  std::unique_ptr<ty::service::JobService>& service;
  std::vector<std::unique_ptr<ty::executor::LocalRegistry>>& registries;
  std::unique_ptr<ty::api::ApiServer>& api;
  std::unique_ptr<ty::api::ApiServer>& replica_api;
};

// Waits for a stop signal, then stops in the order that lets nothing start anew: no
// launch (a launch in flight is finished or never started; the API may still be
// draining requests), and no registry started again after the signal that began the
// shutdown ended the registry too.
void RunUntilStopped(sigset_t stop_signals, Running r) {
  int sig = 0;
  sigwait(&stop_signals, &sig);
  spdlog::info("signal {}: shutting down (running replicas keep running)", sig);
  r.service->BeginShutdown();
  for (const auto& registry : r.registries) registry->Stop();
  r.api->Stop();
  if (r.replica_api) r.replica_api->Stop();
  r.service->Shutdown();
}

// Scheduled copies of the store when the config asks for them (backup_every_minutes).
std::unique_ptr<ty::daemon::PeriodicBackup> StartBackups(const DaemonConfig& cfg,
                                                         ty::service::JobService* service) {
  if (cfg.backup_every_minutes <= 0) return nullptr;
  return std::make_unique<ty::daemon::PeriodicBackup>(
      service, cfg.data_dir + "/backups/kept",
      static_cast<ty::DurationMicros>(cfg.backup_every_minutes * 60e6),
      static_cast<int>(cfg.backup_keep));
}

// What the daemon keeps beside jobs: Artifact Registry's repositories, and Vertex AI
// TensorBoard's store (a job's tensorboard is checked at submit) with its indexer (told
// as each job ends, through the service's on_finished). They must outlive the service.
struct ResourceStores {
  std::unique_ptr<ty::artifacts::Repositories> repositories;
  std::unique_ptr<ty::tensorboard::Store> tensorboards;
  std::unique_ptr<ty::tensorboard::IndexingLoop> indexing;
};

ty::Result<ResourceStores> OpenResourceStores(const DaemonConfig& cfg,
                                              ty::service::JobServiceOptions* so) {
  ResourceStores r;
  ASSIGN_OR_RETURN(r.repositories,
                   ty::artifacts::Repositories::Open(cfg.data_dir + "/artifact-repositories",
                                                     ty::SystemClock::Get()));
  ASSIGN_OR_RETURN(r.tensorboards, ty::tensorboard::Store::Open(cfg.data_dir + "/tensorboards.db",
                                                                ty::SystemClock::Get()));
  r.indexing = std::make_unique<ty::tensorboard::IndexingLoop>(r.tensorboards.get());
  so->check_tensorboard = [boards = r.tensorboards.get()](const std::string& project,
                                                          const std::string& name) {
    return ty::daemon::CheckJobTensorboard(*boards, project, name);
  };
  so->jobs.on_finished = [loop = r.indexing.get(),
                          root = cfg.bucket_root](const ty::model::Job& job) {
    if (auto target = ty::daemon::TensorboardTarget(job, root)) loop->Ended(*target);
  };
  return r;
}

// Vertex AI TensorBoard: the indexer, following every unfinished job that names a
// tensorboard (daemon/tensorboard_targets.h), a pass a second, and a last one as each
// ends (wired to the service's on_finished before it is made).
void StartTensorboardIndexing(const DaemonConfig& cfg, ty::service::JobService* service,
                              ty::tensorboard::Store* tensorboards,
                              ty::tensorboard::IndexingLoop* indexing) {
  auto targets = [service, root = cfg.bucket_root] {
    std::vector<ty::tensorboard::IndexTarget> out;
    for (const ty::model::Job& job : service->LiveJobsWhere(ty::daemon::IndexesTensorboard)) {
      if (auto target = ty::daemon::TensorboardTarget(job, root)) out.push_back(*target);
    }
    return out;
  };
  // Jobs that ended while no daemon ran get the last pass they missed.
  auto ended_while_away = [service, tensorboards, root = cfg.bucket_root] {
    ty::Result<ty::TimeMicros> since = tensorboards->IndexedThrough();
    return ty::daemon::EndedSince(*service, since.ok() ? *since : 0, root);
  };
  indexing->Start(std::move(targets), 1'000'000, std::move(ended_while_away));
}

// The store, once what daemon/store_check.h checks holds (or its loss is accepted).
ty::Result<std::unique_ptr<ty::jobstore::SqliteJobStore>> OpenCheckedStore(
    const DaemonConfig& cfg) {
  ty::daemon::StoreFindings found =
      ty::daemon::CheckBeforeOpen(cfg.data_dir, cfg.accept_store_loss);
  // Judged before SQLite opens the file: it would delete a WAL beside an empty database.
  if (!found.not_writable.empty() || (found.orphan_wal_bytes > 0 && !cfg.accept_store_loss)) {
    return ty::daemon::JudgeStore(found, cfg.accept_store_loss);
  }
  ty::daemon::WalCopy wal_as_found(cfg.data_dir);
  ASSIGN_OR_RETURN(auto store, ty::jobstore::SqliteJobStore::Open(cfg.data_dir + "/trainyard.db"));
  // quick_check reads every page: bounded, so a huge store still starts in seconds.
  constexpr ty::DurationMicros kCheckBudget = 10 * 1000000;
  ASSIGN_OR_RETURN(ty::daemon::StoreFindings after,
                   ty::daemon::CheckAfterOpen(store.get(), cfg.data_dir + "/logs", kCheckBudget,
                                              cfg.accept_store_loss));
  after.orphan_wal_bytes = found.orphan_wal_bytes;
  ty::Status judged = ty::daemon::JudgeStore(after, cfg.accept_store_loss);
  if (!after.damage.empty() || !after.lost_jobs.empty()) {
    // What SQLite dropped may be in the WAL as it was: kept, never deleted.
    if (std::string kept = wal_as_found.Keep(); !kept.empty()) {
      spdlog::warn("store: the write-ahead log as found at start is kept as {}", kept);
      if (!judged.ok())
        judged = ty::FailedPrecondition(judged.message() +
                                        " (the write-ahead log as found is kept as " + kept + ")");
    }
  }
  RETURN_IF_ERROR(judged);
  return store;
}

// The daemon's secret outlives restarts, and so do the credentials of replicas that
// run on meanwhile; a job's credential also pulls its images where the registry takes
// tokens.
ty::Result<std::shared_ptr<const ty::auth::ReplicaCredentials>> OpenReplicaCredentials(
    const DaemonConfig& cfg) {
  ASSIGN_OR_RETURN(ty::auth::ReplicaCredentials credentials,
                   ty::auth::ReplicaCredentials::Open(cfg.data_dir + "/replica-secret"));
  return std::make_shared<const ty::auth::ReplicaCredentials>(std::move(credentials));
}

// The public API server's options but for the service's parts (artifacts, registry tokens).
ty::api::ApiServer::Options ApiOptionsFor(const DaemonConfig& cfg, const std::string& host,
                                          int port, ty::gcs::ObjectStore* objects,
                                          const ty::auth::TokenTable& tokens) {
  ty::api::ApiServer::Options ao;
  ao.host = host;
  ao.port = port;
  ao.storage = objects;
  ao.random = ty::SystemRandom::Get();
  ao.tokens = &tokens;
  ao.tls_cert_file = cfg.tls_cert_file;
  ao.tls_key_file = cfg.tls_key_file;
  return ao;
}

// Opens the backends, starts the servers and the service, and runs until a stop
// signal arrives.
int Serve(const DaemonConfig& cfg, const std::string& host, int port,
          const ty::auth::TokenTable& tokens, sigset_t stop_signals) {
  auto store = OpenCheckedStore(cfg);
  if (!store.ok()) return Fail(store.status());
  auto logs = ty::logs::LogStore::Create(cfg.data_dir + "/logs");
  if (!logs.ok()) return Fail(logs.status());

  auto credentials = OpenReplicaCredentials(cfg);
  if (!credentials.ok()) return Fail(credentials.status());
  const std::shared_ptr<const ty::auth::ReplicaCredentials>& shared = *credentials;
  auto registry_keys = ty::daemon::OpenRegistryKeys(cfg, tokens);
  if (!registry_keys.ok()) return Fail(registry_keys.status());
  const ty::auth::RegistryTokenIssuer* issuer = registry_keys->issuer.get();
  std::function<std::string(const std::string&)> registry_credential;
  if (issuer)
    registry_credential = [shared](const std::string& uid) { return shared->TokenFor(uid); };

  auto executors = MakeExecutors(cfg, logs->get(), registry_credential);
  if (!executors.ok()) return Fail(executors.status());
  ty::executor::Executor* executor = executors->at(cfg.executor).get();
  // The container and Slurm executors, the only ones that share a daemon, give
  // replicas the same user-namespace root (--replica-uid-base).
  auto objects = OpenObjectStore(cfg, executor);
  if (!objects.ok()) return Fail(objects.status());
  auto so = ServiceOptionsFor(cfg, objects->get(), *executors);
  if (!so.ok()) return Fail(so.status());
  auto resources = OpenResourceStores(cfg, &*so);
  if (!resources.ok()) return Fail(resources.status());
  so->images_scoped_to_projects = issuer != nullptr;
  auto service = ty::service::JobService::Create(store->get(), executor, logs->get(),
                                                 ty::SystemClock::Get(), *so);
  if (!service.ok()) return Fail(service.status());

  // The servers start before the service, whose first launches need the port
  // replicas reach the storage API on (requests wait for the loop meanwhile).
  ty::api::ApiServer::Options ao = ApiOptionsFor(cfg, host, port, objects->get(), tokens);
  ao.artifacts = resources->repositories.get();
  ao.tensorboards = resources->tensorboards.get();
  ao.registry_tokens =
      RegistryServiceFor(*registry_keys, &tokens, service->get(), objects->get(), shared);
  auto api = ty::api::ApiServer::Create(service->get(), ao);
  if (!api.ok()) return Fail(api.status());
  auto bound = (*api)->Start();
  if (!bound.ok()) return Fail(bound.status());
  // After the bind: the registry's config names the token service's port.
  auto registry = ty::daemon::StartRegistry(cfg, host, *bound, *registry_keys);
  if (!registry.ok()) return Fail(registry.status());
  auto replica_api = StartReplicaApi(cfg, service->get(), objects->get(), *bound, shared);
  if (!replica_api.ok()) return Fail(replica_api.status());
  if (ty::Status s = (*service)->Start(); !s.ok()) return Fail(s);
  if (ty::Status s = WritePortFile(cfg, *bound); !s.ok()) return Fail(s);
  spdlog::info("trainyardd listening on {}://{}:{} (data {}, executor {})",
               cfg.tls_cert_file.empty() ? "http" : "https", host, *bound, cfg.data_dir,
               fmt::join(ty::daemon::ExecutorKinds(cfg), " and "));
  std::unique_ptr<ty::daemon::PeriodicBackup> backups = StartBackups(cfg, service->get());
  StartTensorboardIndexing(cfg, service->get(), resources->tensorboards.get(),
                           resources->indexing.get());
  RunUntilStopped(stop_signals, {*service, *registry, *api, *replica_api});
  resources->indexing->Stop();
  if (backups) backups->Stop();
  return 0;
}

int main(int argc, char** argv) {
  DaemonConfig cfg;
  std::string config_path;
  CLI::App app{
      "trainyardd: self-hosted training jobs (Vertex AI custom jobs / AI Platform Training API)"};
  ty::daemon::AddFlags(app, cfg, &config_path);
  CLI11_PARSE(app, argc, argv);

  if (!config_path.empty()) {
    if (ty::Status s = ty::daemon::ApplyConfigFile(config_path, cfg, app); !s.ok()) return Fail(s);
  }
  if (cfg.data_dir.empty()) cfg.data_dir = ty::daemon::DefaultDataDir();
  if (cfg.bucket_root.empty()) cfg.bucket_root = cfg.data_dir + "/buckets";
  if (cfg.wheelhouse.empty()) cfg.wheelhouse = cfg.data_dir + "/wheelhouse";
  auto listen = SplitHostPort(cfg.listen, "--listen");
  if (!listen.ok()) return Fail(listen.status());
  auto tokens = ty::auth::TokenTable::FromConfig(cfg.tokens_doc);
  if (!tokens.ok()) return Fail(tokens.status());
  if (ty::Status s = CheckListenHost(listen->first, *tokens); !s.ok()) return Fail(s);
  if (ty::Status s = ty::daemon::CheckRegistryAddress(cfg, *tokens); !s.ok()) return Fail(s);
  if (!tokens->empty()) {
    spdlog::info("access tokens: {} (every request but /healthz needs one)", tokens->size());
  }

  std::error_code ec;
  // Private from its first moment (daemon/data_dir.h); an older, wider one is
  // narrowed below.
  std::filesystem::create_directories(
      std::filesystem::absolute(cfg.data_dir, ec).lexically_normal().parent_path(), ec);
  ::mkdir(cfg.data_dir.c_str(), 0700);
  // Said as what it is (not as the first file that could not be made).
  if (ty::daemon::StoreFindings pre = ty::daemon::CheckBeforeOpen(cfg.data_dir, false);
      !pre.not_writable.empty()) {
    return Fail(ty::daemon::JudgeStore(pre, cfg.accept_store_loss));
  }
  for (const std::string& dir : {cfg.bucket_root, cfg.wheelhouse}) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Fail(ty::Internal("cannot create " + dir + ": " + ec.message()));
  }
  if (ty::Status s = ty::daemon::SecureDataDir(cfg.data_dir); !s.ok()) return Fail(s);
  // Absolute, because the engine reads a relative bind-mount source as a volume name
  // ("data/buckets" failed every replica) and the process executor changes directory.
  cfg.data_dir = std::filesystem::absolute(cfg.data_dir).lexically_normal().string();
  cfg.bucket_root = std::filesystem::absolute(cfg.bucket_root).lexically_normal().string();
  cfg.wheelhouse = std::filesystem::absolute(cfg.wheelhouse).lexically_normal().string();
  return Serve(cfg, listen->first, listen->second, *tokens, BlockStopSignals());
}
