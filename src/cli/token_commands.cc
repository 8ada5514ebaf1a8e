// `trainyard token create`: a new access token for trainyardd's `tokens:` config, and
// the entry to paste there (its SHA-256, never the token: auth/tokens.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "auth/tokens.h"
#include "cli/commands.h"

namespace ty::cli::internal {
namespace {

struct TokenState {
  std::string name;
  std::string role = "editor";
  std::vector<std::string> projects;
  std::string output_file;
};

constexpr char kTokenCommand[] = "trainyard.token.create";

// The token alone, to a file only its owner may read (created, never overwritten).
Status WriteTokenFile(const std::string& path, const std::string& token) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return InvalidArgument("--output-file " + path + ": " + std::strerror(errno));
  const std::string line = token + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (::close(fd) != 0 || !ok) return Internal("cannot write " + path);
  return Status::Ok();
}

int RunTokenCreate(Runtime& rt, const TokenState& st) {
  if (!auth::RoleNamed(st.role)) {
    return ReportError(rt, kTokenCommand,
                       InvalidArgument("argument --role: must be viewer, editor or admin"));
  }
  if (st.projects.empty()) {
    return ReportError(rt, kTokenCommand,
                       InvalidArgument("argument --project-access: name a project, or \"*\""));
  }
  const std::string token = auth::NewToken();
  if (token.empty()) return ReportError(rt, kTokenCommand, Internal("no random bytes for a token"));
  if (!st.output_file.empty()) {
    if (Status s = WriteTokenFile(st.output_file, token); !s.ok()) {
      return ReportError(rt, kTokenCommand, s);
    }
    *rt.out << "Token written to " << st.output_file << " (mode 0600).\n";
  } else {
    *rt.out << "Token (shown once, keep it secret): " << token << "\n";
  }
  *rt.out << "Add to trainyardd's config under `tokens:` and restart it:\n"
          << "  - name: " << st.name << "\n"
          << "    sha256: " << auth::Sha256Hex(token) << "\n"
          << "    role: " << st.role << "\n"
          << "    projects: [";
  for (size_t i = 0; i < st.projects.size(); ++i) {
    *rt.out << (i ? ", " : "") << "\"" << st.projects[i] << "\"";
  }
  *rt.out << "]\n";
  return 0;
}

}  // namespace

std::shared_ptr<void> RegisterToken(CLI::App& app, Selection* selection) {
  auto st = std::make_shared<TokenState>();
  CLI::App* token = app.add_subcommand("token", "Access tokens for trainyardd.");
  token->require_subcommand(1);
  CLI::App* create = token->add_subcommand(
      "create", "Make a new random access token and print the config entry that grants it.");
  create->add_option("--name", st->name, "Who holds it (shown in logs and 403 messages).")
      ->required();
  create->add_option("--role", st->role, "viewer, editor (default) or admin.");
  create
      ->add_option("--project-access", st->projects,
                   "A project it may use (repeat for more; \"*\" = every project).")
      ->required();
  create->add_option("--output-file", st->output_file,
                     "Write the token to this new file (mode 0600) instead of printing it.");
  create->callback([st, selection] {
    selection->command_path = kTokenCommand;
    selection->run = [st](Runtime& rt) { return RunTokenCreate(rt, *st); };
  });
  return st;
}

}  // namespace ty::cli::internal
