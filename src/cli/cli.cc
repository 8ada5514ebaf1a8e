// RunCli: builds the CLI11 command tree, parses, and runs the selected command.
// Shared helpers of the command groups (commands.h) live here too.
#include "cli/cli.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <thread>

#include "cli/commands.h"
#include "cli/http_client.h"

namespace ty::cli {
namespace internal {

std::string Runtime::Endpoint() const {
  std::string e = flags.api_endpoint;
  if (e.empty()) e = getenv("TRAINYARD_API").value_or("");
  if (e.empty()) e = kDefaultEndpoint;
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

std::string Runtime::Project() const {
  if (!flags.project.empty()) return flags.project;
  std::string p = getenv("TRAINYARD_PROJECT").value_or("");
  return p.empty() ? kDefaultProject : p;
}

Result<std::string> AccessToken(const Runtime& rt) {
  std::string token;
  if (!rt.flags.access_token_file.empty()) {
    ASSIGN_OR_RETURN(token, ReadFile(rt.flags.access_token_file));
  } else {
    token = rt.getenv("TRAINYARD_TOKEN").value_or("");
  }
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front()))) {
    token.erase(0, 1);
  }
  if (token.find_first_of("\r\n") != std::string::npos) {
    return InvalidArgument("--access-token-file: the token must be one line");
  }
  return token;
}

std::string CaFile(const Runtime& rt) {
  if (!rt.flags.ca_file.empty()) return rt.flags.ca_file;
  return rt.getenv("TRAINYARD_CA_FILE").value_or("");
}

namespace {

StatusCode CodeForHttp(long status) {
  switch (status) {
    case 400:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 409:
      return StatusCode::kAlreadyExists;
    case 429:
      return StatusCode::kResourceExhausted;
    case 499:
      return StatusCode::kCancelled;
    case 501:
      return StatusCode::kUnimplemented;
    case 503:
      return StatusCode::kUnavailable;
    case 504:
      return StatusCode::kDeadlineExceeded;
    default:
      return status >= 500 ? StatusCode::kInternal : StatusCode::kUnknown;
  }
}

}  // namespace

Status ErrorOfAnswer(long http_status, const std::string& body) {
  return Status(CodeForHttp(http_status), ServerErrorMessage(http_status, body));
}

Result<nlohmann::json> CallApi(Runtime& rt, const std::string& method, const std::string& path,
                               const nlohmann::json* body, long* http_status) {
  if (http_status) *http_status = 0;
  Result<HttpResponse> response =
      rt.http->Send(method, rt.Endpoint() + path, body ? body->dump() : "");
  if (!response.ok()) return response.status();
  if (http_status) *http_status = response->status;
  if (response->status < 200 || response->status >= 300) {
    return Status(CodeForHttp(response->status),
                  ServerErrorMessage(response->status, response->body));
  }
  if (response->body.empty()) return nlohmann::json::object();
  nlohmann::json parsed =
      nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    return Internal("the server answered with invalid JSON: " + response->body.substr(0, 200));
  return parsed;
}

int ReportError(Runtime& rt, const std::string& command_path, const Status& status) {
  *rt.err << FormatCommandError(command_path, status.message());
  return 1;
}

Result<OutputFormat> ResolveFormat(const Runtime& rt, OutputFormat fallback) {
  if (rt.flags.format.empty()) return fallback;
  return ParseOutputFormat(rt.flags.format);
}

std::vector<std::string> NormalizeEmptyValues(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (const std::string& a : argv) {
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.back() == '=' && a.find('=') == a.size() - 1) {
      out.push_back(a.substr(0, a.size() - 1));
      out.emplace_back();
    } else {
      out.push_back(a);
    }
  }
  return out;
}

}  // namespace internal

namespace {

// "trainyard.ai.custom-jobs.create" from the subcommands CLI11 selected so far.
std::string SelectedPath(CLI::App& app) {
  std::string path = "trainyard";
  CLI::App* node = &app;
  while (true) {
    std::vector<CLI::App*> subs = node->get_subcommands();
    if (subs.empty()) break;
    node = subs.front();
    path += "." + node->get_name();
  }
  return path;
}

}  // namespace

namespace {

// Everything after a bare `--` is user args (ai-platform's USER_ARGS), never flags:
// they go to `*user_args`; the rest is returned.
std::vector<std::string> SplitUserArgs(const std::vector<std::string>& argv,
                                       std::vector<std::string>* user_args) {
  std::vector<std::string> args;
  bool saw_separator = false;
  for (const std::string& a : argv) {
    if (!saw_separator && a == "--") {
      saw_separator = true;
    } else if (saw_separator) {
      user_args->push_back(a);
    } else {
      args.push_back(a);
    }
  }
  return args;
}

// CLI11 lists only a command's own options in its help, but every command takes the
// global flags (`app.fallthrough()`): each command's help names them in a footer.
void ListGlobalFlagsInHelp(CLI::App& app) {
  std::string footer = "Global flags (any command, before or after it):";
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_name() == "--help") continue;
    footer += "\n  " + o->get_name() + " " + o->get_description();
  }
  std::function<void(CLI::App*)> add = [&](CLI::App* node) {
    for (CLI::App* sub : node->get_subcommands([](CLI::App*) { return true; })) {
      sub->footer(footer);
      add(sub);
    }
  };
  add(&app);
}

