// `trainyard ai hp-tuning-jobs create|describe|list|cancel|stream-logs`
// (docs/contracts/gcloud-cli.md §6) against the daemon's Vertex hyperparameterTuningJobs routes.
#include <algorithm>
#include <cctype>
#include <memory>

#include "cli/commands.h"
#include "cli/flag_values.h"
#include "cli/job_commands.h"
#include "format/yaml_json.h"

namespace ty::cli::internal {
namespace {

struct HpTuningJobsState {
  std::string region;
  std::string display_name;
  std::optional<std::string> config_path;
  std::optional<int64_t> max_trial_count;
  std::optional<int64_t> parallel_trial_count;
  std::optional<std::string> algorithm;
  std::optional<std::string> labels;
  JobQueryFlags query;  // JOB: numeric id or full resource name.
};

constexpr char kTuningJobsCommand[] = "trainyard ai hp-tuning-jobs";
constexpr char kTuningJobsCollection[] = "hyperparameterTuningJobs";

Result<std::string> ResolveTuningJobName(Runtime& rt, const HpTuningJobsState& st) {
  return VertexJobName(rt, st.query.job, st.region, kTuningJobsCollection);
}

std::string TuningJobIdOf(const std::string& name) { return name.substr(name.rfind('/') + 1); }

// --algorithm's choices are gcloud's enum names in lower case with dashes.
Result<std::string> AlgorithmEnum(const std::string& choice) {
  for (const char* name : {"algorithm-unspecified", "grid-search", "random-search"}) {
    if (choice != name) continue;
    std::string e = choice;
    std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) {
      return c == '-' ? '_' : static_cast<char>(std::toupper(c));
    });
    return e;
  }
  return Status(InvalidFlag("--algorithm", "Invalid choice: '" + choice +
                                               "'. Valid choices are [algorithm-unspecified, "
                                               "grid-search, random-search]."));
}

// The HyperparameterTuningJob: --config, then the flags over it (gcloud's order).
Result<nlohmann::json> BuildTuningJob(const HpTuningJobsState& st) {
  if (st.display_name.empty()) {
    return Status(InvalidArgument("argument --display-name: Must be specified."));
  }
  if (!st.config_path) return Status(InvalidArgument("argument --config: Must be specified."));
  Result<nlohmann::json> config = format::ReadYamlOrJsonFile(*st.config_path);
  if (!config.ok()) return Status(InvalidFlag("--config", config.status().message()));
  if (!config->is_object()) {
    return Status(InvalidFlag("--config", "the file must hold a HyperparameterTuningJob object"));
  }
  nlohmann::json job = *config;
  job["displayName"] = st.display_name;
  if (st.max_trial_count) {
    job["maxTrialCount"] = *st.max_trial_count;
  } else if (!job.contains("maxTrialCount")) {
    job["maxTrialCount"] = 1;
  }
  if (st.parallel_trial_count) {
    job["parallelTrialCount"] = *st.parallel_trial_count;
  } else if (!job.contains("parallelTrialCount")) {
    job["parallelTrialCount"] = 1;
  }
  if (st.algorithm && job.contains("studySpec") && job["studySpec"].is_object()) {
    ASSIGN_OR_RETURN(std::string algorithm, AlgorithmEnum(*st.algorithm));
    job["studySpec"]["algorithm"] = algorithm;
  }
  if (st.labels) {
    ASSIGN_OR_RETURN(nlohmann::json labels, ParseLabels("--labels", *st.labels));
    job["labels"] = std::move(labels);
  }
  return job;
}

int CreateTuningJob(Runtime& rt, HpTuningJobsState& st, const std::string& path) {
  PrintVertexEndpoint(rt);
  if (Status s = RequireRegion(st.region); !s.ok()) return ReportError(rt, path, s);
  Result<nlohmann::json> body = BuildTuningJob(st);
  if (!body.ok()) return ReportError(rt, path, body.status());
  Result<nlohmann::json> created =
      CallApi(rt, "POST", VertexCollectionPath(rt, st.region, kTuningJobsCollection), &*body);
  if (!created.ok()) return ReportError(rt, path, created.status());
  const std::string id = TuningJobIdOf(created->value("name", std::string()));
  *rt.err << "Hyperparameter tuning job [" << id << "] submitted successfully.\n\n"
          << "Your job is still active. You may view the status of your job with the command\n\n"
          << "  $ " << kTuningJobsCommand << " describe " << id << " --region=" << st.region
          << "\n\n"
          << "Job State: " << created->value("state", std::string()) << "\n";
  PrintCreatedIfAsked(rt, *created);
  return 0;
}

int DescribeTuningJob(Runtime& rt, HpTuningJobsState& st, const std::string& path) {
  PrintVertexEndpoint(rt);
  Result<std::string> name = ResolveTuningJobName(rt, st);
  if (!name.ok()) return ReportError(rt, path, name.status());
  return DescribeJob(rt, path, "/v1/" + *name);
}

