// Vertex AI TensorBoard (aiplatform v1 TensorboardService) over tensorboard::Store: what
// the Vertex SDK's aiplatform.Tensorboard, TensorboardExperiment, TensorboardRun and
// TensorboardTimeSeries call. Creating, updating and deleting a tensorboard are
// long-running operations at Google; here they are done when they answer, so clients
// read the result without polling. Experiments, runs and time series of a job's
// event files are made by the indexer (tensorboard/indexer.h); clients may make and
// write their own too.
#include <nlohmann/json.hpp>
#include <string>

#include "api/endpoints.h"
#include "api/http_status.h"
#include "api/query.h"
#include "api/tensorboard_json.h"
#include "common/text.h"
#include "tensorboard/store.h"

namespace ty::api::internal {

namespace {

using json = nlohmann::json;
using namespace tensorboard;

constexpr char kV1[] = "google.cloud.aiplatform.v1.";

ResourcePath PathOf(const RouteCall& c) {
  const RouteParams& p = c.params;
  return {p.project, p.location, p.tensorboard, p.experiment, p.run, p.time_series};
}

Result<PageRequest> PageOf(const HttpRequest& request) {
  ASSIGN_OR_RETURN(int size, IntParam(request, "pageSize", 0));
  return PageRequest{size, Param(request, "pageToken")};
}

// A list answer: the items under `key`, and the next page's token when there is one.
template <typename T, typename ToJson>
HttpResponse ListAnswer(const Result<Page<T>>& page, const char* key, ToJson to_json) {
  if (!page.ok()) return ErrorResponse(page.status());
  json out = json::object();
  out[key] = json::array();
  for (const T& item : page->items) out[key].push_back(to_json(item));
  if (!page->next_page_token.empty()) out["nextPageToken"] = page->next_page_token;
  return JsonResponse(out);
}

std::vector<std::string> UpdateMask(const HttpRequest& request) {
  std::vector<std::string> mask;
  const std::string text = Param(request, "updateMask");  // The views below point into it.
  for (std::string_view field : SplitOn(text, ',')) {
    if (!field.empty()) mask.emplace_back(field);
  }
  return mask;
}

HttpResponse DeletedOperation(const RouteCall& c, const Status& deleted) {
  if (!deleted.ok()) return ErrorResponse(deleted);
  return JsonResponse(DoneOperation(PathOf(c).name(), "DeleteOperationMetadata",
                                    "google.protobuf.Empty", json::object(),
                                    SystemClock::Get()->Now()));
}

}  // namespace

HttpResponse CreateTensorboard(const RouteCall& c) {
  Result<json> body = BodyObject(c.request);
  if (!body.ok()) return ErrorResponse(body.status());
  Tensorboard t;
  t.path = PathOf(c).Tensorboard();
  if (Status s = ReadDescribed(*body, "tensorboard", &t); !s.ok()) return ErrorResponse(s);
  Result<Tensorboard> made = c.tensorboards->CreateTensorboard(t);
  if (!made.ok()) return ErrorResponse(made.status());
  return JsonResponse(DoneOperation(made->path.name(), "CreateTensorboardOperationMetadata",
                                    std::string(kV1) + "Tensorboard", TensorboardJson(*made),
                                    made->create_time));
}

HttpResponse GetTensorboard(const RouteCall& c) {
  Result<Tensorboard> t = c.tensorboards->GetTensorboard(PathOf(c));
  if (!t.ok()) return ErrorResponse(t.status());
  return JsonResponse(TensorboardJson(*t));
}

HttpResponse ListTensorboards(const RouteCall& c) {
  Result<PageRequest> page = PageOf(c.request);
  if (!page.ok()) return ErrorResponse(page.status());
  return ListAnswer(c.tensorboards->ListTensorboards(c.params.project, c.params.location, *page),
                    "tensorboards", TensorboardJson);
}

HttpResponse UpdateTensorboard(const RouteCall& c) {
  Result<json> body = BodyObject(c.request);
  if (!body.ok()) return ErrorResponse(body.status());
  Tensorboard t;
  t.path = PathOf(c).Tensorboard();
  if (Status s = ReadDescribed(*body, "tensorboard", &t); !s.ok()) return ErrorResponse(s);
  Result<Tensorboard> updated = c.tensorboards->UpdateTensorboard(t, UpdateMask(c.request));
  if (!updated.ok()) return ErrorResponse(updated.status());
  return JsonResponse(DoneOperation(updated->path.name(), "UpdateTensorboardOperationMetadata",
                                    std::string(kV1) + "Tensorboard", TensorboardJson(*updated),
                                    updated->update_time));
}

HttpResponse DeleteTensorboard(const RouteCall& c) {
  return DeletedOperation(c, c.tensorboards->DeleteTensorboard(PathOf(c)));
}

HttpResponse CreateTensorboardExperiment(const RouteCall& c) {
  Result<json> body = BodyObject(c.request);
  if (!body.ok()) return ErrorResponse(body.status());
  Experiment e;
  e.path = PathOf(c);
  e.path.experiment = Param(c.request, "tensorboardExperimentId");
  if (Status s = ReadDescribed(*body, "tensorboardExperiment", &e); !s.ok()) {
    return ErrorResponse(s);
  }
  Result<Experiment> made = c.tensorboards->CreateExperiment(e);
  if (!made.ok()) return ErrorResponse(made.status());
  return JsonResponse(ExperimentJson(*made));
}

HttpResponse GetTensorboardExperiment(const RouteCall& c) {
  Result<Experiment> e = c.tensorboards->GetExperiment(PathOf(c));
  if (!e.ok()) return ErrorResponse(e.status());
  return JsonResponse(ExperimentJson(*e));
}

HttpResponse ListTensorboardExperiments(const RouteCall& c) {
  Result<PageRequest> page = PageOf(c.request);
  if (!page.ok()) return ErrorResponse(page.status());
  return ListAnswer(c.tensorboards->ListExperiments(PathOf(c), *page), "tensorboardExperiments",
                    ExperimentJson);
}

HttpResponse DeleteTensorboardExperiment(const RouteCall& c) {
  return DeletedOperation(c, c.tensorboards->DeleteExperiment(PathOf(c)));
}

HttpResponse CreateTensorboardRun(const RouteCall& c) {
  Result<json> body = BodyObject(c.request);
  if (!body.ok()) return ErrorResponse(body.status());
  tensorboard::Run r;
  r.path = PathOf(c);
  r.path.run = Param(c.request, "tensorboardRunId");
  if (Status s = ReadDescribed(*body, "tensorboardRun", &r); !s.ok()) return ErrorResponse(s);
  Result<tensorboard::Run> made = c.tensorboards->CreateRun(r);
  if (!made.ok()) return ErrorResponse(made.status());
  return JsonResponse(RunJson(*made));
}

HttpResponse GetTensorboardRun(const RouteCall& c) {
  Result<tensorboard::Run> r = c.tensorboards->GetRun(PathOf(c));
  if (!r.ok()) return ErrorResponse(r.status());
  return JsonResponse(RunJson(*r));
}

HttpResponse ListTensorboardRuns(const RouteCall& c) {
  Result<PageRequest> page = PageOf(c.request);
  if (!page.ok()) return ErrorResponse(page.status());
  return ListAnswer(c.tensorboards->ListRuns(PathOf(c), *page), "tensorboardRuns", RunJson);
}

HttpResponse DeleteTensorboardRun(const RouteCall& c) {
  return DeletedOperation(c, c.tensorboards->DeleteRun(PathOf(c)));
}

HttpResponse CreateTensorboardTimeSeries(const RouteCall& c) {
  Result<json> body = BodyObject(c.request);
  if (!body.ok()) return ErrorResponse(body.status());
  TimeSeries s;
  s.path = PathOf(c);
  if (Status st = ReadDescribed(*body, "tensorboardTimeSeries", &s); !st.ok()) {
    return ErrorResponse(st);
  }
  const json type = body->value("valueType", json());
  if (type.is_string()) s.value_type = type.get<std::string>();
  if (type.is_number_integer()) s.value_type = type.get<int>() == 1 ? "SCALAR" : "OTHER";
  const json plugin = body->value("pluginName", json());
  if (plugin.is_string()) s.plugin_name = plugin.get<std::string>();
  Result<TimeSeries> made = c.tensorboards->CreateTimeSeries(s);
  if (!made.ok()) return ErrorResponse(made.status());
  return JsonResponse(TimeSeriesJson(*made, c.render));
}

HttpResponse GetTensorboardTimeSeries(const RouteCall& c) {
  Result<TimeSeries> s = c.tensorboards->GetTimeSeries(PathOf(c));
  if (!s.ok()) return ErrorResponse(s.status());
  return JsonResponse(TimeSeriesJson(*s, c.render));
}

HttpResponse ListTensorboardTimeSeries(const RouteCall& c) {
  Result<PageRequest> page = PageOf(c.request);
  if (!page.ok()) return ErrorResponse(page.status());
  return ListAnswer(c.tensorboards->ListTimeSeries(PathOf(c), *page), "tensorboardTimeSeries",
                    [&c](const TimeSeries& s) { return TimeSeriesJson(s, c.render); });
}

HttpResponse ReadTensorboardTimeSeries(const RouteCall& c) {
  Result<TimeSeries> s = c.tensorboards->GetTimeSeries(PathOf(c));
  if (!s.ok()) return ErrorResponse(s.status());
  PointQuery query;
  if (Status f = ParseStepFilter(Param(c.request, "filter"), &query.min_step, &query.max_step);
      !f.ok()) {
    return ErrorResponse(f);
  }
  Result<int> max_points = IntParam(c.request, "maxDataPoints", 0);
  if (!max_points.ok()) return ErrorResponse(max_points.status());
  query.max_points = *max_points;
  Result<std::vector<Point>> points = c.tensorboards->ReadPoints(s->path, query);
  if (!points.ok()) return ErrorResponse(points.status());
  return JsonResponse({{"timeSeriesData", TimeSeriesDataJson(*s, *points, c.render)}});
}

HttpResponse BatchReadTensorboardTimeSeries(const RouteCall& c) {
  const std::vector<std::string> names = QueryValues(c.request.raw_query, "timeSeries");
  if (names.size() > 20) {
    return ErrorResponse(
        InvalidArgument("timeSeries: at most 20 time series at once").WithField("timeSeries"));
  }
  const ResourcePath tb = PathOf(c).Tensorboard();
  json data = json::array();
  for (const std::string& name : names) {
    // Each name must be a time series of this tensorboard.
    const std::string prefix = tb.name() + "/experiments/";
    std::vector<std::string> parts = SplitPath(name.substr(std::min(name.size(), prefix.size())));
    if (name.compare(0, prefix.size(), prefix) != 0 || parts.size() != 5 || parts[1] != "runs" ||
        parts[3] != "timeSeries") {
      return ErrorResponse(InvalidArgument("timeSeries: " + name.substr(0, 300) +
                                           " is not a time series of " + tb.name())
                               .WithField("timeSeries"));
    }
    ResourcePath p = tb;
    p.experiment = parts[0];
    p.run = parts[2];
    p.time_series = parts[4];
    Result<TimeSeries> s = c.tensorboards->GetTimeSeries(p);
    if (!s.ok()) return ErrorResponse(s.status());
    Result<std::vector<Point>> points = c.tensorboards->ReadPoints(p, {});
    if (!points.ok()) return ErrorResponse(points.status());
    data.push_back(TimeSeriesDataJson(*s, *points, c.render));
  }
  return JsonResponse({{"timeSeriesData", std::move(data)}});
}

HttpResponse WriteTensorboardRunData(const RouteCall& c) {
  Result<json> body = BodyObject(c.request);
  if (!body.ok()) return ErrorResponse(body.status());
  const json all = body->value("timeSeriesData", json());
  if (!all.is_null() && (!all.is_array() || all.size() > 5000)) {
    return ErrorResponse(InvalidArgument("timeSeriesData: a list of at most 5000 time series")
                             .WithField("timeSeriesData"));
  }
  for (size_t i = 0; all.is_array() && i < all.size(); ++i) {
    const std::string path = "timeSeriesData[" + std::to_string(i) + "]";
    Result<std::vector<Point>> points = PointsOf(all[i], path);
    if (!points.ok()) return ErrorResponse(points.status());
    // value(), not [] on a const object: a missing key is no UB, just absent.
    const json id = all[i].is_object() ? all[i].value("tensorboardTimeSeriesId", json()) : json();
    if (!id.is_string()) {
      return ErrorResponse(InvalidArgument(path + ".tensorboardTimeSeriesId: required")
                               .WithField(path + ".tensorboardTimeSeriesId"));
    }
    if (Status s = c.tensorboards->WritePoints(PathOf(c), id.get<std::string>(), *points);
        !s.ok()) {
      return ErrorResponse(s);
    }
  }
  return JsonResponse(json::object());
}

}  // namespace ty::api::internal
