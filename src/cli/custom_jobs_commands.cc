// `trainyard ai custom-jobs create|describe|list|cancel|stream-logs`
// (spec/gcloud-cli.md §4, §5, §8) against the Vertex v1 routes of the daemon.
#include <memory>

#include "cli/commands.h"
#include "cli/custom_job_request.h"
#include "cli/flag_values.h"
#include "cli/log_stream.h"
#include "format/yaml_json.h"

namespace ty::cli::internal {
namespace {

struct CustomJobsState {
  CustomJobFlags create;
  std::optional<std::string> config_path;
  std::string region;
  std::string job;  // Positional JOB: numeric id or full resource name.
  std::string filter;
  int64_t limit = -1;
  int64_t page_size = 0;
  std::string task_name;
  int polling_interval_s = 60;
  bool allow_multiline = false;
};

// "Using endpoint [URL/]": gcloud ai prints the regional endpoint on every command.
void PrintEndpoint(Runtime& rt) { *rt.err << "Using endpoint [" << rt.Endpoint() << "/]\n"; }

// JOB -> "projects/P/locations/R/customJobs/ID". A full name is taken as given.
Result<std::string> ResolveJobName(Runtime& rt, const CustomJobsState& st) {
  if (st.job.rfind("projects/", 0) == 0) return st.job;
  if (st.region.empty()) {
    return Status(InvalidArgument("argument --region: Must be specified when JOB is not a full "
                                  "resource name (projects/P/locations/R/customJobs/ID)."));
  }
  return "projects/" + rt.Project() + "/locations/" + st.region + "/customJobs/" + st.job;
}

Status RequireRegion(const CustomJobsState& st) {
  if (st.region.empty()) return InvalidArgument("argument --region: Must be specified.");
  return Status::Ok();
}

int Create(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  if (Status s = RequireRegion(st); !s.ok()) return ReportError(rt, path, s);
  if (st.config_path) {
    Result<nlohmann::json> config = format::ReadYamlOrJsonFile(*st.config_path);
    if (!config.ok()) return ReportError(rt, path, InvalidFlag("--config", config.status().message()));
    st.create.config = *config;
  }
  Result<nlohmann::json> body = BuildCustomJob(st.create);
  if (!body.ok()) return ReportError(rt, path, body.status());
  Result<nlohmann::json> created = CallApi(
      rt, "POST", "/v1/projects/" + rt.Project() + "/locations/" + st.region + "/customJobs", &*body);
  if (!created.ok()) return ReportError(rt, path, created.status());
  std::string name = created->value("name", std::string());
  *rt.err << "CustomJob [" << name << "] is submitted successfully.\n\n"
          << "Your job is still active. You may view the status of your job with the command\n\n"
          << "  $ trainyard ai custom-jobs describe " << name << "\n\n"
          << "or continue streaming the logs with the command\n\n"
          << "  $ trainyard ai custom-jobs stream-logs " << name << "\n";
  // gcloud prints no resource here; an explicit --format asks for it (handy in scripts).
  if (!rt.flags.format.empty()) {
    Result<OutputFormat> f = ResolveFormat(rt, OutputFormat::kYaml);
    *rt.out << FormatResource(*created, *f);
  }
  return 0;
}

int Describe(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  Result<std::string> name = ResolveJobName(rt, st);
  if (!name.ok()) return ReportError(rt, path, name.status());
  Result<nlohmann::json> job = CallApi(rt, "GET", "/v1/" + *name, nullptr);
  if (!job.ok()) return ReportError(rt, path, job.status());
  Result<OutputFormat> f = ResolveFormat(rt, OutputFormat::kYaml);
  *rt.out << FormatResource(*job, *f);
  return 0;
}

int List(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  if (Status s = RequireRegion(st); !s.ok()) return ReportError(rt, path, s);
  std::vector<nlohmann::json> jobs;
  std::string token;
  do {
    std::string query;
    if (!st.filter.empty()) query += "&filter=" + UrlEncode(st.filter);
    if (st.page_size > 0) query += "&pageSize=" + std::to_string(st.page_size);
    if (!token.empty()) query += "&pageToken=" + UrlEncode(token);
    if (!query.empty()) query[0] = '?';
    Result<nlohmann::json> page = CallApi(
        rt, "GET", "/v1/projects/" + rt.Project() + "/locations/" + st.region + "/customJobs" + query, nullptr);
    if (!page.ok()) return ReportError(rt, path, page.status());
    if (auto it = page->find("customJobs"); it != page->end() && it->is_array()) {
      for (const auto& j : *it) jobs.push_back(j);
    }
    token = page->value("nextPageToken", std::string());
  } while (!token.empty() && (st.limit < 0 || static_cast<int64_t>(jobs.size()) < st.limit));
  if (st.limit >= 0 && static_cast<int64_t>(jobs.size()) > st.limit) jobs.resize(st.limit);
  if (jobs.empty()) {
    *rt.err << "Listed 0 items.\n";
    return 0;
  }
  Result<OutputFormat> f = ResolveFormat(rt, OutputFormat::kYaml);
  *rt.out << FormatResourceList(jobs, *f);
  return 0;
}

int Cancel(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  Result<std::string> name = ResolveJobName(rt, st);
  if (!name.ok()) return ReportError(rt, path, name.status());
  nlohmann::json empty = nlohmann::json::object();
  Result<nlohmann::json> r = CallApi(rt, "POST", "/v1/" + *name + ":cancel", &empty);
  if (!r.ok()) return ReportError(rt, path, r.status());
  *rt.err << "Request to cancel CustomJob [" << *name << "] has been sent.\n\n"
          << "You may view the status of your job with the command\n\n"
          << "  $ trainyard ai custom-jobs describe " << *name << "\n";
  return 0;
}

int StreamLogs(Runtime& rt, CustomJobsState& st, const std::string& path) {
  PrintEndpoint(rt);
  Result<std::string> name = ResolveJobName(rt, st);
  if (!name.ok()) return ReportError(rt, path, name.status());
  LogFollowOptions options;
  options.job_url = rt.Endpoint() + "/v1/" + *name;
  options.logs_url = options.job_url + "/logs";
  options.task = st.task_name;
  options.dialect = LogDialect::kVertex;
  options.allow_multiline = st.allow_multiline;
  options.polling_interval_s = st.polling_interval_s;
  Result<nlohmann::json> job = FollowJobLogs(*rt.http, options, *rt.out, rt.sleep_ms);
  if (!job.ok()) return ReportError(rt, path, job.status());
  return 0;
}

CLI::App* AddCommand(CLI::App& group, const std::string& name, const std::string& help,
                     Selection* selection, std::shared_ptr<CustomJobsState> st,
                     int (*fn)(Runtime&, CustomJobsState&, const std::string&)) {
  CLI::App* cmd = group.add_subcommand(name, help);
  std::string path = "trainyard.ai.custom-jobs." + name;
  cmd->callback([selection, st, fn, path] {
    selection->command_path = path;
    selection->run = [st, fn, path](Runtime& rt) { return fn(rt, *st, path); };
  });
  return cmd;
}

}  // namespace

std::shared_ptr<void> RegisterCustomJobs(CLI::App& ai, Selection* selection) {
  auto st = std::make_shared<CustomJobsState>();
  CLI::App* group = ai.add_subcommand("custom-jobs", "Create and manage Vertex AI style custom jobs.");
  group->require_subcommand(1);

  CLI::App* create = AddCommand(*group, "create", "Create a new custom job.", selection, st, Create);
  create->add_option("--region", st->region, "Region (location) of the job.");
  create->add_option("--display-name", st->create.display_name, "Display name of the job.");
  create->add_option("--worker-pool-spec", st->create.worker_pool_specs,
                     "KEY=VALUE,... for one worker pool; repeat per pool; empty = placeholder pool.")
      ->allow_extra_args(false);
  create->add_option_function<std::string>(
      "--config", [st](const std::string& v) { st->config_path = v; }, "YAML/JSON CustomJobSpec file.");
  create->add_option("--args", st->create.args, "Comma-separated args for every pool; repeat to append.")
      ->allow_extra_args(false);
  create->add_option_function<std::string>(
      "--command", [st](const std::string& v) { st->create.command = v; }, "Comma-separated command.");
  create->add_option_function<std::string>(
      "--python-package-uris", [st](const std::string& v) { st->create.python_package_uris = v; },
      "Comma-separated package URIs for every python package pool.");
  create->add_option_function<std::string>(
      "--labels", [st](const std::string& v) { st->create.labels = v; }, "KEY=VALUE,... labels.");
  create->add_option_function<std::string>(
      "--service-account", [st](const std::string& v) { st->create.service_account = v; });
  create->add_option_function<std::string>("--network", [st](const std::string& v) { st->create.network = v; });
  create->add_option_function<std::string>(
      "--persistent-resource-id", [st](const std::string& v) { st->create.persistent_resource_id = v; });
  create->add_flag("--enable-web-access", st->create.enable_web_access);
  create->add_flag("--enable-dashboard-access", st->create.enable_dashboard_access);

  CLI::App* describe = AddCommand(*group, "describe", "Describe a custom job.", selection, st, Describe);
  describe->add_option("JOB", st->job, "Numeric id or full resource name.")->required();
  describe->add_option("--region", st->region);

  CLI::App* list = AddCommand(*group, "list", "List custom jobs.", selection, st, List);
  list->add_option("--region", st->region);
  list->add_option("--filter", st->filter, "Filter expression, evaluated by the server.");
  list->add_option("--limit", st->limit, "Maximum number of jobs to list.");
  list->add_option("--page-size", st->page_size, "Jobs per page requested from the server.");

  CLI::App* cancel = AddCommand(*group, "cancel", "Cancel a running custom job.", selection, st, Cancel);
  cancel->add_option("JOB", st->job)->required();
  cancel->add_option("--region", st->region);

  CLI::App* logs = AddCommand(*group, "stream-logs", "Stream the logs of a custom job.", selection, st, StreamLogs);
  logs->add_option("JOB", st->job)->required();
  logs->add_option("--region", st->region);
  logs->add_option("--task-name", st->task_name, "Only this task's logs (e.g. workerpool0-0).");
  logs->add_option("--polling-interval", st->polling_interval_s, "Seconds between reconnect attempts (max).");
  logs->add_flag("--allow-multiline-logs", st->allow_multiline);
  return st;
}

}  // namespace ty::cli::internal