int ListTuningJobs(Runtime& rt, HpTuningJobsState& st, const std::string& path) {
  PrintVertexEndpoint(rt);
  if (Status s = RequireRegion(st.region); !s.ok()) return ReportError(rt, path, s);
  return ListJobs(rt, path, VertexCollectionPath(rt, st.region, kTuningJobsCollection),
                  kTuningJobsCollection, st.query);
}

int CancelTuningJob(Runtime& rt, HpTuningJobsState& st, const std::string& path) {
  PrintVertexEndpoint(rt);
  Result<std::string> name = ResolveTuningJobName(rt, st);
  if (!name.ok()) return ReportError(rt, path, name.status());
  if (Status s = CancelJob(rt, "/v1/" + *name); !s.ok()) return ReportError(rt, path, s);
  // The region of a full name is its locations/ segment.
  const size_t at = name->find("/locations/") + 11;
  const std::string region = name->substr(at, name->find('/', at) - at);
  *rt.err << "Request to cancel hyperparameter tuning job [" << TuningJobIdOf(*name)
          << "] has been sent.\n\n"
          << "You may view the status of your job with the command\n\n"
          << "  $ " << kTuningJobsCommand << " describe " << TuningJobIdOf(*name)
          << " --region=" << region << "\n";
  return 0;
}

int StreamTuningJobLogs(Runtime& rt, HpTuningJobsState& st, const std::string& path) {
  PrintVertexEndpoint(rt);
  Result<std::string> name = ResolveTuningJobName(rt, st);
  if (!name.ok()) return ReportError(rt, path, name.status());
  return StreamJobLogs(rt, path, "/v1/" + *name, LogDialect::kVertex, st.query);
}

CLI::App* AddTuningJobsCommand(CLI::App& group, const std::string& name, const std::string& help,
                               Selection* selection, std::shared_ptr<HpTuningJobsState> st,
                               int (*fn)(Runtime&, HpTuningJobsState&, const std::string&)) {
  return AddJobCommand(group, name, help, "trainyard.ai.hp-tuning-jobs." + name, selection,
                       std::move(st), fn);
}

template <typename T>
void AddOptional(CLI::App* cmd, const std::string& flag, std::optional<T>* target,
                 const std::string& help) {
  cmd->add_option_function<T>(
      flag, [target](const T& v) { *target = v; }, help);
}

}  // namespace

std::shared_ptr<void> RegisterHpTuningJobs(CLI::App& ai, Selection* selection) {
  auto st = std::make_shared<HpTuningJobsState>();
  CLI::App* group = ai.add_subcommand(
      "hp-tuning-jobs", "Create and manage Vertex AI style hyperparameter tuning jobs.");
  group->require_subcommand(1);

  CLI::App* create = AddTuningJobsCommand(*group, "create", "Create a hyperparameter tuning job.",
                                          selection, st, CreateTuningJob);
  create->add_option("--region", st->region, "Region (location) of the job.");
  create->add_option("--display-name", st->display_name, "Display name of the job.");
  AddOptional(create, "--config", &st->config_path,
              "YAML/JSON HyperparameterTuningJob (studySpec, trialJobSpec, ...).");
  AddOptional(create, "--max-trial-count", &st->max_trial_count,
              "Trials to run in all (overrides the config; default 1).");
  AddOptional(create, "--parallel-trial-count", &st->parallel_trial_count,
              "Trials to run at once (overrides the config; default 1).");
  AddOptional(create, "--algorithm", &st->algorithm,
              "algorithm-unspecified (Bayesian optimisation), grid-search or random-search.");
  AddOptional(create, "--labels", &st->labels, "KEY=VALUE,... labels.");

  CLI::App* describe =
      AddTuningJobsCommand(*group, "describe", "Describe a hyperparameter tuning job.", selection,
                           st, DescribeTuningJob);
  describe->add_option("JOB", st->query.job, "Numeric id or full resource name.")->required();
  describe->add_option("--region", st->region);

  CLI::App* list = AddTuningJobsCommand(*group, "list", "List hyperparameter tuning jobs.",
                                        selection, st, ListTuningJobs);
  list->add_option("--region", st->region);
  list->add_option("--filter", st->query.filter, "Filter expression, evaluated by the server.");
  list->add_option("--limit", st->query.limit, "Maximum number of jobs to list.");
  list->add_option("--page-size", st->query.page_size, "Jobs per page requested from the server.");

  CLI::App* cancel =
      AddTuningJobsCommand(*group, "cancel", "Cancel a running hyperparameter tuning job.",
                           selection, st, CancelTuningJob);
  cancel->add_option("JOB", st->query.job)->required();
  cancel->add_option("--region", st->region);

  CLI::App* logs =
      AddTuningJobsCommand(*group, "stream-logs", "Stream the logs of a hyperparameter tuning job.",
                           selection, st, StreamTuningJobLogs);
  logs->add_option("JOB", st->query.job)->required();
  logs->add_option("--region", st->region);
  logs->add_option("--task-name", st->query.task_name, "Only this task's logs.");
  logs->add_option("--polling-interval", st->query.polling_interval_s,
                   "Seconds between reconnect attempts (max).");
  logs->add_flag("--allow-multiline-logs", st->query.allow_multiline);
  return st;
}

}  // namespace ty::cli::internal
