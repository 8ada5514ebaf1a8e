// What the GPU tests (process and container executors) share: the host's GPUs as
// nvidia-smi lists them, and a job's one replica's log as text.
#pragma once

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "integration/daemon_harness.h"

namespace ty::testing {

inline const std::vector<std::string> kGpuJobTerminal = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
                                                         "JOB_STATE_CANCELLED"};

// Standard output of a shell command ("" when it cannot run).
inline std::string ShellOutput(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

// The host's GPUs by index, as their UUIDs: nvidia-smi -L prints
// "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-b766...)". Empty without a GPU.
inline std::vector<std::string> HostGpuUuids() {
  std::vector<std::string> uuids;
  std::string listed = ShellOutput("nvidia-smi -L 2>/dev/null");
  std::regex line("GPU ([0-9]+): .*\\(UUID: (GPU-[0-9a-f-]+)\\)");
  for (std::sregex_iterator it(listed.begin(), listed.end(), line), end; it != end; ++it) {
    size_t index = std::stoul((*it)[1]);
    if (uuids.size() <= index) uuids.resize(index + 1);
    uuids[index] = (*it)[2];
  }
  return uuids;
}

// The daemon's own reading of the host's GPUs (/metrics): the type it maps the
// model to and how many; false when it reports none.
inline bool DaemonGpuCapacity(Daemon& daemon, std::string* type, int* count) {
  std::string metrics = daemon.Get("/metrics").body;
  std::smatch m;
  if (!std::regex_search(
          metrics, m, std::regex("trainyard_capacity_gpus\\{type=\"([A-Z0-9_]+)\"\\} ([0-9]+)"))) {
    return false;
  }
  *type = m[1];
  *count = std::stoi(m[2]);
  return true;
}

// The lines of replica workerpool0-0 of job `id` under the collection `base`.
inline std::string ReplicaLogText(Daemon& daemon, const std::string& base, const std::string& id) {
  nlohmann::json page =
      daemon.Get(base + "/" + id + "/logs?task=workerpool0-0&pageSize=1000").Json();
  std::string out;
  for (const auto& e : page.value("entries", nlohmann::json::array())) {
    out += e.value("message", "") + "\n";
  }
  return out;
}

}  // namespace ty::testing
