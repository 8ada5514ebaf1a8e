#include "api/tensorboard_json.h"

#include <cctype>
#include <vector>

namespace ty::api::internal {

namespace {

using json = nlohmann::json;
using namespace tensorboard;

json DescribedJson(const std::string& name, const Described& d) {
  json j = {{"name", name},
            {"displayName", d.display_name},
            {"createTime", FormatRfc3339(d.create_time)},
            {"updateTime", FormatRfc3339(d.update_time)},
            {"etag", std::to_string(d.update_time)}};
  if (!d.description.empty()) j["description"] = d.description;
  if (!d.labels.empty()) j["labels"] = d.labels;
  return j;
}

json ValueType(const std::string& type, const wire::RenderOptions& render) {
  if (!render.enum_as_int) return type;
  if (type == "SCALAR") return 1;
  if (type == "TENSOR") return 2;
  return 3;
}

}  // namespace

json TensorboardJson(const Tensorboard& t) {
  json j = DescribedJson(t.path.name(), t);
  j["runCount"] = t.run_count;
  j["blobStoragePathPrefix"] = "";
  return j;
}

json ExperimentJson(const Experiment& e) {
  json j = DescribedJson(e.path.name(), e);
  if (!e.source.empty()) j["source"] = e.source;
  return j;
}

json RunJson(const Run& r) { return DescribedJson(r.path.name(), r); }

json TimeSeriesJson(const TimeSeries& s, const wire::RenderOptions& render) {
  json j = DescribedJson(s.path.name(), s);
  j["valueType"] = ValueType(s.value_type, render);
  j["pluginName"] = s.plugin_name;
  j["metadata"] = {{"maxStep", std::to_string(s.max_step)},
                   {"maxBlobSequenceLength", std::to_string(s.max_blob_sequence_length)}};
  if (s.max_wall_time > 0) j["metadata"]["maxWallTime"] = FormatRfc3339(s.max_wall_time);
  return j;
}

json TimeSeriesDataJson(const TimeSeries& s, const std::vector<Point>& points,
                        const wire::RenderOptions& render) {
  json values = json::array();
  for (const Point& p : points) {
    values.push_back({{"step", std::to_string(p.step)},
                      {"wallTime", FormatRfc3339(p.wall_time)},
                      {"scalar", {{"value", p.value}}}});
  }
  return {{"tensorboardTimeSeriesId", s.path.time_series},
          {"valueType", ValueType(s.value_type, render)},
          {"values", std::move(values)}};
}

Status ReadDescribed(const json& body, const std::string& kind, Described* out) {
  try {
    out->display_name = body.value("displayName", "");
    out->description = body.value("description", "");
    out->labels = body.value("labels", std::map<std::string, std::string>{});
  } catch (const json::exception&) {
    return InvalidArgument(kind + ": displayName and description are strings, labels an " +
                           "object of strings")
        .WithField(kind);
  }
  return Status::Ok();
}

json DoneOperation(const std::string& parent, const std::string& metadata_type,
                   const std::string& type, json response, TimeMicros now) {
  json op = {{"name", parent + "/operations/" + std::to_string(now)},
             {"metadata",
              {{"@type", "type.googleapis.com/google.cloud.aiplatform.v1." + metadata_type},
               {"genericMetadata",
                {{"createTime", FormatRfc3339(now)}, {"updateTime", FormatRfc3339(now)}}}}},
             {"done", true}};
  response["@type"] = "type.googleapis.com/" + type;
  op["response"] = std::move(response);
  return op;
}

Result<std::vector<Point>> PointsOf(const json& data, const std::string& path) {
  std::vector<Point> points;
  const json* values = data.is_object() && data.contains("values") ? &data["values"] : nullptr;
  if (values == nullptr) return points;
  if (!values->is_array() || values->size() > 10000) {
    return InvalidArgument(path + ".values: a list of at most 10000 points")
        .WithField(path + ".values");
  }
  for (const json& v : *values) {
    Point p;
    try {
      p.step = v.contains("step") ? std::stoll(v["step"].is_string() ? v["step"].get<std::string>()
                                                                     : v["step"].dump())
                                  : 0;
      p.value = v.at("scalar").value("value", 0.0);
    } catch (const std::exception&) {
      return InvalidArgument(path + ".values: each point has a step and a scalar.value")
          .WithField(path + ".values");
    }
    if (v.contains("wallTime") && v["wallTime"].is_string()) {
      Result<TimeMicros> t = ParseRfc3339(v["wallTime"].get<std::string>());
      if (t.ok()) p.wall_time = *t;
    }
    points.push_back(p);
  }
  return points;
}

namespace {

// The words of a step filter: names, operators (runs of <>=!), numbers; spaces between
// them optional ("step>=2" or "step >= 2"). A '+' is a space: gcloud's apitools sends
// "step+%3E+1" (form encoding), which the Vertex dialect's query keeps literally.
std::vector<std::string> FilterWords(const std::string& text) {
  std::vector<std::string> words;
  auto kind = [](char c) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '+') return 0;
    if (c == '<' || c == '>' || c == '=' || c == '!') return 1;
    return 2;
  };
  for (size_t i = 0; i < text.size();) {
    const int k = kind(text[i]);
    size_t j = i;
    while (j < text.size() && kind(text[j]) == k) ++j;
    if (k != 0) words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

}  // namespace

Status ParseStepFilter(const std::string& filter, int64_t* min_step, int64_t* max_step) {
  const Status bad = InvalidArgument("filter: only step comparisons (step >= 100 AND step < 200)")
                         .WithField("filter");
  const std::vector<std::string> words = FilterWords(filter);
  for (size_t i = 0; i < words.size(); i += 4) {
    if (i + 2 >= words.size() || words[i] != "step") return bad;
    if (i + 3 < words.size() && words[i + 3] != "AND" && words[i + 3] != "and") return bad;
    const std::string& op = words[i + 1];
    int64_t n = 0;
    try {
      size_t used = 0;
      n = std::stoll(words[i + 2], &used);
      if (used != words[i + 2].size()) return bad;
    } catch (const std::exception&) {
      return bad;
    }
    const bool lower = op == ">=" || op == ">" || op == "=";
    const bool upper = op == "<=" || op == "<" || op == "=";
    if (!lower && !upper) return bad;
    if (lower) *min_step = std::max(*min_step, op == ">" && n < INT64_MAX ? n + 1 : n);
    if (upper) *max_step = std::min(*max_step, op == "<" && n > INT64_MIN ? n - 1 : n);
  }
  return Status::Ok();
}

}  // namespace ty::api::internal
