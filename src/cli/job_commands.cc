#include "cli/job_commands.h"

#include "cli/http_client.h"
#include "cli/log_follow.h"

namespace ty::cli::internal {

int DescribeJob(Runtime& rt, const std::string& command_path, const std::string& job_path) {
  Result<nlohmann::json> job = CallApi(rt, "GET", job_path, nullptr);
  if (!job.ok()) return ReportError(rt, command_path, job.status());
  Result<OutputFormat> f = ResolveFormat(rt, OutputFormat::kYaml);
  *rt.out << FormatResource(*job, *f);
  // The human (YAML) view adds a second document: every replica with its state,
  // exit code and restarts, the phase times and the job's events (`/details`).
  // JSON stays the bare resource, as gcloud prints it, for scripts.
  if (*f == OutputFormat::kYaml) {
    Result<nlohmann::json> details = CallApi(rt, "GET", job_path + "/details", nullptr);
    if (details.ok()) *rt.out << "---\n" << FormatResource(*details, OutputFormat::kYaml);
    *rt.out << FormatTrialsTable(*job);
  }
  return 0;
}

int ListJobs(Runtime& rt, const std::string& command_path, const std::string& collection_path,
             const std::string& items_key, const JobQueryFlags& flags,
             std::string (*default_table)(const std::vector<nlohmann::json>&)) {
  std::vector<nlohmann::json> jobs;
  std::string token;
  do {
    std::string query;
    if (!flags.filter.empty()) query += "&filter=" + UrlEncode(flags.filter);
    if (flags.page_size > 0) query += "&pageSize=" + std::to_string(flags.page_size);
    if (!token.empty()) query += "&pageToken=" + UrlEncode(token);
    if (!query.empty()) query[0] = '?';
    Result<nlohmann::json> page = CallApi(rt, "GET", collection_path + query, nullptr);
    if (!page.ok()) return ReportError(rt, command_path, page.status());
    if (auto it = page->find(items_key); it != page->end() && it->is_array()) {
      for (const auto& j : *it) jobs.push_back(j);
    }
    token = page->value("nextPageToken", std::string());
  } while (!token.empty() && (flags.limit < 0 || static_cast<int64_t>(jobs.size()) < flags.limit));
  if (flags.limit >= 0 && static_cast<int64_t>(jobs.size()) > flags.limit) jobs.resize(flags.limit);
  if (jobs.empty()) {
    *rt.err << "Listed 0 items.\n";
    return 0;
  }
  if (default_table != nullptr && rt.flags.format.empty()) {
    *rt.out << default_table(jobs);
  } else {
    Result<OutputFormat> f = ResolveFormat(rt, OutputFormat::kYaml);
    *rt.out << FormatResourceList(jobs, *f);
  }
  return 0;
}

Status CancelJob(Runtime& rt, const std::string& job_path) {
  nlohmann::json empty = nlohmann::json::object();
  Result<nlohmann::json> r = CallApi(rt, "POST", job_path + ":cancel", &empty);
  return r.status();
}

Result<nlohmann::json> FollowJob(Runtime& rt, const std::string& job_path, LogDialect dialect,
                                 const std::string& task, int polling_interval_s,
                                 bool allow_multiline, std::ostream& out) {
  LogFollowOptions options;
  options.job_url = rt.Endpoint() + job_path;
  options.logs_url = options.job_url + "/logs";
  options.task = task;
  options.dialect = dialect;
  options.allow_multiline = allow_multiline;
  options.polling_interval_s = polling_interval_s;
  return FollowJobLogs(*rt.http, options, out, rt.sleep_ms);
}

int StreamJobLogs(Runtime& rt, const std::string& command_path, const std::string& job_path,
                  LogDialect dialect, const JobQueryFlags& flags) {
  Result<nlohmann::json> job = FollowJob(rt, job_path, dialect, flags.task_name,
                                         flags.polling_interval_s, flags.allow_multiline, *rt.out);
  if (!job.ok()) return ReportError(rt, command_path, job.status());
  return 0;
}

void PrintStillActiveHint(Runtime& rt, const std::string& group_command, const std::string& job) {
  *rt.err << "Your job is still active. You may view the status of your job with the command\n\n"
          << "  $ " << group_command << " describe " << job << "\n\n"
          << "or continue streaming the logs with the command\n\n"
          << "  $ " << group_command << " stream-logs " << job << "\n";
}

void PrintCreatedIfAsked(Runtime& rt, const nlohmann::json& created) {
  if (rt.flags.format.empty()) return;
  Result<OutputFormat> f = ResolveFormat(rt, OutputFormat::kYaml);
  if (f.ok()) *rt.out << FormatResource(created, *f);
}

void PrintVertexEndpoint(Runtime& rt) { *rt.err << "Using endpoint [" << rt.Endpoint() << "/]\n"; }

Status RequireRegion(const std::string& region) {
  if (region.empty()) return InvalidArgument("argument --region: Must be specified.");
  return Status::Ok();
}

std::string VertexCollectionPath(Runtime& rt, const std::string& region,
                                 const std::string& collection) {
  return "/v1/projects/" + rt.Project() + "/locations/" + region + "/" + collection;
}

Result<std::string> VertexJobName(Runtime& rt, const std::string& job, const std::string& region,
                                  const std::string& collection) {
  if (job.rfind("projects/", 0) == 0) return job;
  if (region.empty()) {
    return Status(
        InvalidArgument("argument --region: Must be specified when JOB is not a full resource name "
                        "(projects/P/locations/R/" +
                        collection + "/ID)."));
  }
  return VertexCollectionPath(rt, region, collection).substr(4) + "/" + job;
}

}  // namespace ty::cli::internal
