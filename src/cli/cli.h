// Entry point of the `trainyard` command-line client: gcloud-shaped commands
// (`ai custom-jobs ...`, `ai-platform jobs ...`) that talk HTTP to trainyardd's REST
// API only (docs/design.md §7). Kept out of main() so tests can run whole commands with
// captured streams and a scripted HttpClient.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace ty::cli {

class HttpClient;

// What a run needs from the outside world; defaults are the real process's.
struct CliEnvironment {
  HttpClient* http = nullptr;  // Not owned; null = a CurlHttpClient per run.
  // Environment lookup (TRAINYARD_API, TRAINYARD_PROJECT); null = ::getenv.
  std::function<std::optional<std::string>(const std::string&)> getenv;
  // Waits between log-stream reconnects; null = std::this_thread::sleep_for.
  std::function<void(int millis)> sleep_ms;
};

// Runs one command. `argv` excludes the program name. Output a script would parse
// (resources, log lines of stream-logs) goes to `out`; status messages, submitted
// hints and errors go to `err`, as gcloud does. Returns the process exit code:
// 0 success, 1 command/server error (or a streamed job that did not succeed),
// 2 unusable command line.
int RunCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err,
           const CliEnvironment& env = {});

}  // namespace ty::cli
