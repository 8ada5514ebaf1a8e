// `trainyard ai-platform jobs submit training|describe|list|cancel|stream-logs`
// (docs/contracts/gcloud-cli.md §1, §2, §8) against the ml v1 routes of the daemon.
#include <memory>

#include "cli/commands.h"
#include "cli/flag_values.h"
#include "cli/job_commands.h"
#include "cli/ml_job_request.h"
#include "format/yaml_json.h"

namespace ty::cli::internal {
namespace {

struct MlJobsState {
  MlSubmitFlags submit;
  std::optional<std::string> config_path;
  bool stream_logs = false;
  bool async = false;
  JobQueryFlags query;  // JOB: jobId, or projects/P/jobs/ID.
};

std::string JobPath(Runtime& rt, const std::string& job) {
  if (job.rfind("projects/", 0) == 0) return "/v1/" + job;
  return "/v1/projects/" + rt.Project() + "/jobs/" + job;
}

// `yaml(jobId,state,startTime,endTime)`, the submit command's output.
std::string SubmitSummary(const nlohmann::json& job) {
  return FormatYamlProjection(job, {"jobId", "state", "startTime", "endTime"});
}

std::string MlJobsPath(Runtime& rt) { return "/v1/projects/" + rt.Project() + "/jobs"; }

int Submit(Runtime& rt, MlJobsState& st, const std::string& path) {
  if (st.stream_logs && st.async) {
    return ReportError(rt, path,
                       InvalidArgument("argument --async: At most one of --async | --stream-logs "
                                       "may be specified."));
  }
  if (st.config_path) {
    Result<nlohmann::json> config = format::ReadYamlOrJsonFile(*st.config_path);
    if (!config.ok())
      return ReportError(rt, path, InvalidFlag("--config", config.status().message()));
    st.submit.config = *config;
  }
  st.submit.user_args = rt.user_args;
  Result<nlohmann::json> body = BuildMlJob(st.submit);
  if (!body.ok()) return ReportError(rt, path, body.status());
  long http_status = 0;
  Result<nlohmann::json> created = CallApi(rt, "POST", MlJobsPath(rt), &*body, &http_status);
  if (!created.ok()) {
    if (http_status == 409) {
      return ReportError(rt, path,
                         Status(created.status().code(), "Resource in projects [" + rt.Project() +
                                                             "] is the subject of a conflict: " +
                                                             created.status().message()));
    }
    return ReportError(rt, path, created.status());
  }
  const std::string& id = st.submit.job_id;
  *rt.err << "Job [" << id << "] submitted successfully.\n";
  if (!st.stream_logs) {
    PrintStillActiveHint(rt, "trainyard ai-platform jobs", id);
    *rt.out << SubmitSummary(*created);
    return 0;
  }
  // With --stream-logs gcloud writes the log lines to stderr and the final job to stdout.
  Result<nlohmann::json> final_job =
      FollowJob(rt, JobPath(rt, id), LogDialect::kMl, "", 60, false, *rt.err);
  if (!final_job.ok()) return ReportError(rt, path, final_job.status());
  *rt.out << SubmitSummary(*final_job);
  return final_job->value("state", std::string()) == "SUCCEEDED" ? 0 : 1;
}

int DescribeMlJob(Runtime& rt, MlJobsState& st, const std::string& path) {
  return DescribeJob(rt, path, JobPath(rt, st.query.job));
}

int ListMlJobs(Runtime& rt, MlJobsState& st, const std::string& path) {
  return ListJobs(rt, path, MlJobsPath(rt), "jobs", st.query, FormatMlJobTable);
}

int CancelMlJob(Runtime& rt, MlJobsState& st, const std::string& path) {
  if (Status s = CancelJob(rt, JobPath(rt, st.query.job)); !s.ok()) return ReportError(rt, path, s);
  return 0;  // gcloud prints nothing on success.
}

int StreamMlJobLogs(Runtime& rt, MlJobsState& st, const std::string& path) {
  return StreamJobLogs(rt, path, JobPath(rt, st.query.job), LogDialect::kMl, st.query);
}

CLI::App* AddMlJobsCommand(CLI::App& parent, const std::string& name,
                           const std::string& path_suffix, const std::string& help,
                           Selection* selection, std::shared_ptr<MlJobsState> st,
                           int (*fn)(Runtime&, MlJobsState&, const std::string&)) {
  std::string path = "trainyard.ai-platform.jobs." + path_suffix;
  bool accepts_user_args = path == "trainyard.ai-platform.jobs.submit.training";
  return AddJobCommand(parent, name, help, path, selection, std::move(st), fn, accepts_user_args);
}

// A string flag that records whether it was given (flags overwrite config fields
// only when given, per gcloud's precedence).
void OptString(CLI::App* cmd, const std::string& name, std::optional<std::string>* target,
               const std::string& help = "") {
  cmd->add_option_function<std::string>(
      name, [target](const std::string& v) { *target = v; }, help);
}

// gcloud ai-platform jobs submit training's flags and argument.
void AddMlTrainingFlags(CLI::App* training, const std::shared_ptr<MlJobsState>& st) {
  MlSubmitFlags& f = st->submit;
  training->add_option("JOB", f.job_id, "Job id (letters, digits, underscores).")->required();
  training->add_option_function<std::string>(
      "--config", [st](const std::string& v) { st->config_path = v; }, "YAML/JSON Job file.");
  OptString(training, "--region", &f.region, "Region of the job.");
  OptString(training, "--module-name", &f.module_name);
  OptString(training, "--packages", &f.packages, "Comma-separated gs:// package URIs.");
  OptString(training, "--job-dir", &f.job_dir, "gs:// output directory, passed as --job-dir.");
  OptString(training, "--scale-tier", &f.scale_tier,
            "basic|standard-1|premium-1|basic-gpu|basic-tpu|custom");
  OptString(training, "--runtime-version", &f.runtime_version);
  OptString(training, "--python-version", &f.python_version);
  OptString(training, "--master-machine-type", &f.master_machine_type);
  OptString(training, "--master-accelerator", &f.master_accelerator, "type=TYPE,count=N");
  OptString(training, "--master-image-uri", &f.master_image_uri, "Container image of the master.");
  OptString(training, "--worker-machine-type", &f.worker_machine_type);
  training->add_option_function<int64_t>("--worker-count",
                                         [st](int64_t v) { st->submit.worker_count = v; });
  OptString(training, "--worker-accelerator", &f.worker_accelerator);
  OptString(training, "--worker-image-uri", &f.worker_image_uri);
  OptString(training, "--parameter-server-machine-type", &f.parameter_server_machine_type);
  training->add_option_function<int64_t>(
      "--parameter-server-count", [st](int64_t v) { st->submit.parameter_server_count = v; });
  OptString(training, "--parameter-server-accelerator", &f.parameter_server_accelerator);
  OptString(training, "--parameter-server-image-uri", &f.parameter_server_image_uri);
  OptString(training, "--use-chief-in-tf-config", &f.use_chief_in_tf_config);
  OptString(training, "--service-account", &f.service_account);
  OptString(training, "--labels", &f.labels, "KEY=VALUE,... labels.");
  training->add_flag("--enable-web-access", f.enable_web_access);
  training->add_flag("--stream-logs", st->stream_logs,
                     "Stream logs until the job ends; exit 1 unless it succeeds.");
  training->add_flag("--async", st->async, "Deprecated no-op (asynchronous is the default).");
}

}  // namespace

std::shared_ptr<void> RegisterMlJobs(CLI::App& ai_platform, Selection* selection) {
  auto st = std::make_shared<MlJobsState>();
  CLI::App* group =
      ai_platform.add_subcommand("jobs", "Submit and manage AI Platform style training jobs.");
  group->require_subcommand(1);

  CLI::App* submit = group->add_subcommand("submit", "Submit a job.");
  submit->require_subcommand(1);
  CLI::App* training = AddMlJobsCommand(*submit, "training", "submit.training",
                                        "Submit a training job; args after `--` go to the trainer.",
                                        selection, st, Submit);
  AddMlTrainingFlags(training, st);

  CLI::App* describe = AddMlJobsCommand(*group, "describe", "describe", "Describe a job.",
                                        selection, st, DescribeMlJob);
  describe->add_option("JOB", st->query.job)->required();

  CLI::App* list =
      AddMlJobsCommand(*group, "list", "list", "List jobs.", selection, st, ListMlJobs);
  list->add_option("--filter", st->query.filter, "Filter expression, evaluated by the server.");
  list->add_option("--limit", st->query.limit, "Maximum number of jobs to list.");
  list->add_option("--page-size", st->query.page_size);

  CLI::App* cancel =
      AddMlJobsCommand(*group, "cancel", "cancel", "Cancel a job.", selection, st, CancelMlJob);
  cancel->add_option("JOB", st->query.job)->required();

  CLI::App* logs = AddMlJobsCommand(*group, "stream-logs", "stream-logs",
                                    "Stream the logs of a job.", selection, st, StreamMlJobLogs);
  logs->add_option("JOB", st->query.job)->required();
  logs->add_option("--task-name", st->query.task_name,
                   "Only this task's logs (e.g. master-replica-0).");
  logs->add_option("--polling-interval", st->query.polling_interval_s);
  logs->add_flag("--allow-multiline-logs", st->query.allow_multiline);
  return st;
}

}  // namespace ty::cli::internal
