// `trainyard buckets assign BUCKET PROJECT`: an admin gives a bucket of no project (an
// admin's buckets.insert without a project, a directory found on disk, a bucket older
// than the daemon's owners file) to a project, whose tokens and jobs may then use it.
// It is Cloud Storage's buckets.patch with `?project=` (admins only; gcs/object_store.h).
#include <memory>
#include <string>

#include "cli/commands.h"
#include "model/resource_ids.h"

namespace ty::cli::internal {
namespace {

constexpr char kAssignCommand[] = "trainyard.buckets.assign";

struct BucketsState {
  std::string bucket;
  std::string project;
};

int RunAssign(Runtime& rt, const BucketsState& st) {
  if (Status valid = model::CheckProjectId(st.project); !valid.ok()) {
    return ReportError(rt, kAssignCommand, InvalidArgument("argument PROJECT: " + valid.message()));
  }
  const nlohmann::json body = nlohmann::json::object();
  Result<nlohmann::json> done =
      CallApi(rt, "PATCH", "/storage/v1/b/" + st.bucket + "?project=" + st.project, &body);
  if (!done.ok()) return ReportError(rt, kAssignCommand, done.status());
  *rt.out << "Bucket " << st.bucket << " now belongs to project " << st.project << ".\n";
  return 0;
}

}  // namespace

std::shared_ptr<void> RegisterBuckets(CLI::App& app, Selection* selection) {
  auto st = std::make_shared<BucketsState>();
  CLI::App* buckets = app.add_subcommand("buckets", "Who owns the daemon's buckets.");
  buckets->require_subcommand(1);
  CLI::App* assign = buckets->add_subcommand(
      "assign", "Give a bucket to a project (admins only): its editors and jobs may then use it.");
  assign->add_option("BUCKET", st->bucket, "The bucket's name (no gs://).")->required();
  assign->add_option("PROJECT", st->project, "The project that owns it from now on.")->required();
  assign->callback([st, selection] {
    selection->command_path = kAssignCommand;
    selection->run = [st](Runtime& rt) { return RunAssign(rt, *st); };
  });
  return st;
}

}  // namespace ty::cli::internal
