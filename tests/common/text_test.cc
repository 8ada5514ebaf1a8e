#include "common/text.h"

#include <gtest/gtest.h>

namespace ty {
namespace {

TEST(TextTest, SplitOnKeepsEmptyPartsAndTheirOrder) {
  EXPECT_EQ(SplitOn("a,b,,c", ','), (std::vector<std::string_view>{"a", "b", "", "c"}));
  EXPECT_EQ(SplitOn("", ','), (std::vector<std::string_view>{""}));
  EXPECT_EQ(SplitOn("/x/", '/'), (std::vector<std::string_view>{"", "x", ""}));
  EXPECT_EQ(SplitOn("projects/p", '/').size(), 2u);
}

TEST(TextTest, ShownInMessageCutsAndMasksBytes) {
  EXPECT_EQ(ShownInMessage(std::string("a\0b\x7f", 4)), "a?b?");
  EXPECT_EQ(ShownInMessage("abcdef", 3), "abc");
}

}  // namespace
}  // namespace ty
