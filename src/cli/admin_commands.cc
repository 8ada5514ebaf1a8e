// `trainyard admin backup FILE`: a consistent copy of the daemon's job store, taken
// while jobs run (GET /admin/backup; admins only), written to FILE (0600: it holds the
// jobs' environments). docs/operations.md "Backup and restore" says how to put it back.
#include <memory>
#include <string>

#include "cli/commands.h"
#include "common/files.h"

namespace ty::cli::internal {
namespace {

constexpr char kBackupCommand[] = "trainyard.admin.backup";

struct AdminState {
  std::string file;
};

int RunBackup(Runtime& rt, const AdminState& st) {
  Result<HttpResponse> r = rt.http->Send("GET", rt.Endpoint() + "/admin/backup", "");
  if (!r.ok()) return ReportError(rt, kBackupCommand, r.status());
  if (r->status != 200) {
    return ReportError(rt, kBackupCommand, ErrorOfAnswer(r->status, r->body));
  }
  // SQLite's own header: never write an error page where a store is expected.
  if (r->body.rfind("SQLite format 3", 0) != 0) {
    return ReportError(rt, kBackupCommand, Internal("the daemon's answer is not a database"));
  }
  if (Status s = WritePrivateFile(st.file, r->body); !s.ok()) {
    return ReportError(rt, kBackupCommand, s);
  }
  *rt.out << "Backed up the job store to " << st.file << " (" << r->body.size() << " bytes).\n";
  return 0;
}

}  // namespace

std::shared_ptr<void> RegisterAdmin(CLI::App& app, Selection* selection) {
  auto st = std::make_shared<AdminState>();
  CLI::App* admin = app.add_subcommand("admin", "Looking after the daemon (admins only).");
  admin->require_subcommand(1);
  CLI::App* backup = admin->add_subcommand(
      "backup",
      "Copy the job store while jobs run (restore: docs/operations.md, Backup and restore).");
  backup->add_option("FILE", st->file, "Where the copy goes (a new SQLite file, mode 0600).")
      ->required();
  backup->callback([st, selection] {
    selection->command_path = kBackupCommand;
    selection->run = [st](Runtime& rt) { return RunBackup(rt, *st); };
  });
  return st;
}

}  // namespace ty::cli::internal
