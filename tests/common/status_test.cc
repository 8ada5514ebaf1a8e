#include "common/status.h"

#include <gtest/gtest.h>

namespace ty {
namespace {

Result<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int h, Half(x));
  ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, PropagatesFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().ToString(), "INVALID_ARGUMENT: odd");
}

TEST(StatusTest, FieldErrorCarriesPath) {
  Status s = FieldError("trainingInput.region", "is required");
  EXPECT_EQ(s.field(), "trainingInput.region");
  EXPECT_EQ(s.message(), "Field: trainingInput.region Error: is required");
  EXPECT_EQ(s.WithContext("submit").message(),
            "submit: Field: trainingInput.region Error: is required");
}

}  // namespace
}  // namespace ty
