#include "common/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ty {
namespace {

TEST(FilesTest, UrlEncodeKeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(UrlEncode("a-b_c.d~e"), "a-b_c.d~e");
  EXPECT_EQ(UrlEncode("a b/c?d=é"), "a%20b%2Fc%3Fd%3D%C3%A9");
}

TEST(FilesTest, WriteFileAtomicallyReplacesWholeAndLeavesNoTemporary) {
  auto dir = std::filesystem::temp_directory_path() / ("ty-files-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "port").string();
  ASSERT_TRUE(WriteFileAtomically(path, "a much longer first content\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "8080\n").ok());
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "8080\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(WriteFileAtomically((dir / "missing" / "x").string(), "x").code(),
            StatusCode::kInternal);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ty

namespace ty {
namespace {

TEST(FilesTest, Base64EncodeWithPadding) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode(std::string("\xff\xfe\x00", 3)), "//4A");
}

}  // namespace
}  // namespace ty

namespace ty {
namespace {

TEST(FilesTest, ReadFileReturnsTheBytesOrSaysWhy) {
  std::string path = "/tmp/ty-files-test-" + std::to_string(::getpid());
  ASSERT_TRUE(WriteFileAtomically(path, std::string("a\0b", 3)).ok());
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, std::string("a\0b", 3));
  ::unlink(path.c_str());
  EXPECT_EQ(ReadFile(path).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ty
