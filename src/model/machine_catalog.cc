#include "model/machine_catalog.h"

#include <charconv>

namespace ty::model {

namespace {

// ml v1 legacy types: the "commonly reported Compute Engine equivalent" column of
// docs/contracts/ml-v1.md §9; GPU variants have their base machine's size.
struct Named {
  std::string_view name;
  MachineShape shape;
};
constexpr Named kNamed[] = {
    {"standard", {4, 15}},
    {"large_model", {8, 52}},
    {"complex_model_s", {8, 7.2}},
    {"complex_model_m", {16, 14.4}},
    {"complex_model_l", {32, 28.8}},
    {"standard_gpu", {4, 15}},
    {"complex_model_m_gpu", {16, 14.4}},
    {"complex_model_l_gpu", {32, 28.8}},
    {"standard_p100", {4, 15}},
    {"complex_model_m_p100", {16, 14.4}},
    {"standard_v100", {4, 15}},
    {"large_model_v100", {8, 52}},
    {"complex_model_m_v100", {16, 14.4}},
    {"complex_model_l_v100", {32, 28.8}},
    // A TPU host (v2-8 / v3-8 VM).
    {"cloud_tpu", {96, 335}},
    {"cloud-tpu", {96, 335}},
    // Fixed-size types whose size is not a multiple of their number.
    {"m1-ultramem-40", {40, 961}},
    {"m1-ultramem-80", {80, 1922}},
    {"m1-ultramem-160", {160, 3844}},
    {"m1-megamem-96", {96, 1433.6}},
    {"a2-megagpu-16g", {96, 1360}},
    {"a3-megagpu-8g", {208, 1872}},
    {"a3-ultragpu-8g", {224, 2952}},
    {"a4-highgpu-8g", {224, 3968}},
    {"a4x-highgpu-4g", {140, 884}},
    {"ct5lp-hightpu-1t", {24, 48}},
    {"ct5lp-hightpu-4t", {112, 192}},
    {"ct5lp-hightpu-8t", {224, 384}},
    {"ct6e-standard-1t", {44, 176}},
    {"ct6e-standard-4t", {180, 720}},
    {"ct6e-standard-8t", {180, 1440}},
    {"tpu7x-standard-4t", {224, 960}},
};

// `<family>-<variant>-<n>` types sized per vCPU: GB of memory per vCPU.
struct PerCpu {
  std::string_view family;
  std::string_view variant;
  double gb_per_cpu;
};
constexpr PerCpu kPerCpu[] = {
    {"n1", "standard", 3.75}, {"n1", "highmem", 6.5}, {"n1", "highcpu", 0.9},
    {"n2", "standard", 4},    {"n2", "highmem", 8},   {"n2", "highcpu", 1},
    {"n2d", "standard", 4},   {"n2d", "highmem", 8},  {"n2d", "highcpu", 1},
    {"n4", "standard", 4},    {"n4", "highmem", 8},   {"n4", "highcpu", 2},
    {"e2", "standard", 4},    {"e2", "highmem", 8},   {"e2", "highcpu", 1},
    {"c2", "standard", 4},    {"g2", "standard", 4},  {"g4", "standard", 3.75},
};

// `<family>-<variant>-<G>g` types sized per GPU: vCPUs and GB per GPU.
struct PerGpu {
  std::string_view family;
  std::string_view variant;
  MachineShape per_gpu;
};
constexpr PerGpu kPerGpu[] = {
    {"a2", "highgpu", {12, 85}},
    {"a2", "ultragpu", {12, 170}},
    {"a3", "highgpu", {26, 234}},
};

// Splits "n1-standard-8" / "a2-highgpu-2g" into family, variant, number, suffix.
bool Split(std::string_view type, std::string_view* family, std::string_view* variant, int* n,
           std::string_view* suffix) {
  size_t first = type.find('-');
  size_t last = type.rfind('-');
  if (first == std::string_view::npos || first == last) return false;
  *family = type.substr(0, first);
  *variant = type.substr(first + 1, last - first - 1);
  std::string_view size = type.substr(last + 1);
  auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), *n);
  if (ec != std::errc() || *n <= 0) return false;
  *suffix = size.substr(static_cast<size_t>(end - size.data()));
  return true;
}

}  // namespace

std::optional<MachineShape> MachineShapeOf(std::string_view machine_type,
                                           const MachineOverrides& overrides) {
  if (auto it = overrides.find(machine_type); it != overrides.end()) return it->second;
  for (const Named& n : kNamed) {
    if (n.name == machine_type) return n.shape;
  }
  std::string_view family, variant, suffix;
  int n = 0;
  if (!Split(machine_type, &family, &variant, &n, &suffix)) return std::nullopt;
  if (suffix.empty()) {
    for (const PerCpu& p : kPerCpu) {
      if (p.family == family && p.variant == variant)
        return MachineShape{1.0 * n, p.gb_per_cpu * n};
    }
  }
  if (suffix == "g") {
    for (const PerGpu& p : kPerGpu) {
      if (p.family == family && p.variant == variant) {
        return MachineShape{p.per_gpu.vcpus * n, p.per_gpu.memory_gb * n};
      }
    }
  }
  return std::nullopt;
}

}  // namespace ty::model
