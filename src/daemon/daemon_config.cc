#include "daemon/daemon_config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "format/yaml_json.h"
#include "model/resource_ids.h"
#include "service/capacity_config.h"

namespace ty::daemon {
namespace {

// Hands the admission keys and `tokens` their documents; InvalidArgument for a key
// nobody reads (a typo must not pass silently).
Status SortConfigKeys(const std::string& path, const nlohmann::json& doc, DaemonConfig& cfg) {
  static const char* kKnown[] = {"listen",
                                 "port_file",
                                 "data_dir",
                                 "executor",
                                 "engine_socket",
                                 "bucket_root",
                                 "wheelhouse",
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
                                 "slurm_daemon_host",
                                 "project_executors",
                                 "data_reserve_mb",
                                 "backup_every_minutes",
                                 "backup_keep"};
  const auto& admission_keys = service::AdmissionConfigKeys();
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
      return InvalidArgument("config " + path + ": unknown key \"" + it.key() + "\"");
    }
  }
  return Status::Ok();
}

// The flags of the data directory's safety: its reserve, backups, and accepting loss.
void AddStoreFlags(CLI::App& app, DaemonConfig& cfg) {
  app.add_flag("--accept-store-loss", cfg.accept_store_loss,
               "Start although the job store was found damaged or missing jobs whose logs "
               "exist: what is lost is listed and its files kept aside (never deleted)");
  app.add_option("--backup-every-minutes", cfg.backup_every_minutes,
                 "Copy the job store every this many minutes into <data-dir>/backups/kept "
                 "(while jobs run); 0 = never (default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--backup-keep", cfg.backup_keep,
                 "How many scheduled copies to keep, newest first (default 7)")
      ->check(CLI::PositiveNumber);
  app.add_option("--data-reserve-mb", cfg.data_reserve_mb,
                 "MiB kept free on the data disk: below it submits are refused (429) and "
                 "/healthz is degraded (default: the smaller of 256 MiB and 5% of the disk)")
      ->check(CLI::NonNegativeNumber);
}

// The Slurm executor's flags (executor/slurm/slurm_executor.h).
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

// project_executors: {project: executor}. Only the container and Slurm executors
// share a daemon: the process executor runs replicas as the daemon's own user,
// which the buckets' ownership (the replicas' user-namespace root) cannot serve too.
Status ReadProjectExecutors(const std::string& path, const nlohmann::json& doc, DaemonConfig& cfg) {
  if (!doc.contains("project_executors")) return Status::Ok();
  const nlohmann::json& routes = doc["project_executors"];
  const std::string where = "config " + path + ": project_executors";
  if (!routes.is_object()) return InvalidArgument(where + " must map project ids to executors");
  for (auto it = routes.begin(); it != routes.end(); ++it) {
    if (Status s = model::CheckProjectId(it.key()); !s.ok()) {
      return InvalidArgument(where + ": " + s.message());
    }
    const std::string kind = it->is_string() ? it->get<std::string>() : "";
    if (kind != "container" && kind != "slurm") {
      return InvalidArgument(where + "." + it.key() + " must be container or slurm");
    }
    cfg.project_executors[it.key()] = kind;
  }
  return Status::Ok();
}

}  // namespace

std::string DefaultDataDir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return std::string(xdg) + "/trainyard";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/root") + "/.local/share/trainyard";
}

// The config's boolean and numeric keys, each in its range.
static Status ApplyNonStringKeys(const nlohmann::json& doc, DaemonConfig& cfg,
                                 const CLI::App& app) {
  if (doc.contains("registry_serve") && app.count("--registry-serve") == 0) {
    if (!doc["registry_serve"].is_boolean())
      return InvalidArgument("config: registry_serve must be true or false");
    cfg.registry_serve = doc["registry_serve"].get<bool>();
  }
  if (doc.contains("stop_grace_seconds") && app.count("--stop-grace") == 0) {
    if (!doc["stop_grace_seconds"].is_number())
      return InvalidArgument("config: stop_grace_seconds must be a number");
    cfg.stop_grace_seconds = doc["stop_grace_seconds"].get<double>();
  }
  for (auto [key, flag, out] :
       {std::tuple{"warm_pool", "--warm-pool", &cfg.warm_pool},
        std::tuple{"network_slots", "--network-slots", &cfg.network_slots}}) {
    if (!doc.contains(key) || app.count(flag) != 0) continue;
    if (!doc[key].is_number_integer() || doc[key].get<int64_t>() < 0 ||
        doc[key].get<int64_t>() > 256) {
      return InvalidArgument(std::string("config: ") + key + " must be an integer from 0 to 256");
    }
    *out = doc[key].get<int>();
  }
  if (doc.contains("replica_uid_base") && app.count("--replica-uid-base") == 0) {
    const nlohmann::json& v = doc["replica_uid_base"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxUidBase) {
      return InvalidArgument("config: replica_uid_base must be an integer from 0 to " +
                             std::to_string(kMaxUidBase));
    }
    cfg.replica_uid_base = v.get<int64_t>();
  }
  for (auto [key, flag, out] :
       {std::tuple{"max_replicas_per_pool", "--max-replicas-per-pool",
                   &cfg.limits.max_replicas_per_pool},
        std::tuple{"max_replicas_per_job", "--max-replicas-per-job",
                   &cfg.limits.max_replicas_per_job},
        std::tuple{"max_daemon_memory", "--max-daemon-memory", &cfg.max_daemon_memory_mb},
        std::tuple{"backup_keep", "--backup-keep", &cfg.backup_keep}}) {
    if (!doc.contains(key) || app.count(flag) > 0) continue;
    if (!doc[key].is_number_integer() || doc[key].get<int64_t>() < 1) {
      return InvalidArgument(std::string("config: ") + key + " must be an integer of at least 1");
    }
    *out = doc[key].get<int64_t>();
  }
  if (doc.contains("data_reserve_mb") && app.count("--data-reserve-mb") == 0) {
    if (!doc["data_reserve_mb"].is_number_integer() || doc["data_reserve_mb"].get<int64_t>() < 0) {
      return InvalidArgument("config: data_reserve_mb must be an integer of at least 0");
    }
    cfg.data_reserve_mb = doc["data_reserve_mb"].get<int64_t>();
  }
  if (doc.contains("backup_every_minutes") && app.count("--backup-every-minutes") == 0) {
    if (!doc["backup_every_minutes"].is_number() || doc["backup_every_minutes"].get<double>() < 0) {
      return InvalidArgument("config: backup_every_minutes must be a number of at least 0");
    }
    cfg.backup_every_minutes = doc["backup_every_minutes"].get<double>();
  }
  return Status::Ok();
}

