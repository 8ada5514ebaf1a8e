// `trainyard images list|build`: the prebuilt training runtimes (images/runtimes.h)
// and the command that builds them from Debian packages on this machine. Building is
// scripts/build-sample-image's (mmdebstrap + podman import, cached by a hash of its
// inputs), which the quickstart and the tests use too: one way to make the images.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/subprocess.h"
#include "images/runtimes.h"

namespace ty::cli::internal {
namespace {

constexpr char kBuildCommand[] = "trainyard.images.build";

struct ImagesState {
  std::vector<std::string> names;
  bool force = false;
};

// scripts/ of this checkout: $TRAINYARD_SCRIPTS, else the source tree it was built from.
std::string ScriptsDir(Runtime& rt) {
  if (auto dir = rt.getenv("TRAINYARD_SCRIPTS"); dir && !dir->empty()) return *dir;
  return std::string(TRAINYARD_SOURCE_DIR) + "/scripts";
}

// The runtimes named (every one when none is), or an error naming what there is.
Result<std::vector<std::string>> RuntimeNames(const std::vector<std::string>& asked) {
  std::vector<std::string> out;
  for (const std::string& name : asked) {
    const images::Runtime* r = images::FindRuntime(name);
    if (r == nullptr) {
      std::string known;
      for (const images::Runtime& k : images::Runtimes()) known += " " + std::string(k.name);
      const bool tf = name.rfind("tf", 0) == 0 || name.rfind("tensorflow", 0) == 0;
      return InvalidArgument("no runtime \"" + name + "\"" +
                             (tf ? " (Debian packages no TensorFlow)" : "") +
                             "; runtimes:" + known);
    }
    out.emplace_back(r->name);
  }
  if (asked.empty()) {
    for (const images::Runtime& r : images::Runtimes()) out.emplace_back(r.name);
  }
  return out;
}

int RunBuild(Runtime& rt, const ImagesState& st) {
  Result<std::vector<std::string>> names = RuntimeNames(st.names);
  if (!names.ok()) return ReportError(rt, kBuildCommand, names.status());
  const std::string script = ScriptsDir(rt) + "/build-sample-image";
  if (::access(script.c_str(), X_OK) != 0) {
    return ReportError(rt, kBuildCommand,
                       NotFound(script + " is missing; set TRAINYARD_SCRIPTS to the scripts/ "
                                         "directory of a Trainyard checkout"));
  }
  std::vector<std::string> args = {script};
  if (st.force) args.push_back("--force");
  args.insert(args.end(), names->begin(), names->end());
  rt.out->flush();
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0) {
    return ReportError(rt, kBuildCommand, Internal("cannot run " + script));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// Whether the engine here holds the runtime's image, and its size: what a job on it
// needs (one that is not built fails at launch saying so).
std::string BuiltState(const images::Runtime& runtime) {
  CommandOptions options;
  options.timeout = 15 * 1000000;
  Result<CommandOutput> inspected = RunCommand(
      {"podman", "image", "inspect", "--format", "{{.Size}}", std::string(runtime.local_image)},
      options);
  const std::string build = "not built (trainyard images build " + std::string(runtime.name) + ")";
  if (!inspected.ok() || inspected->exit_code != 0) return build;
  uint64_t bytes = 0;
  for (char c : inspected->out) {
    if (c < '0' || c > '9') break;
    bytes = bytes * 10 + static_cast<uint64_t>(c - '0');
  }
  return "built, " + std::to_string((bytes + 500000) / 1000000) + " MB";
}

// The Python package installs the daemon keeps (images::kPackageImageRepo), newest
// first: what a job with the same executor image and packages starts from without pip.
std::string InstalledPackages() {
  CommandOptions options;
  options.timeout = 15 * 1000000;
  Result<CommandOutput> listed = RunCommand(
      {"podman", "image", "ls", "--filter", std::string("reference=") + images::kPackageImageRepo,
       "--format", "{{.Repository}}:{{.Tag}}\t{{.Size}}\t{{.CreatedSince}}"},
      options);
  std::string out =
      "\nPython package installs kept (reused by jobs with the same executor image "
      "and packages; at most " +
      std::to_string(images::kPackageInstallsKept) + ", oldest removed first):\n";
  if (!listed.ok() || listed->exit_code != 0) return out + "  (podman cannot list them here)\n";
  if (listed->out.empty()) return out + "  none\n";
  std::string lines;
  for (size_t at = 0; at < listed->out.size();) {
    const size_t end = std::min(listed->out.find('\n', at), listed->out.size());
    lines += "  " + listed->out.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return out + lines;
}

}  // namespace

std::shared_ptr<void> RegisterImages(CLI::App& app, Selection* selection) {
  auto st = std::make_shared<ImagesState>();
  CLI::App* images = app.add_subcommand(
      "images", "The prebuilt training runtimes (scikit-learn, XGBoost, PyTorch) of this machine.");
  images->require_subcommand(1);
  CLI::App* list = images->add_subcommand(
      "list",
      "The runtimes, whether each is built here (and its size), what they hold and the image "
      "names that run on them; then the Python package installs kept for reuse.");
  list->callback([selection] {
    selection->command_path = "trainyard.images.list";
    selection->run = [](Runtime& rt) {
      *rt.out << images::DescribeRuntimes(BuiltState) << InstalledPackages();
      return 0;
    };
  });
  CLI::App* build = images->add_subcommand(
      "build",
      "Build runtimes from Debian packages (mmdebstrap; cached) and tag them with the Vertex "
      "and Deep Learning Containers names they stand for. All of them without NAME.");
  build->add_option("NAME", st->names, "scikit-learn (or sklearn, xgboost), pytorch");
  build->add_flag("--force", st->force, "Rebuild even when up to date.");
  build->callback([st, selection] {
    selection->command_path = kBuildCommand;
    selection->run = [st](Runtime& rt) { return RunBuild(rt, *st); };
  });
  return st;
}

}  // namespace ty::cli::internal
