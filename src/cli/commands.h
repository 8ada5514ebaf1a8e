// Internal to the CLI: what the command groups share. Each group registers its
// subcommands on a CLI11 node and, when one of them is selected, leaves the action to
// run in `Selection`; RunCli (cli.cc) runs it after parsing. Single-threaded.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/http_client.h"
#include "cli/output.h"
#include "common/status.h"

namespace ty::cli::internal {

constexpr char kDefaultEndpoint[] = "http://127.0.0.1:8080";
constexpr char kDefaultProject[] = "local";

struct GlobalFlags {
  std::string format;             // "" = the command's default.
  std::string api_endpoint;       // "" = TRAINYARD_API, else kDefaultEndpoint.
  std::string project;            // "" = TRAINYARD_PROJECT, else kDefaultProject.
  std::string access_token_file;  // "" = TRAINYARD_TOKEN, else no token.
  std::string ca_file;            // "" = TRAINYARD_CA_FILE, else the system's CAs.
};

// Everything a selected command needs to run.
struct Runtime {
  HttpClient* http = nullptr;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  std::function<std::optional<std::string>(const std::string&)> getenv;
  std::function<void(int)> sleep_ms;
  GlobalFlags flags;
  std::vector<std::string> user_args;  // After a bare `--`.

  std::string Endpoint() const;  // Without a trailing '/'.
  std::string Project() const;
};

// The CA file for https:// daemons: --ca-file, else $TRAINYARD_CA_FILE, else "".
std::string CaFile(const Runtime& rt);
// The token to send: --access-token-file's first line, else $TRAINYARD_TOKEN, else "".
Result<std::string> AccessToken(const Runtime& rt);

struct Selection {
  std::string command_path;  // "trainyard.ai.custom-jobs.create", for error lines.
  std::function<int(Runtime&)> run;
  bool accepts_user_args = false;
};

// Registers `custom-jobs` under `ai` and `jobs` under `ai-platform`. The returned
// holders own the flag storage and must outlive parsing and running.
std::shared_ptr<void> RegisterCustomJobs(CLI::App& ai, Selection* selection);
std::shared_ptr<void> RegisterMlJobs(CLI::App& ai_platform, Selection* selection);
// Registers `hp-tuning-jobs` under `ai`.
std::shared_ptr<void> RegisterHpTuningJobs(CLI::App& ai, Selection* selection);
// Registers `config gcloud` on the top-level app.
// Registers `images list|build` (the prebuilt runtimes).
std::shared_ptr<void> RegisterImages(CLI::App& app, Selection* selection);
std::shared_ptr<void> RegisterConfig(CLI::App& app, Selection* selection);
// Registers `buckets assign` (an admin gives a bucket to a project).
std::shared_ptr<void> RegisterBuckets(CLI::App& app, Selection* selection);
std::shared_ptr<void> RegisterAdmin(CLI::App& app, Selection* selection);
// Registers `token create` on the top-level app.
std::shared_ptr<void> RegisterToken(CLI::App& app, Selection* selection);

// The error a non-2xx answer of the daemon stands for, with its message.
Status ErrorOfAnswer(long http_status, const std::string& body);

// method + path ("/v1/...") against the endpoint; the parsed JSON body on 2xx.
// Transport errors -> Unavailable; HTTP errors -> the server's error.message with a
// code from the HTTP status. `http_status` (optional) receives the status, 0 when the
// server was not reached, for messages that depend on it (409 on ml create).
Result<nlohmann::json> CallApi(Runtime& rt, const std::string& method, const std::string& path,
                               const nlohmann::json* body, long* http_status = nullptr);

// Prints "ERROR: (path) message" and returns 1.
int ReportError(Runtime& rt, const std::string& command_path, const Status& status);

// --format for this command, `fallback` when not given; InvalidArgument if unknown.
Result<OutputFormat> ResolveFormat(const Runtime& rt, OutputFormat fallback);

// CLI11 cannot take `--flag=` (empty value); such a token becomes `--flag` + "".
std::vector<std::string> NormalizeEmptyValues(const std::vector<std::string>& argv);

}  // namespace ty::cli::internal
