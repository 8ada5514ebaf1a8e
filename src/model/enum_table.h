// Proto enums as tables of JSON names and numbers: the wire codecs read and write
// them (wire/), and the machine-type rules list the accelerator names in them.
// Pure; thread-safe.
#pragma once

#include <span>
#include <string_view>

namespace ty::model::internal {

// One value of a proto enum: its JSON name and its number.
struct EnumValue {
  std::string_view name;
  int number;
};
using EnumTable = std::span<const EnumValue>;

// Name for `number` in `table`; empty if unknown.
std::string_view EnumName(EnumTable table, int number);
// Number for `name`; -1 if unknown.
int EnumNumber(EnumTable table, std::string_view name);

}  // namespace ty::model::internal
