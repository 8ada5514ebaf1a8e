// Machine types and accelerators both dialects accept, and the GPU-count rules of
// Google's machine-type and accelerator tables (Vertex `machineSpec`, ml v1
// `masterType` / `acceleratorConfig`).
//
// Machines are symbolic in Trainyard (a replica gets whatever the executor gives it),
// but clients written for Google send these names, and a typo must fail at submit
// time as it would on Google rather than run on a default machine. Internal to
// model/; pure and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "model/enum_table.h"

namespace ty::model::internal {

// Vertex `AcceleratorType` (docs/contracts/client-wire.md enum table: numbers are not in order).
EnumTable VertexAcceleratorTypes();
// Vertex `Scheduling.Strategy`.
EnumTable VertexSchedulingStrategies();
// Vertex `ReservationAffinity.Type`.
EnumTable VertexReservationAffinityTypes();
// ml v1 `AcceleratorConfig.type` names. ml v1 clients always send enum names
// (docs/contracts/client-wire.md §4) and the spec gives no numbers, so the numbers here are only
// declaration indexes and are never accepted on input (see ml_dialect.cc).
EnumTable MlAcceleratorTypes();

// Vertex training machine types: "cloud-tpu", or `<family>-<variant>-<n>[g|t]` for a
// family listed in docs/contracts/vertex-v1.md §9 (e2, n1, n2, n4, c2, m1, a2, a3, a4, a4x, g2,
// g4, ct5lp, ct6e, tpu7x).
bool IsVertexMachineType(std::string_view type);

// Compute Engine types accepted by ml v1 (docs/contracts/ml-v1.md §9): n1-standard-{4..96},
// n1-highmem-{2..96}, n1-highcpu-{16..96}, a2-highgpu-{1,2,4,8}g, a2-megagpu-16g.
bool IsMlComputeEngineType(std::string_view type);

// ml v1 legacy machine types (`standard`, `complex_model_m_gpu`, ... but not `cloud_tpu`).
// A legacy type implies its accelerators: `*accelerator_type` / `*count` are set to
// them (empty / 0 for CPU-only types). Returns false for a non-legacy type.
bool MlLegacyType(std::string_view type, std::string* accelerator_type, int* count);

inline constexpr std::string_view kMlCloudTpu = "cloud_tpu";

// Checks accelerator type/count against the machine type (Vertex spelling of both):
// A2/A3/A4/A4X and G2 types carry a fixed GPU count; N1 types with P4, P100, T4 or V100
// allow only some counts; `cloud-tpu` with TPU_V2/TPU_V3 takes 8 or a multiple of 32.
// `count_path` names the count field in errors. A type the rules do not cover passes.
Status CheckAcceleratorCount(std::string_view machine_type, std::string_view accelerator_type,
                             int64_t count, const std::string& count_path);

// The GPU count a machine type implies (a2-highgpu-4g -> 4, g2-standard-24 -> 2), if any.
std::optional<int> ImpliedGpuCount(std::string_view machine_type);

}  // namespace ty::model::internal
