// ty-slurm-launch: what each Slurm task of a Trainyard job runs (issue 21).
//
//   ty-slurm-launch --context DIR   runs this task's replica (executor/slurm/slurm_context.h)
//   ty-slurm-launch --print-topology  prints this task's placement as one JSON line
//
// It works out its replica's pool, index, port and every peer's address from its own
// Slurm environment (executor/slurm/slurm_topology.h), with no rendezvous; puts those
// addresses into the environment the service computed; runs the replica's container
// with podman on this host (host network: it listens on its reserved port), its output
// appended to DIR/<replica>.out and .err; writes the container's exit code to
// DIR/<replica>.exit; and exits with it (after a failure it first waits for a restart
// request, executor.h). The epilog removes the container once the task is gone. On SIGTERM
// (scancel, a time limit) it stops the container itself, with the job's grace period: the podman
// client Slurm would signal does not stop a container (measured with podman 4.3). The epilog
// (scripts/ty-slurm-epilog) removes what a launcher killed with SIGKILL left.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/files.h"
#include "common/subprocess.h"
#include "executor/slurm/slurm_context.h"
#include "executor/slurm/slurm_topology.h"

namespace {

using ty::executor::ReplicaLaunch;
using ty::executor::SlurmContext;

std::optional<std::string> GetEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "ty-slurm-launch: %s\n", message.c_str());
  return 2;
}

int PrintTopology() {
  ty::Result<ty::executor::SlurmTopology> topology = ty::executor::TopologyFromSlurmEnv(&GetEnv);
  if (!topology.ok()) return Fail(topology.status().message());
  nlohmann::json out = {{"pool", topology->pool},
                        {"index", topology->index},
                        {"port", topology->port},
                        {"cluster", topology->addresses}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

// The host GPUs Slurm gave this task (CUDA_VISIBLE_DEVICES="0,2"), for a replica
// that asks for accelerators.
std::vector<int> TaskGpus(const ReplicaLaunch& r) {
  std::vector<int> out;
  std::optional<std::string> visible = GetEnv("CUDA_VISIBLE_DEVICES");
  if (r.accelerator_count <= 0 || !visible) return out;
  size_t pos = 0;
  while (pos < visible->size()) {
    size_t comma = visible->find(',', pos);
    if (comma == std::string::npos) comma = visible->size();
    std::string item = visible->substr(pos, comma - pos);
    if (!item.empty() && item.find_first_not_of("0123456789") == std::string::npos) {
      out.push_back(std::atoi(item.c_str()));
    }
    pos = comma + 1;
  }
  return out;
}

// Forks and execs `argv` (PATH lookup) with stdout/stderr appended to the two files
// ("" = /dev/null) and TERM/INT/HUP unblocked again. -1 on failure.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path,
            const std::string& err_path) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const char* out_file = out_path.empty() ? "/dev/null" : out_path.c_str();
  const char* err_file = err_path.empty() ? "/dev/null" : err_path.c_str();
  pid_t pid = fork();
  if (pid != 0) return pid;
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Its own process group: Slurm's signals to the task reach the launcher, which
  // stops the container with the grace period instead of podman forwarding them.
  setpgid(0, 0);
  int in = open("/dev/null", O_RDONLY);
  int out = open(out_file, O_WRONLY | O_CREAT | O_APPEND, 0600);
  int err = open(err_file, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (in < 0 || out < 0 || err < 0) _exit(126);
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  execvp(cargv[0], cargv.data());
  _exit(127);
}

// TERM, INT and HUP: Slurm ends the task (scancel, a time limit).
sigset_t StopSignals(bool with_child) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  if (with_child) sigaddset(&set, SIGCHLD);
  return set;
}

