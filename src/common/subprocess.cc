#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace ty {
namespace {

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Reads what is there from `*fd` into `out` (up to `cap` bytes kept); closes it at EOF.
void Drain(int* fd, std::string* out, size_t cap, bool* truncated) {
  char buf[65536];
  ssize_t n = read(*fd, buf, sizeof buf);
  if (n > 0) {
    size_t keep = out->size() < cap ? std::min(cap - out->size(), static_cast<size_t>(n)) : 0;
    out->append(buf, keep);
    if (keep < static_cast<size_t>(n)) *truncated = true;
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    CloseFd(fd);
  }
}

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

namespace {

// The environment the child gets: the caller's, with `set_env` on top.
std::vector<std::string> ChildEnvironment(const std::map<std::string, std::string>& set_env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (set_env.count(entry.substr(0, entry.find('='))) == 0) out.push_back(std::move(entry));
  }
  for (const auto& [k, v] : set_env) out.push_back(k + "=" + v);
  return out;
}

// Writes all of `data` (small: a batch script) and closes `fd`: the child sees EOF.
void WriteAllAndClose(int fd, const std::string& data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
  CloseFd(&fd);
}

// Reads the child's stdout and stderr until both close or the deadline passes (then
// its process group is killed).
void CollectOutput(pid_t pid, int out_fd, int err_fd, const CommandOptions& options,
                   CommandOutput* result) {
  int fds[2] = {out_fd, err_fd};
  bool truncated = false;
  const int64_t deadline = NowMicros() + options.timeout;
  while (fds[0] >= 0 || fds[1] >= 0) {
    int64_t left_ms = (deadline - NowMicros()) / 1000;
    if (left_ms <= 0) {
      result->timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    pollfd p[2];
    nfds_t n = 0;
    for (int fd : fds) {
      if (fd >= 0) p[n++] = {fd, POLLIN, 0};
    }
    if (poll(p, n, static_cast<int>(std::min<int64_t>(left_ms, 1000))) < 0 && errno != EINTR) {
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (p[i].revents == 0) continue;
      int* fd = p[i].fd == fds[0] ? &fds[0] : &fds[1];
      Drain(fd, fd == &fds[0] ? &result->out : &result->err, options.max_output_bytes, &truncated);
    }
  }
  CloseFd(&fds[0]);
  CloseFd(&fds[1]);
  if (truncated) {
    result->err +=
        "\n(output beyond " + std::to_string(options.max_output_bytes) + " bytes dropped)";
  }
}

}  // namespace

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                 const CommandOptions& options) {
  if (argv.empty()) return InvalidArgument("RunCommand: no program");
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return Internal("pipe: " + std::string(strerror(errno)));
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    return Internal("pipe: " + std::string(strerror(errno)));
  }
  // Everything the child needs is prepared before fork(): after it, only
  // async-signal-safe calls.
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<std::string> env_strings = ChildEnvironment(options.set_env);
  std::vector<char*> cenv;
  for (std::string& e : env_strings) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) return Internal("fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);  // A timeout kills the program's children too.
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    signal(SIGPIPE, SIG_DFL);
    execvpe(cargv[0], cargv.data(), cenv.data());
    const char msg[] = ": cannot run\n";
    (void)!write(2, cargv[0], strlen(cargv[0]));
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  WriteAllAndClose(in_pipe[1], options.stdin_data);
  CommandOutput result;
  CollectOutput(pid, out_pipe[0], err_pipe[0], options, &result);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end - start + 1);
}

}  // namespace ty
