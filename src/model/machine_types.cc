#include "model/machine_types.h"

#include <cctype>
#include <charconv>
#include <initializer_list>
#include <vector>

namespace ty::model::internal {

namespace {

constexpr EnumValue kVertexAccelerators[] = {
    {"ACCELERATOR_TYPE_UNSPECIFIED", 0},
    {"NVIDIA_TESLA_K80", 1},
    {"NVIDIA_TESLA_P100", 2},
    {"NVIDIA_TESLA_V100", 3},
    {"NVIDIA_TESLA_P4", 4},
    {"NVIDIA_TESLA_T4", 5},
    {"NVIDIA_TESLA_A100", 8},
    {"NVIDIA_A100_80GB", 9},
    {"NVIDIA_L4", 11},
    {"NVIDIA_H100_80GB", 13},
    {"NVIDIA_H100_MEGA_80GB", 14},
    {"NVIDIA_H200_141GB", 15},
    {"NVIDIA_B200", 16},
    {"NVIDIA_GB200", 17},
    {"NVIDIA_RTX_PRO_6000", 18},
    {"TPU_V2", 6},
    {"TPU_V3", 7},
    {"TPU_V4_POD", 10},
    {"TPU_V5_LITEPOD", 12},
};

constexpr EnumValue kVertexStrategies[] = {
    {"STRATEGY_UNSPECIFIED", 0}, {"ON_DEMAND", 1}, {"LOW_COST", 2}, {"STANDARD", 3}, {"SPOT", 4},
    {"FLEX_START", 6},
};

constexpr EnumValue kVertexReservationAffinity[] = {
    {"TYPE_UNSPECIFIED", 0},
    {"NO_RESERVATION", 1},
    {"ANY_RESERVATION", 2},
    {"SPECIFIC_RESERVATION", 3},
};

constexpr EnumValue kMlAccelerators[] = {
    {"ACCELERATOR_TYPE_UNSPECIFIED", 0},
    {"NVIDIA_TESLA_K80", 1},
    {"NVIDIA_TESLA_P100", 2},
    {"NVIDIA_TESLA_V100", 3},
    {"NVIDIA_TESLA_P4", 4},
    {"NVIDIA_TESLA_T4", 5},
    {"NVIDIA_TESLA_A100", 6},
    {"TPU_V2", 7},
    {"TPU_V3", 8},
    {"TPU_V2_POD", 9},
    {"TPU_V3_POD", 10},
};

constexpr std::string_view kVertexFamilies[] = {
    "e2", "n1",  "n2", "n4", "c2",    "m1",   "a2",    "a3",
    "a4", "a4x", "g2", "g4", "ct5lp", "ct6e", "tpu7x",
};

// Splits "family-variant-N[suffix]" into its parts. False if it is not of that shape.
bool SplitMachineType(std::string_view type, std::string_view* family, std::string_view* variant,
                      int* n, std::string_view* suffix) {
  size_t first = type.find('-');
  size_t last = type.rfind('-');
  if (first == std::string_view::npos || first == last) return false;
  *family = type.substr(0, first);
  *variant = type.substr(first + 1, last - first - 1);
  std::string_view size = type.substr(last + 1);
  if (family->empty() || variant->empty() || size.empty()) return false;
  for (char c : *variant) {
    if (!std::islower(static_cast<unsigned char>(c))) return false;
  }
  auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), *n);
  if (ec != std::errc() || *n <= 0) return false;
  *suffix = size.substr(end - size.data());
  return suffix->empty() || *suffix == "g" || *suffix == "t";
}

bool In(int n, std::initializer_list<int> set) {
  for (int v : set) {
    if (v == n) return true;
  }
  return false;
}

struct LegacyType {
  std::string_view name;
  std::string_view accelerator;
  int count;
};

// docs/contracts/ml-v1.md §9: legacy types and the accelerators their names imply.
constexpr LegacyType kMlLegacyTypes[] = {
    {"standard", "", 0},
    {"large_model", "", 0},
    {"complex_model_s", "", 0},
    {"complex_model_m", "", 0},
    {"complex_model_l", "", 0},
    {"standard_gpu", "NVIDIA_TESLA_K80", 1},
    {"complex_model_m_gpu", "NVIDIA_TESLA_K80", 4},
    {"complex_model_l_gpu", "NVIDIA_TESLA_K80", 8},
    {"standard_p100", "NVIDIA_TESLA_P100", 1},
    {"complex_model_m_p100", "NVIDIA_TESLA_P100", 4},
    {"standard_v100", "NVIDIA_TESLA_V100", 1},
    {"large_model_v100", "NVIDIA_TESLA_V100", 1},
    {"complex_model_m_v100", "NVIDIA_TESLA_V100", 4},
    {"complex_model_l_v100", "NVIDIA_TESLA_V100", 8},
};

std::string CountList(const std::vector<int>& set) {
  std::string out;
  for (int v : set) {
    if (!out.empty()) out += ", ";
    out += std::to_string(v);
  }
  return out;
}

}  // namespace

