// Runs a program as a user would (trainyard, gcloud), with extra environment,
// capturing stdout and stderr into files, killed after a timeout.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace ty::testing {

struct ProcessRun {
  int rc = -1;  // Exit status; 128 + signal when killed (timeout: 128 + 9).
  std::string out, err;
};

inline std::string ReadWholeFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `argv[0]` is looked up on PATH. `env`: variables to set ("" value = unset).
inline ProcessRun RunProcess(const std::vector<std::string>& argv,
                             const std::map<std::string, std::string>& env = {},
                             int timeout_s = 120) {
  static int counter = 0;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ty-run-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  std::string out_path = (dir / "out").string(), err_path = (dir / "err").string();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // So a timeout kills the whole tree (gcloud runs Python children).
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = open("/dev/null", O_RDONLY);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    for (const auto& [k, v] : env) {
      if (v.empty()) {
        unsetenv(k.c_str());
      } else {
        setenv(k.c_str(), v.c_str(), 1);
      }
    }
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ProcessRun run;
  run.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = ReadWholeFile(out_path);
  run.err = ReadWholeFile(err_path);
  std::filesystem::remove_all(dir);
  return run;
}

}  // namespace ty::testing
