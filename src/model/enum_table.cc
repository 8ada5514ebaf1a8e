#include "model/enum_table.h"

namespace ty::model::internal {

std::string_view EnumName(EnumTable table, int number) {
  for (const EnumValue& v : table) {
    if (v.number == number) return v.name;
  }
  return {};
}

int EnumNumber(EnumTable table, std::string_view name) {
  for (const EnumValue& v : table) {
    if (v.name == name) return v.number;
  }
  return -1;
}

}  // namespace ty::model::internal