EnumTable VertexAcceleratorTypes() { return kVertexAccelerators; }
EnumTable VertexSchedulingStrategies() { return kVertexStrategies; }
EnumTable VertexReservationAffinityTypes() { return kVertexReservationAffinity; }
EnumTable MlAcceleratorTypes() { return kMlAccelerators; }

bool IsVertexMachineType(std::string_view type) {
  if (type == "cloud-tpu") return true;
  std::string_view family, variant, suffix;
  int n = 0;
  if (!SplitMachineType(type, &family, &variant, &n, &suffix)) return false;
  for (std::string_view f : kVertexFamilies) {
    if (f == family) return true;
  }
  return false;
}

bool IsMlComputeEngineType(std::string_view type) {
  std::string_view family, variant, suffix;
  int n = 0;
  if (!SplitMachineType(type, &family, &variant, &n, &suffix)) return false;
  if (family == "n1" && suffix.empty()) {
    if (variant == "standard") return In(n, {4, 8, 16, 32, 64, 96});
    if (variant == "highmem") return In(n, {2, 4, 8, 16, 32, 64, 96});
    if (variant == "highcpu") return In(n, {16, 32, 64, 96});
    return false;
  }
  if (family == "a2" && suffix == "g") {
    if (variant == "highgpu") return In(n, {1, 2, 4, 8});
    if (variant == "megagpu") return n == 16;
  }
  return false;
}

bool MlLegacyType(std::string_view type, std::string* accelerator_type, int* count) {
  for (const LegacyType& t : kMlLegacyTypes) {
    if (t.name == type) {
      *accelerator_type = std::string(t.accelerator);
      *count = t.count;
      return true;
    }
  }
  return false;
}

std::optional<int> ImpliedGpuCount(std::string_view machine_type) {
  std::string_view family, variant, suffix;
  int n = 0;
  if (!SplitMachineType(machine_type, &family, &variant, &n, &suffix)) return std::nullopt;
  if ((family == "a2" || family == "a3" || family == "a4" || family == "a4x") && suffix == "g") {
    return n;
  }
  if (family == "g2" && variant == "standard" && suffix.empty()) {
    // docs/contracts/vertex-v1.md §9: 1 L4 on 4-16 and 32 vCPUs, 2 on 24, 4 on 48, 8 on 96.
    if (In(n, {4, 8, 12, 16, 32})) return 1;
    if (n == 24) return 2;
    if (n == 48) return 4;
    if (n == 96) return 8;
  }
  return std::nullopt;
}

Status CheckAcceleratorCount(std::string_view machine_type, std::string_view accelerator_type,
                             int64_t count, const std::string& count_path) {
  if (std::optional<int> implied = ImpliedGpuCount(machine_type)) {
    if (count != *implied) {
      return FieldError(count_path, "machine type \"" + std::string(machine_type) +
                                        "\" has exactly " + std::to_string(*implied) +
                                        " GPUs; got " + std::to_string(count));
    }
    return Status::Ok();
  }
  if (machine_type == "cloud-tpu" &&
      (accelerator_type == "TPU_V2" || accelerator_type == "TPU_V3")) {
    if (count != 8 && (count <= 0 || count % 32 != 0)) {
      return FieldError(count_path,
                        "a cloud-tpu machine takes 8 TPU cores, or a multiple of 32 for a pod");
    }
    return Status::Ok();
  }
  std::string_view family, variant, suffix;
  int n = 0;
  if (!SplitMachineType(machine_type, &family, &variant, &n, &suffix) || family != "n1") {
    return Status::Ok();
  }
  // N1 + GPU combinations (docs/contracts/vertex-v1.md §9), keyed by vCPU count. The P100
  // exception on 64/96 vCPUs is marked uncertain in the spec and not enforced.
  std::vector<int> allowed;
  if (accelerator_type == "NVIDIA_TESLA_V100") {
    if (n <= 8) {
      allowed = {1, 2, 4, 8};
    } else if (n <= 16) {
      allowed = {2, 4, 8};
    } else if (n <= 32) {
      allowed = {4, 8};
    } else {
      allowed = {8};
    }
  } else if (accelerator_type == "NVIDIA_TESLA_P4" || accelerator_type == "NVIDIA_TESLA_P100" ||
             accelerator_type == "NVIDIA_TESLA_T4") {
    if (n <= 16) {
      allowed = {1, 2, 4};
    } else if (n <= 32) {
      allowed = {2, 4};
    } else {
      allowed = {4};
    }
  } else {
    return Status::Ok();
  }
  bool ok = false;
  for (int v : allowed) ok = ok || v == count;
  if (!ok) {
    return FieldError(count_path, "machine type \"" + std::string(machine_type) + "\" with " +
                                      std::string(accelerator_type) + " allows " +
                                      CountList(allowed) + " GPUs; got " + std::to_string(count));
  }
  return Status::Ok();
}

}  // namespace ty::model::internal
