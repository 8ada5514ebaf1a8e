// The size of each machine type both dialects accept: vCPUs and memory, which the
// scheduler admits against and the executor enforces as limits (GPUs come from the
// machine spec's accelerator fields, which the dialects fill for types with built-in
// GPUs and for ml v1 legacy types).
//
// Sizes follow Compute Engine (docs/contracts/ml-v1.md §9 and docs/contracts/vertex-v1.md §9 list
// the types); the ml v1 legacy types use the "commonly reported" equivalents of that table. Unknown
// names are refused at submit by the dialects, so a type without a shape here is a gap of this
// table, not user input: ShapeOf says nullopt and the service names the field. Pure and
// thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ty::model {

struct MachineShape {
  double vcpus = 0;
  double memory_gb = 0;
};

// Overrides (daemon config `machine_types: {NAME: {cpus, memory_gb}}`) win over the
// shipped table.
using MachineOverrides = std::map<std::string, MachineShape, std::less<>>;

std::optional<MachineShape> MachineShapeOf(std::string_view machine_type,
                                           const MachineOverrides& overrides = {});

}  // namespace ty::model