// Applies the YAML config file's keys; flags given on the command line win.
Status ApplyConfigFile(const std::string& path, DaemonConfig& cfg, const CLI::App& app) {
  ASSIGN_OR_RETURN(nlohmann::json doc, format::ReadYamlOrJsonFile(path));
  if (!doc.is_object()) return InvalidArgument("config " + path + ": expected a mapping");
  auto str = [&](const char* key, const char* flag, std::string& out) -> Status {
    if (!doc.contains(key)) return Status::Ok();
    if (!doc[key].is_string())
      return InvalidArgument("config " + path + ": " + key + " must be a string");
    if (app.count(flag) == 0) out = doc[key].get<std::string>();
    return Status::Ok();
  };
  RETURN_IF_ERROR(SortConfigKeys(path, doc, cfg));
  RETURN_IF_ERROR(ReadProjectExecutors(path, doc, cfg));
  RETURN_IF_ERROR(str("listen", "--listen", cfg.listen));
  RETURN_IF_ERROR(str("port_file", "--port-file", cfg.port_file));
  RETURN_IF_ERROR(str("data_dir", "--data-dir", cfg.data_dir));
  RETURN_IF_ERROR(str("executor", "--executor", cfg.executor));
  RETURN_IF_ERROR(str("engine_socket", "--engine-socket", cfg.engine_socket));
  RETURN_IF_ERROR(str("bucket_root", "--bucket-root", cfg.bucket_root));
  RETURN_IF_ERROR(str("wheelhouse", "--wheelhouse", cfg.wheelhouse));
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
  RETURN_IF_ERROR(ApplyNonStringKeys(doc, cfg, app));
  if (cfg.executor == "process" && ExecutorKinds(cfg).size() > 1) {
    return InvalidArgument("config " + path +
                           ": project_executors: the process executor runs alone (its replicas "
                           "are the daemon's own user; use container or slurm)");
  }
  return Status::Ok();
}

// How replicas are started and kept apart.
void AddReplicaFlags(CLI::App& app, DaemonConfig& cfg) {
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
}

// What one job or the daemon as a whole may hold.
void AddLimitFlags(CLI::App& app, DaemonConfig& cfg) {
  app.add_option("--max-replicas-per-pool", cfg.limits.max_replicas_per_pool,
                 "Largest replica count of one worker pool a job may ask for (default 1024)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-replicas-per-job", cfg.limits.max_replicas_per_job,
                 "Largest total replica count of a job (default 1024)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-daemon-memory", cfg.max_daemon_memory_mb,
                 "MiB of memory unfinished jobs and studies may hold; a submit past it is "
                 "refused (429) (default: an eighth of the machine's, 256 MiB to 4 GiB)")
      ->check(CLI::PositiveNumber);
}

// Where the daemon is reached: replicas' storage API, HTTPS, the image registry.
void AddEndpointFlags(CLI::App& app, DaemonConfig& cfg) {
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
  app.add_option("--wheelhouse", cfg.wheelhouse,
                 "Directory of Python wheels (and sdists) pip finds in container replicas and "
                 "package installs with no package index (default <data-dir>/wheelhouse)");
  AddReplicaFlags(app, cfg);
  AddLimitFlags(app, cfg);
  AddStoreFlags(app, cfg);
  AddEndpointFlags(app, cfg);
  app.add_option(
      "--config", *config_path,
      "YAML file with the same keys (listen, data_dir, executor, engine_socket, bucket_root, "
      "wheelhouse, "
      "port_file, stop_grace_seconds, warm_pool, max_replicas_per_pool, max_replicas_per_job, "
      "max_daemon_memory, data_reserve_mb, backup_every_minutes, backup_keep, "
      "replica_listen, tls_cert_file, tls_key_file, registry, registry_serve, slurm_dir, "
      "slurm_launcher, slurm_partition, slurm_qos, slurm_spot_partition, slurm_spot_qos, "
      "slurm_daemon_host, project_executors), and capacity, "
      "overcommit, strict, quotas, "
      "machine_types, tokens "
      "(docs/configuration.md)");
}

size_t MaxWorkBytes(const DaemonConfig& cfg) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (cfg.max_daemon_memory_mb > 0) return static_cast<size_t>(cfg.max_daemon_memory_mb) * kMiB;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  const size_t machine = pages > 0 && page > 0 ? static_cast<size_t>(pages) * page : 2048 * kMiB;
  return std::clamp(machine / 8, 256 * kMiB, 4096 * kMiB);
}

std::set<std::string> ExecutorKinds(const DaemonConfig& cfg) {
  std::set<std::string> kinds = {cfg.executor};
  for (const auto& [project, kind] : cfg.project_executors) kinds.insert(kind);
  return kinds;
}

}  // namespace ty::daemon
