// Runs a program to its end and returns what it printed: the Slurm executor's
// sbatch / squeue / scontrol / scancel calls and the launcher's podman calls. No
// shell: argv goes to execvp as it is, so no argument is ever interpreted.
//
// Hostile or broken programs cannot take the caller down: output beyond
// `max_output_bytes` per stream is dropped (and said), and a program still running at
// the deadline is killed with its process group. Thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace ty {

struct CommandOptions {
  // Variables set on top of the caller's environment.
  std::map<std::string, std::string> set_env;
  std::string stdin_data;  // Written to the program's stdin, which is then closed.
  DurationMicros timeout = 60 * 1000000;
  size_t max_output_bytes = 4 << 20;
};

struct CommandOutput {
  int exit_code = 0;  // 128 + N when killed by signal N (a timeout: 128 + 9).
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Internal when the program cannot be started at all (no such file: exit code 127
// with a message in `err` instead, as a shell reports it).
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                 const CommandOptions& options = {});

// "sbatch: error: ..." -> the last non-empty line of `text`, trimmed; for messages.
std::string LastLine(const std::string& text);

}  // namespace ty
