// Internal to executor/container: a ReplicaShell over an engine exec on a terminal.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "executor/container/engine_client.h"
#include "executor/replica_shell.h"

namespace ty::executor::internal {

// What runs in the replica: its bash when the image has one, else its sh.
std::vector<std::string> ShellCommand();

class ContainerShell final : public ReplicaShell {
 public:
  // Takes `exec`'s connection; holds its process (by pidfd, so a reused pid is never
  // hit) to kill it on destruction.
  ContainerShell(std::shared_ptr<EngineClient> engine, TerminalExec exec);
  ~ContainerShell() override;
  ContainerShell(const ContainerShell&) = delete;
  ContainerShell& operator=(const ContainerShell&) = delete;

  int fd() const override { return exec_.fd; }
  std::string TakeEarlyOutput() override { return std::exchange(exec_.early, {}); }
  Status Resize(int rows, int cols) override;

 private:
  std::shared_ptr<EngineClient> engine_;
  TerminalExec exec_;
  int pidfd_ = -1;
};

}  // namespace ty::executor::internal
