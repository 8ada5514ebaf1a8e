#include "model/work_memory.h"

#include <algorithm>

namespace ty::model {
namespace {

// A string's heap and its slot in a container.
size_t StringBytes(const std::string& s) { return sizeof(std::string) + s.size(); }

size_t ListBytes(const std::vector<std::string>& list) {
  size_t n = 0;
  for (const std::string& s : list) n += StringBytes(s);
  return n;
}

size_t EnvBytes(const std::vector<EnvVar>& env) {
  size_t n = 0;
  for (const EnvVar& v : env) n += StringBytes(v.name) + StringBytes(v.value);
  return n;
}

// The most one parameter's value (and its map node and name) takes in a trial, and
// its children's, which a trial may hold too.
size_t ParamBytes(const ParamSpec& p) {
  size_t longest = sizeof(double);
  for (const std::string& c : p.categories) longest = std::max(longest, c.size());
  size_t n = 96 + p.name.size() + longest;  // Map node, name, value.
  for (const ConditionalChild& c : p.children) n += ParamBytes(c.spec);
  return n;
}

int64_t ReplicasPerAttempt(const JobSpec& spec) {
  int64_t n = 0;
  for (const WorkerPool& p : spec.pools) n += p.replica_count;
  return n;
}

}  // namespace

size_t ApproxPoolsBytes(const JobSpec& spec) {
  size_t n = 0;
  for (const WorkerPool& p : spec.pools) {
    n += sizeof(WorkerPool);
    if (p.container) {
      n += StringBytes(p.container->image_uri) + ListBytes(p.container->command) +
           ListBytes(p.container->args) + EnvBytes(p.container->env);
    }
    if (p.python_package) {
      const PythonPackageSpec& pkg = *p.python_package;
      n += StringBytes(pkg.executor_image_uri) + ListBytes(pkg.package_uris) +
           StringBytes(pkg.python_module) + ListBytes(pkg.args) + EnvBytes(pkg.env);
    }
  }
  return n;
}

size_t ApproxTrialBytes(const StudySpec& spec) {
  size_t n = sizeof(Trial) + 64;  // Its job uid, state, times.
  for (const ParamSpec& p : spec.params) n += ParamBytes(p);
  return n;
}

size_t WorkBytes(const Job& job) {
  if (job.kind == JobKind::kTrial) return 0;  // Its study's figure holds it.
  const size_t record = ApproxRecordBytes(job);
  if (!job.spec.study) return kLiveRecordCopies * record;
  const StudySpec& study = *job.spec.study;
  const size_t trial = ApproxTrialBytes(study);
  const size_t trials_to_come =
      static_cast<size_t>(std::max<int64_t>(0, study.max_trials - job.trials.size()));
  // A trial job: its record holds the trial spec twice (the spec and its stored
  // record), the parameters as arguments, and its replicas.
  const size_t trial_job = sizeof(Job) + 1024 + 2 * (ApproxPoolsBytes(job.spec) + trial) +
                           512 * static_cast<size_t>(ReplicasPerAttempt(job.spec));
  return kLiveRecordCopies *
         (record + trials_to_come * trial + static_cast<size_t>(study.parallel_trials) * trial_job);
}

}  // namespace ty::model
