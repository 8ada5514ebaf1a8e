#include "executor/container/container_body.h"

#include <arpa/inet.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace ty::executor::internal {

using nlohmann::json;

// Room for nothing but the mount points of the binds below it.
constexpr char kReadOnlyDirOptions[] = "ro,size=64k,mode=0755";

std::string BindOf(const Mount& m) {
  return m.host_path + ":" + m.container_path + (m.read_only ? ":ro" : "");
}

void AddMounts(const std::vector<Mount>& mounts, const std::string& bucket_root,
               ContainerBody* body) {
  bool buckets = false;
  for (const Mount& m : mounts) {
    body->binds.push_back(BindOf(m));
    buckets |= !bucket_root.empty() && m.container_path.rfind(bucket_root + "/", 0) == 0;
  }
  if (buckets) body->read_only_dirs.push_back(bucket_root);
}

std::string MacAddressFor(const std::string& ipv4) {
  in_addr a{};
  if (inet_pton(AF_INET, ipv4.c_str(), &a) != 1) return "";
  uint32_t v = ntohl(a.s_addr);
  char buf[18];
  std::snprintf(buf, sizeof(buf), "02:42:%02x:%02x:%02x:%02x", (v >> 24) & 0xff, (v >> 16) & 0xff,
                (v >> 8) & 0xff, v & 0xff);
  return buf;
}

void ApplyGrant(const ReplicaLaunch& r, ContainerBody* b) {
  b->cpu_limit = r.cpu_limit;
  b->memory_bytes = static_cast<int64_t>(r.memory_limit_gb * 1024 * 1024 * 1024);
  // The engine can give NVIDIA GPUs (CDI / nvidia runtime); other accelerator types
  // (TPUs) have no device here and run without one.
  if (r.accelerator_type.rfind("NVIDIA", 0) != 0 || r.accelerator_count <= 0) {
    // CUDA images declare NVIDIA_VISIBLE_DEVICES=all, and NVIDIA's OCI hook (where
    // the engine runs it for every container) would hand such a container every
    // GPU of the host, also those granted to other jobs; "void" makes it a plain
    // container, as one asking for no GPU is.
    if (!b->env) b->env.emplace();
    b->env->push_back("NVIDIA_VISIBLE_DEVICES=void");
    return;
  }
  b->nvidia_gpus = r.accelerator_count;
  b->gpu_indices = r.gpu_indices;
  if (r.gpu_indices.empty() || !b->env) return;
  // The runtime hook exposes the host's devices by NVIDIA_VISIBLE_DEVICES; inside, CUDA
  // numbers the ones it sees from 0.
  std::vector<int> inside(r.gpu_indices.size());
  for (size_t i = 0; i < inside.size(); ++i) inside[i] = static_cast<int>(i);
  b->env->push_back("NVIDIA_VISIBLE_DEVICES=" + JoinIndices(r.gpu_indices));
  b->env->push_back("CUDA_VISIBLE_DEVICES=" + JoinIndices(inside));
}

// Hardening every replica gets (issue 19): no process in it gains privileges through
// setuid binaries or file capabilities (no_new_privs), and of the engine's default
// capabilities those training never needs are dropped: making device nodes, raw
// sockets (spoofing peers on the job network), chroot, changing capability sets and
// file capabilities, writing the audit log. Kept: file ownership and permission
// overrides (pip and apt inside the image), kill, setuid/setgid (dropping to a user),
// binding low ports. Names carry the CAP_ prefix, which Docker and podman both take.
const std::vector<std::string>& DroppedCapabilities() {
  static const std::vector<std::string> kDropped = {"CAP_MKNOD",      "CAP_NET_RAW",
                                                    "CAP_SYS_CHROOT", "CAP_SETPCAP",
                                                    "CAP_SETFCAP",    "CAP_AUDIT_WRITE"};
  return kDropped;
}

std::string RenderContainerBody(const ContainerBody& b) {
  json body;
  body["Image"] = b.image;
  if (!b.hostname.empty()) body["Hostname"] = b.hostname;
  if (b.env) body["Env"] = *b.env;
  if (b.entrypoint) body["Entrypoint"] = *b.entrypoint;
  if (b.cmd) body["Cmd"] = *b.cmd;
  body["Labels"] = b.labels;
  json host;
  host["Binds"] = b.binds;
  for (const std::string& dir : b.read_only_dirs) host["Tmpfs"][dir] = kReadOnlyDirOptions;
  host["SecurityOpt"] = json::array({"no-new-privileges"});
  host["CapDrop"] = DroppedCapabilities();
  if (!b.gpu_indices.empty()) {
    json ids = json::array();
    for (int i : b.gpu_indices) ids.push_back(std::to_string(i));
    host["DeviceRequests"] =
        json::array({{{"Driver", "nvidia"}, {"DeviceIDs", ids}, {"Capabilities", {{"gpu"}}}}});
  } else if (b.nvidia_gpus > 0) {
    host["DeviceRequests"] = json::array(
        {{{"Driver", "nvidia"}, {"Count", b.nvidia_gpus}, {"Capabilities", {{"gpu"}}}}});
  }
  if (b.cpu_limit > 0) host["NanoCpus"] = static_cast<int64_t>(std::llround(b.cpu_limit * 1e9));
  if (b.memory_bytes > 0) {
    host["Memory"] = b.memory_bytes;
    host["MemorySwap"] = b.memory_bytes;
  }
  if (b.pids_limit > 0) host["PidsLimit"] = b.pids_limit;
  if (!b.network.empty()) {
    host["NetworkMode"] = b.network;
    json endpoint = json::object();
    if (!b.aliases.empty()) endpoint["Aliases"] = b.aliases;
    if (!b.address.empty()) {
      endpoint["IPAMConfig"]["IPv4Address"] = b.address;
      endpoint["MacAddress"] = MacAddressFor(b.address);
    }
    if (b.extra_hosts) host["ExtraHosts"] = *b.extra_hosts;
    body["NetworkingConfig"]["EndpointsConfig"][b.network] = endpoint;
  } else if (!b.netns_container.empty()) {
    host["NetworkMode"] = "container:" + b.netns_container;
  } else if (b.no_network) {
    host["NetworkMode"] = "none";
  }
  body["HostConfig"] = host;
  return body.dump();
}

