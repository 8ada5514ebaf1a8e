#include "tensorboard/resources.h"

#include <vector>

namespace ty::tensorboard {

std::string ResourcePath::name() const {
  std::string n = "projects/" + project + "/locations/" + location + "/tensorboards/" + tensorboard;
  if (!experiment.empty()) n += "/experiments/" + experiment;
  if (!run.empty()) n += "/runs/" + run;
  if (!time_series.empty()) n += "/timeSeries/" + time_series;
  return n;
}

Result<ResourcePath> ParseTensorboardName(const std::string& name, const std::string& field) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (parts.size() < 7) {
    size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 6 || parts[0] != "projects" || parts[2] != "locations" ||
      parts[4] != "tensorboards" || parts[1].empty() || parts[3].empty() || parts[5].empty()) {
    return InvalidArgument(field +
                           ": must be projects/{project}/locations/{location}/tensorboards/"
                           "{tensorboard}, got \"" +
                           name.substr(0, 200) + "\"")
        .WithField(field);
  }
  return ResourcePath{parts[1], parts[3], parts[5], "", "", ""};
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
