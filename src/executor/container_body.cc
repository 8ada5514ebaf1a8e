#include "executor/container_body.h"

#include <arpa/inet.h>

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
  if (b.nvidia_gpus > 0) {
    host["DeviceRequests"] = json::array(
        {{{"Driver", "nvidia"}, {"Count", b.nvidia_gpus}, {"Capabilities", {{"gpu"}}}}});
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
