// Internal to the CLI: the job command flows both dialects share (describe, list,
// cancel, stream-logs, and the hint after a submit), parametrised by what differs:
// the route of a job or of the job collection, and the log dialect.
// `job_path` is always the route of one job, "/v1/<resource name>".
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "common/status.h"

namespace ty::cli::internal {

// Flags of the commands that name or list existing jobs.
struct JobQueryFlags {
  std::string job;  // Positional JOB: an id or a full resource name.
  std::string filter;
  int64_t limit = -1;
  int64_t page_size = 0;
  std::string task_name;
  int polling_interval_s = 60;
  bool allow_multiline = false;
};

// Adds subcommand `name` to `parent`; when it is selected, `fn(rt, *state,
// command_path)` becomes the action. `accepts_user_args`: args after `--` allowed.
template <typename State>
CLI::App* AddJobCommand(CLI::App& parent, const std::string& name, const std::string& help,
                        const std::string& command_path, Selection* selection,
                        std::shared_ptr<State> state,
                        int (*fn)(Runtime&, State&, const std::string&),
                        bool accepts_user_args = false) {
  CLI::App* cmd = parent.add_subcommand(name, help);
  cmd->callback([selection, state, fn, command_path, accepts_user_args] {
    selection->command_path = command_path;
    selection->run = [state, fn, command_path](Runtime& rt) {
      return fn(rt, *state, command_path);
    };
    selection->accepts_user_args = accepts_user_args;
  });
  return cmd;
}

// GETs the job and prints it (YAML unless --format says otherwise).
int DescribeJob(Runtime& rt, const std::string& command_path, const std::string& job_path);

// GETs `collection_path` page by page (the jobs under `items_key` of each page),
// with the filter and page size of `flags`, until `flags.limit` jobs or the last
// page, and prints them: "Listed 0 items." on stderr when there are none, else
// `default_table(jobs)` when there is one and no --format, else a YAML/JSON list.
int ListJobs(Runtime& rt, const std::string& command_path, const std::string& collection_path,
             const std::string& items_key, const JobQueryFlags& flags,
             std::string (*default_table)(const std::vector<nlohmann::json>&) = nullptr);

// POSTs `<job_path>:cancel`.
Status CancelJob(Runtime& rt, const std::string& job_path);

// Writes the job's log lines (of `task` only, unless "") to `out` until the job
// ends, reconnecting as needed; returns the final job.
Result<nlohmann::json> FollowJob(Runtime& rt, const std::string& job_path, LogDialect dialect,
                                 const std::string& task, int polling_interval_s,
                                 bool allow_multiline, std::ostream& out);

// The stream-logs command: FollowJob() with `flags` to stdout; 0, or the error reported.
int StreamJobLogs(Runtime& rt, const std::string& command_path, const std::string& job_path,
                  LogDialect dialect, const JobQueryFlags& flags);

// gcloud's "Your job is still active..." hint on stderr; `group_command` is the
// command group that has describe and stream-logs, e.g. "trainyard ai custom-jobs".
void PrintStillActiveHint(Runtime& rt, const std::string& group_command, const std::string& job);

// gcloud prints no resource after a create; an explicit --format asks for it (handy
// in scripts).
void PrintCreatedIfAsked(Runtime& rt, const nlohmann::json& created);

// --- Vertex collections (`collection`: "customJobs", "hyperparameterTuningJobs").

// "Using endpoint [URL/]": gcloud ai prints the regional endpoint on every command.
void PrintVertexEndpoint(Runtime& rt);
Status RequireRegion(const std::string& region);
// "/v1/projects/P/locations/R/<collection>".
std::string VertexCollectionPath(Runtime& rt, const std::string& region,
                                 const std::string& collection);
// JOB -> "projects/P/locations/R/<collection>/ID"; a full name is taken as given.
Result<std::string> VertexJobName(Runtime& rt, const std::string& job, const std::string& region,
                                  const std::string& collection);

}  // namespace ty::cli::internal