// Waits for the container's podman client; on TERM/INT/HUP stops the container
// (`podman stop -t grace`), again each second until the client is gone (a signal may
// come before the container exists), and sets `*stopping`. Returns the client's exit
// code (128 + N when a signal killed it).
int WaitStoppingOnSignal(pid_t run, const std::string& name, int grace_s, bool* stopping) {
  const sigset_t waited = StopSignals(/*with_child=*/true);
  time_t last_stop = 0;
  for (;;) {
    int status = 0;
    pid_t got = waitpid(run, &status, WNOHANG);
    if (got == run) {
      // Slurm signals every process of the step: the client (no signal proxy) can end
      // of its TERM before this loop took its own, and then its code is not the
      // container's (seen: 0 and 2 for a replica stopped just after it started).
      const sigset_t stops = StopSignals(/*with_child=*/false);
      timespec now = {0, 0};
      for (int sig; (sig = sigtimedwait(&stops, nullptr, &now)) > 0;) *stopping = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    while (waitpid(-1, nullptr, WNOHANG) > 0) {  // Earlier `podman stop` calls.
    }
    timespec tick = {0, 200 * 1000 * 1000};
    int sig = sigtimedwait(&waited, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) *stopping = true;
    if (*stopping && time(nullptr) - last_stop >= 1) {
      last_stop = time(nullptr);
      Spawn({"podman", "stop", "--ignore", "-t", std::to_string(grace_s), name}, "", "");
    }
  }
}

// After the container exited: waits for the executor's restart request
// (<prefix>.restart, executor.h's RestartReplica: the same container, host and port
// again) or for Slurm to end the task. True for a restart.
bool WaitForRestart(const std::string& prefix) {
  const sigset_t waited = StopSignals(/*with_child=*/false);
  for (;;) {
    if (unlink((prefix + ".restart").c_str()) == 0) return true;
    timespec tick = {0, 200 * 1000 * 1000};
    int sig = sigtimedwait(&waited, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) return false;
  }
}

// A TCP port free on this host now (the kernel's pick), for a job of one replica.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// Where this task's replica runs and where its peers do (slurm_topology.h).
ty::Result<ty::executor::SlurmTopology> PlaceThisTask() {
  if (GetEnv("TY_SLURM_SINGLE").value_or("") != "1") {
    return ty::executor::TopologyFromSlurmEnv(&GetEnv);
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return ty::executor::SingleReplicaTopology(&GetEnv, GetEnv("SLURMD_NODENAME").value_or(host),
                                             FreePort());
}

// Runs a command to its end, its output dropped; its exit code (-1: not run).
int RunQuietly(const std::vector<std::string>& argv, std::string* out = nullptr) {
  ty::CommandOptions o;
  o.timeout = 120LL * 1000000;
  ty::Result<ty::CommandOutput> r = ty::RunCommand(argv, o);
  if (!r.ok()) return -1;
  if (out != nullptr) *out = r->out;
  return r->exit_code;
}

// The container's own exit code once the podman client returned `client_code`. The
// client is not the authority: Slurm signals every process of the task, and podman
// answers a TERM that comes before the container runs by exiting 0, container or
// not. So the container is asked: still running (the client died first) -> it is
// stopped when the task is, and waited for; exited -> its code; created but never
// started, or never created, while stopping -> 143 (SIGTERM's). Asked only when the
// client may not know (it was signalled, or the code is podman's own).
int ContainerExitCode(const std::string& name, int client_code, bool stopping, int grace_s) {
  // Nobody signalled the client and it reports a code of the container's own (podman's
  // are 125-127): no need to ask (a podman call is most of a short job's cost).
  if (!stopping && client_code < 125) return client_code;
  std::string state;
  if (RunQuietly({"podman", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", name},
                 &state) != 0) {
    return stopping ? 128 + SIGTERM : client_code;  // Never created (or pull failed).
  }
  // "stopped": its process ended but podman has not recorded the end yet (seen when
  // Slurm's TERM ended the client before the container); `podman wait` has the code.
  const bool ended = state.rfind("stopped", 0) == 0;
  if (ended || state.rfind("running", 0) == 0 || state.rfind("stopping", 0) == 0) {
    if (stopping && !ended) {
      RunQuietly({"podman", "stop", "--ignore", "-t", std::to_string(grace_s), name});
    }
    std::string code;
    if (RunQuietly({"podman", "wait", name}, &code) == 0) return std::atoi(code.c_str());
    return client_code;
  }
  if (state.rfind("exited", 0) == 0) return std::atoi(state.c_str() + 7);
  return stopping ? 128 + SIGTERM : client_code;
}

// Runs `argv` (podman run, or podman start --attach for a restart) to its end and
// records the container's exit code; see WaitStoppingOnSignal.
int RunOnce(const std::vector<std::string>& argv, const std::string& prefix,
            const std::string& name, int grace_s, bool* stopping) {
  pid_t run = Spawn(argv, prefix + ".out", prefix + ".err");
  if (run < 0) return Fail(std::string("fork: ") + std::strerror(errno));
  int client_code = WaitStoppingOnSignal(run, name, grace_s, stopping);
  int code = ContainerExitCode(name, client_code, *stopping, grace_s);
  ty::Status wrote = ty::WriteFileAtomically(prefix + ".exit", std::to_string(code) + "\n");
  if (!wrote.ok()) Fail(wrote.message());
  return code;
}

// The podman command line of this task's replica, with its environment and registry
// credential written beside `prefix` where only this user reads them.
ty::Result<std::vector<std::string>> PodmanCommand(const SlurmContext& context,
                                                   const ReplicaLaunch& mine,
                                                   const ty::executor::SlurmTopology& placed,
                                                   const std::string& prefix) {
  std::vector<ty::model::EnvVar> env =
      ty::executor::PlaceEnvironment(mine.env, context.replicas, placed);
  // The environment goes to podman in a file only this user reads, never on a
  // command line every user of the host can read (it holds the job's credential).
  const ty::executor::PodmanEnvironment split = ty::executor::SplitEnvironment(env);
  const std::string env_file = prefix + ".env";
  if (ty::Status s = ty::WritePrivateFile(env_file, split.env_file_text); !s.ok()) {
    return s;
  }
  // The job's registry credential, as private as its environment.
  std::string auth_file;
  if (std::string auth = ty::executor::RegistryAuthFile(context, mine); !auth.empty()) {
    auth_file = prefix + ".auth.json";
    if (ty::Status s = ty::WritePrivateFile(auth_file, auth); !s.ok()) return s;
  }
  return ty::executor::PodmanRunArgs(context, mine, env_file, auth_file, split,
                                     GetEnv("SLURM_JOB_ID").value_or(""), TaskGpus(mine));
}

void MarkForEpilog(const std::string& name) {
  // The epilog's marker (scripts/ty-slurm-epilog): it removes the container.
  const std::string marker_dir = "/run/trainyard-slurm/" + GetEnv("SLURM_JOB_ID").value_or("0");
  const std::string marker = marker_dir + "/" + name;
  mkdir("/run/trainyard-slurm", 0700);
  mkdir(marker_dir.c_str(), 0700);
  ty::WriteFileAtomically(marker, "").IgnoreError();
}

int RunReplica(const std::string& dir) {
  ty::Result<std::string> text = ty::ReadFile(dir + "/context.json");
  if (!text.ok()) return Fail(text.status().message());
  ty::Result<SlurmContext> context = ty::executor::SlurmContextFromJson(*text);
  if (!context.ok()) return Fail(context.status().message());
  ty::Result<ty::executor::SlurmTopology> placed = PlaceThisTask();
  if (!placed.ok()) return Fail(placed.status().message());
  const ReplicaLaunch* mine = nullptr;
  for (const ReplicaLaunch& r : context->replicas) {
    if (r.pool == placed->pool && r.index == placed->index) mine = &r;
  }
  if (mine == nullptr) {
    return Fail("the context has no replica " + std::to_string(placed->pool) + "/" +
                std::to_string(placed->index));
  }
  const std::string prefix = dir + "/" + mine->name;
  const std::string where = placed->addresses[placed->pool][placed->index];
  ty::WriteFileAtomically(prefix + ".placed", where + "\n").IgnoreError();
  ty::Result<std::vector<std::string>> argv = PodmanCommand(*context, *mine, *placed, prefix);
  if (!argv.ok()) return Fail(argv.status().message());
  MarkForEpilog(mine->name);

  sigset_t blocked = StopSignals(/*with_child=*/true);
  sigprocmask(SIG_BLOCK, &blocked, nullptr);
  const int grace = context->stop_grace_s;
  bool stopping = false;
  int code = RunOnce(*argv, prefix, mine->name, grace, &stopping);
  // The container is kept until the task ends, so a restart finds its files as it
  // left them (as the container executor restarts a replica: podman start). Not after
  // a success, which is never restarted: the task ends at once and frees its share.
  while (!stopping && code != 0 && WaitForRestart(prefix)) {
    code =
        RunOnce({"podman", "start", "--attach", mine->name}, prefix, mine->name, grace, &stopping);
  }
  // The container is removed by the epilog (scripts/ty-slurm-epilog), after every task
  // of the job is gone: Slurm signals every process of a task it ends, and a
  // `podman rm` cut short here left containers podman could no longer remove.
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--print-topology") == 0) return PrintTopology();
  if (argc == 3 && std::strcmp(argv[1], "--context") == 0) return RunReplica(argv[2]);
  std::fprintf(stderr,
               "usage: ty-slurm-launch --context DIR | --print-topology (inside a Slurm step)\n");
  return 2;
}
