#include "common/subprocess.h"

#include <gtest/gtest.h>

namespace ty {
namespace {

TEST(SubprocessTest, ReturnsOutputAndExitCodeWithoutAShell) {
  CommandOptions o;
  o.set_env = {{"TY_X", "a b"}};
  Result<CommandOutput> r = RunCommand({"sh", "-c", "echo \"$TY_X\"; echo err >&2; exit 3"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "a b\n");
  EXPECT_EQ(r->err, "err\n");
  Result<CommandOutput> lit = RunCommand({"echo", "$(rm -rf /)", ";"});
  EXPECT_EQ(lit->out, "$(rm -rf /) ;\n");
}

TEST(SubprocessTest, MissingProgramIs127AndStdinArrives) {
  EXPECT_EQ(RunCommand({"/no/such/program"})->exit_code, 127);
  CommandOptions o;
  o.stdin_data = "hello";
  EXPECT_EQ(RunCommand({"cat"}, o)->out, "hello");
}

TEST(SubprocessTest, TimeoutKillsAndOutputIsBounded) {
  CommandOptions o;
  o.timeout = 200 * 1000;
  Result<CommandOutput> slow = RunCommand({"sleep", "30"}, o);
  EXPECT_TRUE(slow->timed_out);
  EXPECT_EQ(slow->exit_code, 128 + 9);
  CommandOptions small;
  small.max_output_bytes = 1000;
  Result<CommandOutput> big = RunCommand({"head", "-c", "100000", "/dev/zero"}, small);
  EXPECT_EQ(big->out.size(), 1000u);
  EXPECT_NE(big->err.find("dropped"), std::string::npos);
  EXPECT_EQ(LastLine("a\nsbatch: error: no\n\n"), "sbatch: error: no");
}

}  // namespace
}  // namespace ty