namespace {

// "host:container[:ro]" (BindOf) as an OCI bind mount.
json LibpodMount(const std::string& bind) {
  std::string rest = bind;
  json options = json::array({"rbind"});
  if (rest.size() > 3 && rest.compare(rest.size() - 3, 3, ":ro") == 0) {
    rest.resize(rest.size() - 3);
    options.push_back("ro");
  }
  size_t colon = rest.find(':');
  return {{"type", "bind"},
          {"source", rest.substr(0, colon)},
          {"destination", colon == std::string::npos ? rest : rest.substr(colon + 1)},
          {"options", options}};
}

json LibpodNetwork(const ContainerBody& b) {
  json net = json::object();
  if (!b.aliases.empty()) net["aliases"] = b.aliases;
  if (!b.address.empty()) {
    net["static_ips"] = json::array({b.address});
    net["static_mac"] = MacAddressFor(b.address);
  }
  return net;
}

json LibpodMounts(const ContainerBody& b) {
  json mounts = json::array();
  for (const std::string& dir : b.read_only_dirs) {  // First: the binds below it land on it.
    mounts.push_back({{"type", "tmpfs"},
                      {"source", "tmpfs"},
                      {"destination", dir},
                      {"options", {"ro", "size=64k", "mode=0755"}}});
  }
  for (const std::string& bind : b.binds) mounts.push_back(LibpodMount(bind));
  return mounts;
}

json LibpodLimits(const ContainerBody& b) {
  json limits = json::object();
  if (b.cpu_limit > 0) {
    // As the compat API turns NanoCpus into a quota per 100 ms period.
    limits["cpu"] = {{"period", 100000}, {"quota", std::llround(b.cpu_limit * 100000)}};
  }
  if (b.memory_bytes > 0) {
    limits["memory"] = {{"limit", b.memory_bytes}, {"swap", b.memory_bytes}};
  }
  if (b.pids_limit > 0) limits["pids"] = {{"limit", b.pids_limit}};
  return limits;
}

}  // namespace

std::string RenderLibpodBody(const ContainerBody& b, const std::string& name,
                             const std::string& cdi_gpu_kind) {
  json body;
  body["name"] = name;
  body["image"] = b.image;
  if (!b.hostname.empty()) body["hostname"] = b.hostname;
  if (b.env) {
    json env = json::object();
    for (const std::string& e : *b.env) {
      size_t eq = e.find('=');
      env[e.substr(0, eq)] = eq == std::string::npos ? "" : e.substr(eq + 1);
    }
    body["env"] = env;
  }
  if (b.entrypoint) body["entrypoint"] = *b.entrypoint;
  if (b.cmd && !b.cmd->empty()) body["command"] = *b.cmd;
  body["labels"] = b.labels;
  body["mounts"] = LibpodMounts(b);
  json devices = json::array();
  std::vector<int> gpus = b.gpu_indices;
  // A count without indices takes the first ones, as Docker's DeviceRequests Count does.
  for (int i = 0; gpus.empty() && i < b.nvidia_gpus; ++i) gpus.push_back(i);
  for (int i : gpus) devices.push_back({{"path", cdi_gpu_kind + "=" + std::to_string(i)}});
  if (!devices.empty()) body["devices"] = devices;
  if (json limits = LibpodLimits(b); !limits.empty()) body["resource_limits"] = limits;
  if (!b.netns_container.empty()) {
    body["netns"] = {{"nsmode", "container"}, {"value", b.netns_container}};
  } else if (b.no_network) {
    body["netns"] = {{"nsmode", "none"}};
  } else {
    body["netns"] = {{"nsmode", "bridge"}};
  }
  if (!b.network.empty()) body["Networks"] = {{b.network, LibpodNetwork(b)}};
  if (b.extra_hosts) body["hostadd"] = *b.extra_hosts;
  if (b.userns_base > 0) {
    const json map =
        json::array({{{"container_id", 0}, {"host_id", b.userns_base}, {"size", kUsernsSize}}});
    body["userns"] = {{"nsmode", "private"}};
    body["idmappings"] = {{"UIDMap", map}, {"GIDMap", map}};
  }
  // What the compat API does for every container (moby always creates it).
  body["create_working_dir"] = true;
  body["no_new_privileges"] = true;
  body["cap_drop"] = DroppedCapabilities();
  return body.dump();
}

}  // namespace ty::executor::internal
