#include "executor/container/container_shell.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <utility>

namespace ty::executor::internal {

std::vector<std::string> ShellCommand() {
  return {"/bin/sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash; fi; exec sh"};
}

ContainerShell::ContainerShell(std::shared_ptr<EngineClient> engine, TerminalExec exec)
    : engine_(std::move(engine)), exec_(std::move(exec)) {
  if (exec_.pid > 0) pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, exec_.pid, 0));
}

ContainerShell::~ContainerShell() {
  // The engine has no call that ends an exec, and one whose connection closes runs on.
  // The shell leads its terminal's session: killing it hangs the terminal up, which
  // ends what runs in its foreground too.
  if (pidfd_ >= 0) {
    ::syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);
    ::close(pidfd_);
  }
  if (exec_.fd >= 0) ::close(exec_.fd);
}

Status ContainerShell::Resize(int rows, int cols) {
  if (rows < 1 || cols < 1 || rows > kMaxTerminalRows || cols > kMaxTerminalCols) {
    return InvalidArgument("a terminal is 1.." + std::to_string(kMaxTerminalRows) + " rows by 1.." +
                           std::to_string(kMaxTerminalCols) + " columns");
  }
  return engine_->ResizeTerminal(exec_.id, rows, cols);
}

}  // namespace ty::executor::internal
