// `trainyard ai custom-jobs create|describe|list|cancel|stream-logs`
// (docs/contracts/gcloud-cli.md §4, §5, §8) against the Vertex v1 routes of the daemon.
#include <memory>

#include "cli/commands.h"
#include "cli/custom_job_request.h"
#include "cli/flag_values.h"
#include "cli/job_commands.h"
#include "format/yaml_json.h"

namespace ty::cli::internal {
namespace {

struct CustomJobsState {
  CustomJobFlags create;
  std::optional<std::string> config_path;
  std::string region;
  JobQueryFlags query;  // JOB: numeric id or full resource name.
};

constexpr char kCustomJobsCommand[] = "trainyard ai custom-jobs";

constexpr char kCustomJobsCollection[] = "customJobs";

void PrintEndpoint(Runtime& rt) { PrintVertexEndpoint(rt); }

Result<std::string> ResolveCustomJobName(Runtime& rt, const CustomJobsState& st) {
  return VertexJobName(rt, st.query.job, st.region, kCustomJobsCollection);
}

std::string CustomJobsPath(Runtime& rt, const CustomJobsState& st) {
  return VertexCollectionPath(rt, st.region, kCustomJobsCollection);
}

int CreateCustomJob(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  if (Status s = RequireRegion(st.region); !s.ok()) return ReportError(rt, path, s);
  if (st.config_path) {
    Result<nlohmann::json> config = format::ReadYamlOrJsonFile(*st.config_path);
    if (!config.ok())
      return ReportError(rt, path, InvalidFlag("--config", config.status().message()));
    st.create.config = *config;
  }
  Result<nlohmann::json> body = BuildCustomJob(st.create);
  if (!body.ok()) return ReportError(rt, path, body.status());
  Result<nlohmann::json> created = CallApi(rt, "POST", CustomJobsPath(rt, st), &*body);
  if (!created.ok()) return ReportError(rt, path, created.status());
  std::string name = created->value("name", std::string());
  *rt.err << "CustomJob [" << name << "] is submitted successfully.\n\n";
  PrintStillActiveHint(rt, kCustomJobsCommand, name);
  PrintCreatedIfAsked(rt, *created);
  return 0;
}

int DescribeCustomJob(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  Result<std::string> name = ResolveCustomJobName(rt, st);
  if (!name.ok()) return ReportError(rt, path, name.status());
  return DescribeJob(rt, path, "/v1/" + *name);
}

int ListCustomJobs(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  if (Status s = RequireRegion(st.region); !s.ok()) return ReportError(rt, path, s);
  return ListJobs(rt, path, CustomJobsPath(rt, st), "customJobs", st.query);
}

int CancelCustomJob(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  Result<std::string> name = ResolveCustomJobName(rt, st);
  if (!name.ok()) return ReportError(rt, path, name.status());
  if (Status s = CancelJob(rt, "/v1/" + *name); !s.ok()) return ReportError(rt, path, s);
  *rt.err << "Request to cancel CustomJob [" << *name << "] has been sent.\n\n"
          << "You may view the status of your job with the command\n\n"
          << "  $ " << kCustomJobsCommand << " describe " << *name << "\n";
  return 0;
}

int StreamCustomJobLogs(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  Result<std::string> name = ResolveCustomJobName(rt, st);
  if (!name.ok()) return ReportError(rt, path, name.status());
  return StreamJobLogs(rt, path, "/v1/" + *name, LogDialect::kVertex, st.query);
}

CLI::App* AddCustomJobsCommand(CLI::App& group, const std::string& name, const std::string& help,
                               Selection* selection, std::shared_ptr<CustomJobsState> st,
                               int (*fn)(Runtime&, CustomJobsState&, const std::string&)) {
  return AddJobCommand(group, name, help, "trainyard.ai.custom-jobs." + name, selection,
                       std::move(st), fn);
}

// gcloud ai custom-jobs create's flags.
void AddCustomJobCreateFlags(CLI::App* create, const std::shared_ptr<CustomJobsState>& st) {
  create->add_option("--region", st->region, "Region (location) of the job.");
  create->add_option("--display-name", st->create.display_name, "Display name of the job.");
  create
      ->add_option("--worker-pool-spec", st->create.worker_pool_specs,
                   "KEY=VALUE,... for one worker pool; repeat per pool; empty = placeholder pool.")
      ->allow_extra_args(false);
  create->add_option_function<std::string>(
      "--config", [st](const std::string& v) { st->config_path = v; },
      "YAML/JSON CustomJobSpec file.");
  create
      ->add_option("--args", st->create.args,
                   "Comma-separated args for every pool; repeat to append.")
      ->allow_extra_args(false);
  create->add_option_function<std::string>(
      "--command", [st](const std::string& v) { st->create.command = v; },
      "Comma-separated command.");
  create->add_option_function<std::string>(
      "--python-package-uris", [st](const std::string& v) { st->create.python_package_uris = v; },
      "Comma-separated package URIs for every python package pool.");
  create->add_option_function<std::string>(
      "--labels", [st](const std::string& v) { st->create.labels = v; }, "KEY=VALUE,... labels.");
  create->add_option_function<std::string>(
      "--service-account", [st](const std::string& v) { st->create.service_account = v; });
  create->add_option_function<std::string>("--network",
                                           [st](const std::string& v) { st->create.network = v; });
  create->add_option_function<std::string>("--persistent-resource-id", [st](const std::string& v) {
    st->create.persistent_resource_id = v;
  });
  create->add_flag("--enable-web-access", st->create.enable_web_access);
  create->add_flag("--enable-dashboard-access", st->create.enable_dashboard_access);
}

}  // namespace

std::shared_ptr<void> RegisterCustomJobs(CLI::App& ai, Selection* selection) {
  auto st = std::make_shared<CustomJobsState>();
  CLI::App* group =
      ai.add_subcommand("custom-jobs", "Create and manage Vertex AI style custom jobs.");
  group->require_subcommand(1);

  CLI::App* create = AddCustomJobsCommand(*group, "create", "Create a new custom job.", selection,
                                          st, CreateCustomJob);
  AddCustomJobCreateFlags(create, st);

  CLI::App* describe = AddCustomJobsCommand(*group, "describe", "Describe a custom job.", selection,
                                            st, DescribeCustomJob);
  describe->add_option("JOB", st->query.job, "Numeric id or full resource name.")->required();
  describe->add_option("--region", st->region);

  CLI::App* list =
      AddCustomJobsCommand(*group, "list", "List custom jobs.", selection, st, ListCustomJobs);
  list->add_option("--region", st->region);
  list->add_option("--filter", st->query.filter, "Filter expression, evaluated by the server.");
  list->add_option("--limit", st->query.limit, "Maximum number of jobs to list.");
  list->add_option("--page-size", st->query.page_size, "Jobs per page requested from the server.");

  CLI::App* cancel = AddCustomJobsCommand(*group, "cancel", "Cancel a running custom job.",
                                          selection, st, CancelCustomJob);
  cancel->add_option("JOB", st->query.job)->required();
  cancel->add_option("--region", st->region);

  CLI::App* logs = AddCustomJobsCommand(*group, "stream-logs", "Stream the logs of a custom job.",
                                        selection, st, StreamCustomJobLogs);
  logs->add_option("JOB", st->query.job)->required();
  logs->add_option("--region", st->region);
  logs->add_option("--task-name", st->query.task_name,
                   "Only this task's logs (e.g. workerpool0-0).");
  logs->add_option("--polling-interval", st->query.polling_interval_s,
                   "Seconds between reconnect attempts (max).");
  logs->add_flag("--allow-multiline-logs", st->query.allow_multiline);
  return st;
}

}  // namespace ty::cli::internal
