// trainyardd's configuration: its flags and the keys of its --config file (the same
// names), checked as they are read so that a typo or a bad value stops the daemon
// with a message naming it.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "common/status.h"
#include "images/google_names.h"
#include "model/spec_limits.h"

namespace ty::daemon {

struct DaemonConfig {
  std::string listen = "127.0.0.1:8080";
  std::string port_file;
  std::string data_dir;
  std::string executor = "container";
  std::string engine_socket = "/run/podman/podman.sock";
  std::string bucket_root;  // Default <data_dir>/buckets.
  // Wheels pip finds in every container replica and package install, offline
  // (model::kReplicaWheelhouse). Default <data_dir>/wheelhouse.
  std::string wheelhouse;
  double stop_grace_seconds = 10;
  int warm_pool =
      0;  // Containers started ahead of demand (executor/container/warm_pool.h); 0 = none.
  // Idle network namespaces kept for single-replica jobs (executor/container/network_slots.h).
  int network_slots = 16;
  // Replicas' user namespace: container root is this host uid and gid, 65,536 ids
  // from it (executor/container/container_executor.h); 0 = the host's ids. Far above the
  // subordinate ids useradd hands out (from 100000) and any real user.
  int64_t replica_uid_base = 2000000000;
  model::SpecLimits limits;  // Bounds on accepted specs (model/spec_limits.h).
  // MiB of memory unfinished work may hold (model/work_memory.h): a submit past it is
  // refused. 0 = an eighth of the machine's memory, between 256 MiB and 4 GiB.
  int64_t max_daemon_memory_mb = 0;
  // MiB kept free on the data disk: below it submits are refused (429). -1 = the
  // default, the smaller of 256 MiB and 5 % of the disk (service/disk_reserve.h).
  int64_t data_reserve_mb = -1;
  // Scheduled copies of the job store (daemon/periodic_backup.h): every this many
  // minutes (0 = none), the newest `backup_keep` kept in <data-dir>/backups/kept.
  double backup_every_minutes = 0;
  int64_t backup_keep = 7;
  // Where containers reach the Cloud Storage API (container executor): every
  // address, so each engine network's gateway (host.containers.internal) answers,
  // but only peers in the engine's address pools are served. "" = off.
  std::string replica_listen = "0.0.0.0:0";
  // HTTPS on the main listener: PEM certificate (chain) and key; "" = plain HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;
  // The registry standing in for gcr.io and *.pkg.dev (executor/container/local_registry.h):
  // "HOST:PORT", "" = none.
  std::string registry = images::kDefaultRegistryAddress;
  bool registry_serve = true;
  // Start although the store check (daemon/store_check.h) found jobs lost; command line only.
  bool accept_store_loss = false;  // Run docker-registry there; false = one is already there.
  // The Slurm executor (executor/slurm/slurm_executor.h): attempt directories on a filesystem
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
  // Projects whose jobs run on another executor than `executor` (config key
  // project_executors: {project: container|slurm}); every other project's run there.
  std::map<std::string, std::string> project_executors;
  // The config file's admission keys (service/capacity_config.h); null = defaults.
  nlohmann::json admission_doc;
  // The config file's `tokens` list (auth/tokens.h); null = no tokens.
  nlohmann::json tokens_doc;
};

// The largest replica_uid_base whose 65,536 ids still fit in a uid_t.
inline constexpr int64_t kMaxUidBase = 4294967295LL - 65536;

// $XDG_DATA_HOME/trainyard, else ~/.local/share/trainyard.
std::string DefaultDataDir();
// Applies the YAML config file's keys; flags given on the command line win.
Status ApplyConfigFile(const std::string& path, DaemonConfig& cfg, const CLI::App& app);
// Every flag, each also a key of the --config file (ApplyConfigFile).
void AddFlags(CLI::App& app, DaemonConfig& cfg, std::string* config_path);
// The memory budget of unfinished work in bytes: max_daemon_memory_mb, or its default
// from the machine's memory.
size_t MaxWorkBytes(const DaemonConfig& cfg);
// Every executor the daemon runs: `executor` and those projects are routed to.
std::set<std::string> ExecutorKinds(const DaemonConfig& cfg);

}  // namespace ty::daemon
