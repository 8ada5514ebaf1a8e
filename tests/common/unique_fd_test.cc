#include "common/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <utility>

namespace ty {
namespace {

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST(UniqueFdTest, ClosesWhenItsOwnerGoes) {
  int raw = -1;
  {
    UniqueFd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid());
    raw = fd.get();
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, MovingHandsOwnershipOnAndClosesWhatWasHeld) {
  UniqueFd a(open("/dev/null", O_RDONLY | O_CLOEXEC));
  UniqueFd b(open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int held_by_b = b.get();
  const int raw = a.get();
  b = std::move(a);
  EXPECT_FALSE(IsOpen(held_by_b));  // b's old descriptor is closed, not leaked.
  EXPECT_EQ(b.get(), raw);
  EXPECT_FALSE(a.valid());  // The moved-from owner holds nothing.
  UniqueFd c(std::move(b));
  EXPECT_EQ(c.get(), raw);
  EXPECT_TRUE(IsOpen(raw));
}

TEST(UniqueFdTest, ReleaseLeavesTheDescriptorOpen) {
  int raw = -1;
  {
    UniqueFd fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    raw = fd.release();
    EXPECT_FALSE(fd.valid());
  }
  EXPECT_TRUE(IsOpen(raw));
  close(raw);
}

}  // namespace
}  // namespace ty
