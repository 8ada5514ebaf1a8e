#include "executor/container_body.h"

#include <arpa/inet.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace ty::executor::internal {

using nlohmann::json;

std::string BindOf(const Mount& m) {
  return m.host_path + ":" + m.container_path + (m.read_only ? ":ro" : "");
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
  }
  body["HostConfig"] = host;
  return body.dump();
}

}  // namespace ty::executor::internal
