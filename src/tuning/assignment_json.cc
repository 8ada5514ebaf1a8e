#include "tuning/assignment_json.h"

namespace ty::tuning {

using nlohmann::json;
using wire::ValueFromJson;
using wire::ValueToJson;

Result<Assignment> AssignmentFromJson(const SearchSpace& space, const json& params) {
  if (!params.is_object()) return InvalidArgument("params must be an object");
  Assignment a;
  for (const auto& [name, value] : params.items()) {
    const Dim* dim = nullptr;
    for (const Dim& d : space.Dims()) {
      if (d.spec.name == name) dim = &d;
    }
    if (dim == nullptr) return InvalidArgument("unknown parameter '" + name + "'");
    ASSIGN_OR_RETURN(a[name], ValueFromJson(dim->spec, value));
  }
  RETURN_IF_ERROR(space.Check(a));
  return a;
}

json AssignmentToJson(const SearchSpace& space, const Assignment& a) {
  json out = json::object();
  for (const Dim& d : space.Dims()) {
    auto it = a.find(d.spec.name);
    if (it != a.end()) out[d.spec.name] = ValueToJson(d.spec, it->second);
  }
  return out;
}

}  // namespace ty::tuning
