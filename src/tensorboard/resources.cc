#include "tensorboard/resources.h"

#include <vector>

#include "common/text.h"

namespace ty::tensorboard {

std::string ResourcePath::name() const {
  std::string n = "projects/" + project + "/locations/" + location + "/tensorboards/" + tensorboard;
  if (!experiment.empty()) n += "/experiments/" + experiment;
  if (!run.empty()) n += "/runs/" + run;
  if (!time_series.empty()) n += "/timeSeries/" + time_series;
  return n;
}

Result<ResourcePath> ParseTensorboardName(const std::string& name, const std::string& field) {
  const std::vector<std::string_view> parts = SplitOn(name, '/');
  if (parts.size() != 6 || parts[0] != "projects" || parts[2] != "locations" ||
      parts[4] != "tensorboards" || parts[1].empty() || parts[3].empty() || parts[5].empty()) {
    return InvalidArgument(field +
                           ": must be projects/{project}/locations/{location}/tensorboards/"
                           "{tensorboard}, got \"" +
                           name.substr(0, 200) + "\"")
        .WithField(field);
  }
  return ResourcePath{
      std::string(parts[1]), std::string(parts[3]), std::string(parts[5]), "", "", ""};
}

Status CheckChildId(const std::string& id, const std::string& field) {
  bool ok = !id.empty() && id.size() <= 128;
  for (size_t i = 0; ok && i < id.size(); ++i) {
    const char c = id[i];
    ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && c == '-');
  }
  if (ok) return Status::Ok();
  return InvalidArgument(field + ": must match [a-z0-9][a-z0-9-]{0,127}, got \"" +
                         id.substr(0, 130) + "\"")
      .WithField(field);
}

}  // namespace ty::tensorboard
