#include "machines/trial_jobs.h"

#include <algorithm>
#include <functional>

#include "tuning/hypertune_file.h"

namespace ty::machines {

namespace {

constexpr size_t kMaxMeasurements = 1000;

using OrderedParams = std::vector<std::pair<const model::ParamSpec*, const model::ParamValue*>>;

// `p` and, when it is set, its children, in place: the pointers must stay valid as long
// as the study spec does (copying the children here once left them dangling).
void Visit(const model::ParamSpec& p, const model::Assignment& values, OrderedParams* out) {
  auto it = values.find(p.name);
  if (it == values.end()) return;
  out->push_back({&p, &it->second});
  for (const model::ConditionalChild& c : p.children) Visit(c.spec, values, out);
}

// Active parameters in search-space order (parents before their children).
void InOrder(const std::vector<model::ParamSpec>& params, const model::Assignment& values,
             OrderedParams* out) {
  for (const model::ParamSpec& p : params) Visit(p, values, out);
}

}  // namespace

std::string TrialMetricsDir(const std::string& trial_root, const std::string& job_uid) {
  return trial_root + "/" + job_uid;
}

std::string DescribeParams(const model::StudySpec& spec, const model::Assignment& params) {
  std::vector<std::pair<const model::ParamSpec*, const model::ParamValue*>> ordered;
  InOrder(spec.params, params, &ordered);
  std::string out;
  for (const auto& [p, v] : ordered) {
    if (!out.empty()) out += ", ";
    out += p->name + "=" + model::FormatValue(*p, *v);
  }
  return out;
}

model::Job TrialJob(const model::Job& study, const model::StudySpec& spec, int64_t trial_id,
                    const model::Assignment& params) {
  model::Job job;
  job.dialect = study.dialect;
  job.project = study.project;
  job.location = study.location;
  job.spec = study.spec;
  job.spec.study.reset();
  job.kind = model::JobKind::kTrial;
  job.study_uid = study.uid;
  job.trial_id = trial_id;
  if (job.dialect == model::Dialect::kMlV1) {
    job.spec.job_id = study.spec.job_id + "_trial_" + std::to_string(trial_id);
  }
  std::vector<std::pair<const model::ParamSpec*, const model::ParamValue*>> ordered;
  InOrder(spec.params, params, &ordered);
  std::vector<std::string> flags;
  for (const auto& [p, v] : ordered)
    flags.push_back("--" + p->name + "=" + model::FormatValue(*p, *v));
  const model::EnvVar tag{"CLOUD_ML_HP_METRIC_TAG", spec.tag()};
  for (model::WorkerPool& pool : job.spec.pools) {
    if (pool.container) {
      pool.container->args.insert(pool.container->args.end(), flags.begin(), flags.end());
      pool.container->env.push_back(tag);
    }
    if (pool.python_package) {
      pool.python_package->args.insert(pool.python_package->args.end(), flags.begin(), flags.end());
      pool.python_package->env.push_back(tag);
    }
  }
  return job;
}

MergedMetrics MergeMeasurements(const std::string& text, const std::string& tag,
                                TimeMicros started_at, model::Trial* trial) {
  tuning::MetricsFile file = tuning::ParseMetricsFile(text, tag);
  MergedMetrics merged;
  merged.skipped = file.skipped;
  const double start_s = static_cast<double>(started_at) / 1e6;
  for (const tuning::Measurement& m : file.measurements) {
    model::TrialMeasurement tm{m.step, m.value, std::max(0.0, m.timestamp - start_s)};
    // A report is known when one with the same step, value and time is: the file is
    // rewritten whole on every report, so most lines come back on every read.
    bool known = std::any_of(trial->measurements.begin(), trial->measurements.end(),
                             [&](const model::TrialMeasurement& k) {
                               return k.step == tm.step && k.value == tm.value &&
                                      k.elapsed_seconds == tm.elapsed_seconds;
                             });
    if (known) continue;
    trial->measurements.push_back(tm);
    merged.added.push_back(tm);
  }
  if (trial->measurements.size() > kMaxMeasurements) {
    trial->measurements.erase(trial->measurements.begin(),
                              trial->measurements.end() - kMaxMeasurements);
  }
  return merged;
}

std::optional<model::TrialMeasurement> FinalMeasurement(const model::StudySpec& spec,
                                                        const model::Trial& trial) {
  if (trial.measurements.empty()) return std::nullopt;
  if (spec.selection == model::MeasurementSelection::kLast) return trial.measurements.back();
  const bool maximize = spec.goal == model::Goal::kMaximize;
  return *std::max_element(trial.measurements.begin(), trial.measurements.end(),
                           [&](const auto& a, const auto& b) {
                             return maximize ? a.value < b.value : a.value > b.value;
                           });
}

}  // namespace ty::machines