// Every command group under `app`; the returned states hold what the commands' flags
// write into, so they must live until the selected command has run.
std::vector<std::shared_ptr<void>> AddCommands(CLI::App& app, internal::Selection* selection) {
  CLI::App* ai = app.add_subcommand("ai", "Vertex AI style commands.");
  ai->require_subcommand(1);
  CLI::App* ai_platform = app.add_subcommand("ai-platform", "AI Platform Training style commands.");
  ai_platform->require_subcommand(1);
  std::vector<std::shared_ptr<void>> states = {
      internal::RegisterCustomJobs(*ai, selection),
      internal::RegisterMlJobs(*ai_platform, selection),
      internal::RegisterHpTuningJobs(*ai, selection),
      internal::RegisterConfig(app, selection),
      internal::RegisterImages(app, selection),
      internal::RegisterToken(app, selection),
      internal::RegisterBuckets(app, selection),
      internal::RegisterAdmin(app, selection),
  };
  ListGlobalFlagsInHelp(app);
  return states;
}

// Checks what applies to every command (stray arguments, --format, the token), then
// runs the selected one. `owned_http`: the real client, which sends the token.
int RunSelected(internal::Runtime& rt, const internal::Selection& selection,
                CurlHttpClient* owned_http) {
  if (!rt.user_args.empty() && !selection.accepts_user_args) {
    std::string extra;
    for (const auto& a : rt.user_args) extra += (extra.empty() ? "" : " ") + a;
    *rt.err << FormatCommandError(selection.command_path, "unrecognized arguments: " + extra);
    return 2;
  }
  if (!rt.flags.format.empty()) {
    Result<OutputFormat> f = ParseOutputFormat(rt.flags.format);
    if (!f.ok()) return internal::ReportError(rt, selection.command_path, f.status());
  }
  Result<std::string> token = internal::AccessToken(rt);
  if (!token.ok()) return internal::ReportError(rt, selection.command_path, token.status());
  if (owned_http != nullptr) {
    owned_http->SetBearerToken(*token);
    owned_http->SetCaFile(internal::CaFile(rt));
  }
  return selection.run(rt);
}

// The flags every command takes.
void AddGlobalFlags(CLI::App& app, internal::GlobalFlags& flags) {
  app.add_option("--format", flags.format, "Output format: yaml (default) or json.");
  app.add_option("--api-endpoint", flags.api_endpoint,
                 "Base URL of trainyardd (default: $TRAINYARD_API or http://127.0.0.1:8080).");
  app.add_option("--project", flags.project, "Project (default: $TRAINYARD_PROJECT or `local`).");
  app.add_option("--access-token-file", flags.access_token_file,
                 "File holding the access token to send (default: $TRAINYARD_TOKEN; none when "
                 "unset; a daemon with `tokens:` in its config needs one).");
  app.add_option("--ca-file", flags.ca_file,
                 "PEM CA certificates an https:// daemon's certificate must chain to (default: "
                 "$TRAINYARD_CA_FILE, else the system's).");
}

// The environment and sleep the commands use: the test's when given, else the process's.
void UseEnvironment(const CliEnvironment& env, internal::Runtime& rt) {
  rt.getenv = env.getenv ? env.getenv : [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  rt.sleep_ms = env.sleep_ms ? env.sleep_ms : [](int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  };
}

}  // namespace

int RunCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err,
           const CliEnvironment& env) {
  using internal::Runtime;
  Runtime rt;
  rt.out = &out;
  rt.err = &err;
  UseEnvironment(env, rt);
  std::unique_ptr<CurlHttpClient> owned_http;
  if (env.http) {
    rt.http = env.http;
  } else {
    owned_http = std::make_unique<CurlHttpClient>();
    rt.http = owned_http.get();
  }

  std::vector<std::string> args =
      internal::NormalizeEmptyValues(SplitUserArgs(argv, &rt.user_args));

  CLI::App app{
      "trainyard: command-line client of the Trainyard training service "
      "(gcloud ai custom-jobs / ai-platform jobs compatible)",
      "trainyard"};
  // Global flags may follow the subcommand (`trainyard ai custom-jobs list --format=json`).
  app.fallthrough();
  app.require_subcommand(1);
  AddGlobalFlags(app, rt.flags);

  internal::Selection selection;
  const std::vector<std::shared_ptr<void>> states = AddCommands(app, &selection);

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 pops from the back.
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << FormatCommandError(SelectedPath(app), e.what());
    err << "Run `trainyard --help` (or add --help to a command) for usage.\n";
    return 2;
  }
  if (!selection.run) {
    err << FormatCommandError(SelectedPath(app), "A command is required.");
    return 2;
  }
  return RunSelected(rt, selection, owned_http.get());
}

}  // namespace ty::cli
