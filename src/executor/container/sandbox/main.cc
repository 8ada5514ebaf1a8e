// ty-sandbox-init: the first process of a warm sandbox (executor/container/warm_pool.h).
//
// A warm sandbox is a container of the job's image that the executor created and
// started before any job asked for it, so that a later attempt pays neither the
// engine's create nor its start. This program is its entrypoint (bind-mounted
// read-only from the host, statically linked so it runs on any image): it waits
// until the executor writes the launch file into the sandbox's run directory,
// then replaces itself with the replica's command, so the training process is
// PID 1 of the container exactly as in a container started the ordinary way
// (same stdout/stderr, same signals, its exit code is the container's).
//
// The launch file (written on the host with a rename, so it appears whole) is a
// sequence of NUL-terminated strings: the number of arguments, the arguments,
// the number of environment entries, the entries ("NAME=value"). The entries
// are applied over the environment the engine gave this process (the image's
// ENV and the engine's own), as the engine would have done at create time.
//
// On a restart in place the engine runs this program again; the launch file is
// already there, so the replica's command runs at once.
//
// With --hold it only waits forever: the first process of a network slot's holder.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace {

constexpr char kRunDir[] = "/.trainyard/run";
constexpr char kLaunchFile[] = "/.trainyard/run/launch";
// Exit status when the command cannot be run, as a shell reports it.
constexpr int kCannotRun = 127;

bool ReadAll(const char* path, std::string* out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return true;
}

// Blocks until the launch file exists. inotify wakes at once when the executor
// renames it into place; the 1 s poll timeout only guards against a missed event.
void WaitForLaunchFile() {
  int fd = inotify_init1(IN_CLOEXEC);
  if (fd >= 0) inotify_add_watch(fd, kRunDir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE);
  while (access(kLaunchFile, R_OK) != 0) {
    if (fd < 0) {
      usleep(5000);
      continue;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 1000) > 0) {
      char events[4096];
      (void)!read(fd, events, sizeof(events));
    }
  }
  if (fd >= 0) close(fd);
}

// Splits the file into its strings; false when it is malformed.
bool Parse(const std::string& data, std::vector<std::string>* argv, std::vector<std::string>* env) {
  std::vector<std::string> tokens;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t end = data.find('\0', pos);
    if (end == std::string::npos) return false;
    tokens.emplace_back(data, pos, end - pos);
    pos = end + 1;
  }
  size_t i = 0;
  auto take_list = [&](std::vector<std::string>* out) {
    if (i >= tokens.size()) return false;
    char* rest = nullptr;
    unsigned long n = strtoul(tokens[i].c_str(), &rest, 10);
    if (rest == tokens[i].c_str() || *rest != '\0' || n > tokens.size() - i - 1) return false;
    ++i;
    out->assign(tokens.begin() + static_cast<long>(i), tokens.begin() + static_cast<long>(i + n));
    i += n;
    return true;
  };
  return take_list(argv) && take_list(env) && i == tokens.size() && !argv->empty();
}

}  // namespace

int main(int argc, char** own_args) {
  // The holder of a network slot (executor/container/network_slots.h): keeps the network
  // namespace that single-replica containers join, doing nothing. As PID 1 it
  // ignores the signals it has no handler for, so it ends on SIGTERM itself (a stop
  // need not wait for the engine's SIGKILL).
  if (argc > 1 && strcmp(own_args[1], "--hold") == 0) {
    signal(SIGTERM, [](int) { _exit(0); });
    for (;;) pause();
  }
  WaitForLaunchFile();
  std::string data;
  std::vector<std::string> args;
  std::vector<std::string> env;
  if (!ReadAll(kLaunchFile, &data) || !Parse(data, &args, &env)) {
    fprintf(stderr, "trainyard: malformed launch file %s\n", kLaunchFile);
    return kCannotRun;
  }
  for (const std::string& e : env) {
    size_t eq = e.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    setenv(e.substr(0, eq).c_str(), e.c_str() + eq + 1, 1);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // execvp searches the PATH just set, as the engine does with the image's PATH.
  execvp(argv[0], argv.data());
  int err = errno;
  fprintf(stderr, "trainyard: cannot run \"%s\": %s\n", argv[0], strerror(err));
  return kCannotRun;
}
