#include "daemon/tensorboard_targets.h"

#include "model/runtime_env.h"

namespace ty::daemon {

namespace {

constexpr char kField[] = "jobSpec.tensorboard";

}  // namespace

Status CheckJobTensorboard(const tensorboard::Store& store, const std::string& project,
                           const std::string& name) {
  ASSIGN_OR_RETURN(tensorboard::ResourcePath path, tensorboard::ParseTensorboardName(name, kField));
  if (path.project != project) {
    return FieldError(kField, "must be a tensorboard of project " + project);
  }
  Result<tensorboard::Tensorboard> found = store.GetTensorboard(path);
  if (found.status().code() == StatusCode::kNotFound) {
    return FieldError(kField, name + " does not exist");
  }
  return found.status();
}

bool IndexesTensorboard(const model::Job& job) {
  return !job.spec.tensorboard.empty() && !job.spec.base_output_directory.empty() &&
         job.kind != model::JobKind::kStudy;
}

std::optional<tensorboard::IndexTarget> TensorboardTarget(const model::Job& job,
                                                          const std::string& bucket_root) {
  if (!IndexesTensorboard(job)) return std::nullopt;
  Result<tensorboard::ResourcePath> board =
      tensorboard::ParseTensorboardName(job.spec.tensorboard, kField);
  std::optional<std::pair<std::string, std::string>> base =
      model::SplitGcsUri(job.spec.base_output_directory);
  if (!board.ok() || !base) return std::nullopt;
  const bool trial = !job.study_uid.empty();
  std::string dir = base->first + "/" + base->second;
  if (!dir.empty() && dir.back() != '/') dir += '/';
  if (trial) dir += std::to_string(job.trial_id) + "/";
  tensorboard::IndexTarget target;
  target.experiment = *board;
  target.experiment.experiment = trial ? job.study_uid : job.public_id();
  target.experiment_display_name =
      trial ? "tuning job " + job.study_uid
            : (job.spec.display_name.empty() ? job.public_id() : job.spec.display_name);
  target.bucket_root = bucket_root;
  target.log_dir = dir + "logs";
  target.run_prefix = trial ? std::to_string(job.trial_id) : "";
  return target;
}

std::vector<tensorboard::IndexTarget> EndedSince(const service::JobService& service,
                                                 TimeMicros since, const std::string& bucket_root) {
  std::vector<tensorboard::IndexTarget> out;
  if (since <= 0) return out;
  // A round that ran just before a job's end published may not have seen it end.
  constexpr DurationMicros kMargin = 60 * 1000000LL;
  for (const model::Job& job : service.EndedSince(since - kMargin, IndexesTensorboard)) {
    if (auto target = TensorboardTarget(job, bucket_root)) out.push_back(std::move(*target));
  }
  return out;
}

}  // namespace ty::daemon
