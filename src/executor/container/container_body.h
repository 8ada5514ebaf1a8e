// Internal to executor/: the Docker Engine API "create container" body, built in one
// place for cold launches (container_launch.cc) and warm sandboxes (warm_pool.cc), so
// both get the same mounts, networking (fixed address + derived MAC) and devices.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"

namespace ty::executor::internal {

struct ContainerBody {
  std::string image;
  std::string hostname;                                // "" = the engine's.
  std::optional<std::vector<std::string>> env;         // "NAME=value"; unset = image's.
  std::optional<std::vector<std::string>> entrypoint;  // Unset = the image's ENTRYPOINT.
  std::optional<std::vector<std::string>> cmd;         // Unset = the image's CMD.
  std::map<std::string, std::string> labels;
  std::vector<std::string> binds;  // "host:container[:ro]".
  // An empty read-only tmpfs at each; binds below one still land (the buckets under /gcs).
  std::vector<std::string> read_only_dirs;
  int nvidia_gpus = 0;           // DeviceRequests; 0 = none.
  std::vector<int> gpu_indices;  // DeviceRequests by device id (wins over nvidia_gpus).
  double cpu_limit = 0;          // NanoCpus; 0 = none.
  int64_t memory_bytes = 0;      // Memory (and MemorySwap: no swap beyond it); 0 = none.
  int64_t pids_limit = 0;        // PidsLimit: processes and threads at once; 0 = the engine's.
  std::string network;           // "" = the default network.
  // Join this container's network namespace instead (a network slot's holder,
  // network_slots.h); "" = none. Excludes `network`.
  std::string netns_container;
  bool no_network = false;           // Loopback only (installing packages: nothing to fetch).
  std::vector<std::string> aliases;  // On `network`.
  std::string address;               // Fixed IPv4 on `network`; "" = any.
  std::optional<std::vector<std::string>> extra_hosts;  // "name:address" for /etc/hosts.
  // A user namespace of kUsernsSize ids whose root is this host uid (and gid); 0 = the
  // host's ids. Podman's native create only (RenderLibpodBody): the compat API has no
  // per-container mapping.
  uint32_t userns_base = 0;
};

// How many ids a replica's user namespace maps (root and the users images create).
inline constexpr uint32_t kUsernsSize = 65536;

// Admission's grant onto the body: CPU and memory limits, GPUs by device id and the
// variables that name them (after `body->env` is filled).
void ApplyGrant(const ReplicaLaunch& r, ContainerBody* body);

// The JSON text to POST to /containers/create.
std::string RenderContainerBody(const ContainerBody& body);
// The capabilities every replica runs without (container_body.cc says why each).
const std::vector<std::string>& DroppedCapabilities();

// The same container as podman's native create body (POST /libpod/containers/create,
// a SpecGenerator), with the GPUs as CDI devices "<cdi_gpu_kind>=<index>". Podman's
// compat create ignores DeviceRequests (podman 4.x and 5.x) and cannot name a CDI
// device (it appends ":<path>:<perms>" to each device), so a container that needs
// GPUs on podman is created through this. The command follows Docker's rules, as
// podman's makeCommand does for a spec: an entrypoint given drops the image's CMD.
std::string RenderLibpodBody(const ContainerBody& body, const std::string& name,
                             const std::string& cdi_gpu_kind);

// "host:container" with ":ro" when read-only.
std::string BindOf(const Mount& mount);

// The replica's mounts as binds. When any lands under `bucket_root` ("/gcs"), that
// directory is an empty read-only one besides: a write under /gcs to a bucket the job
// does not have fails in the trainer (EROFS) instead of vanishing with the container.
void AddMounts(const std::vector<Mount>& mounts, const std::string& bucket_root,
               ContainerBody* body);

// 02:42 followed by the address's four bytes: a replica keeps its MAC across restarts
// in place, so peers' ARP caches stay right. "" for a malformed address.
std::string MacAddressFor(const std::string& ipv4);

}  // namespace ty::executor::internal
