// PackageDigest (executor/container/package_digest.h): archives of the same files digest
// alike whatever their bytes (times, owners, compression, member order, tar format), and
// any difference pip could see digests apart. Archives are made by Python's own tarfile
// and zipfile, as setuptools and wheel make them.
#include "executor/container/package_digest.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace ty::testing {
namespace {

namespace fs = std::filesystem;
using executor::internal::PackageDigest;

// The members of a small trainer package (a Python list of (name, bytes, mode)), its
// module at `module` holding `code` with `mode`.
std::string Trainer(const std::string& module = "task.py", const std::string& code = "print(42)",
                    const char* mode = "0o755") {
  return "[('trainer-0.1/setup.py', b'from setuptools import setup\\nsetup(name=\"trainer\")"
         "\\n', 0o644), ('trainer-0.1/trainer/__init__.py', b'', 0o644), "
         "('trainer-0.1/trainer/" +
         module + "', b'" + code + "\\n', " + mode + ")]";
}

class PackageDigestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ty-digest-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs a Python snippet with `out` (a path under the test's directory) and MEMBERS, a
  // list of (name, bytes, mode) the snippet writes.
  std::string Make(const std::string& name, const std::string& python,
                   const std::string& members = Trainer()) {
    const std::string out = (dir_ / name).string();
    const std::string script = (dir_ / "make.py").string();
    std::ofstream(script) << "import io, sys, tarfile, time, zipfile, gzip\n"
                          << "out = sys.argv[1]\n"
                          << "MEMBERS = " << members << "\n"
                          << python << "\n";
    const std::string cmd = "python3 " + script + " " + out;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << python;
    return out;
  }
  std::string Digest(const std::string& path) {
    Result<std::string> d = PackageDigest(path);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : "";
  }

  // An sdist as Python's tarfile writes it: `fmt`, members at `mtime`, in `order`.
  static std::string Sdist(const std::string& fmt, int mtime, const std::string& order = "") {
    return "with tarfile.open(out, 'w:gz', format=tarfile." + fmt +
           ") as t:\n"
           "  for n, b, m in MEMBERS" +
           order + ":\n" + "    i = tarfile.TarInfo(n); i.size = len(b); i.mode = m; i.mtime = " +
           std::to_string(mtime) + "; i.uname = 'u" + std::to_string(mtime) +
           "'\n"
           "    t.addfile(i, io.BytesIO(b))\n";
  }
  static std::string Wheel(const std::string& compression, int year) {
    return "with zipfile.ZipFile(out, 'w', zipfile." + compression +
           ") as z:\n"
           "  for n, b, m in MEMBERS:\n"
           "    i = zipfile.ZipInfo(n, (" +
           std::to_string(year) +
           ", 1, 1, 0, 0, 0)); i.external_attr = (0o100000 | m) << 16\n"
           "    i.compress_type = zipfile." +
           compression + "\n    z.writestr(i, b)\n";
  }

  fs::path dir_;
};

TEST_F(PackageDigestTest, TheSameFilesDigestAlikeWhateverTheArchivesBytes) {
  const std::string a = Digest(Make("a.tar.gz", Sdist("PAX_FORMAT", 1000)));
  EXPECT_EQ(a.rfind("content:", 0), 0u) << a;
  // Another build: other times and owner, the gzip header's time, members reversed,
  // the GNU tar format.
  EXPECT_EQ(a, Digest(Make("b.tar.gz", Sdist("PAX_FORMAT", 2000, "[::-1]"))));
  EXPECT_EQ(a, Digest(Make("c.tar.gz", Sdist("GNU_FORMAT", 3000))));
  EXPECT_EQ(a, Digest(Make("d.tar.gz", Sdist("USTAR_FORMAT", 4000))));
}

TEST_F(PackageDigestTest, WhatPipCouldSeeDigestsApart) {
  const std::string a = Digest(Make("a.tar.gz", Sdist("PAX_FORMAT", 1000)));
  EXPECT_NE(a,
            Digest(Make("b.tar.gz", Sdist("PAX_FORMAT", 1000), Trainer("task.py", "print(43)"))));
  EXPECT_NE(a, Digest(Make("c.tar.gz", Sdist("PAX_FORMAT", 1000),
                           Trainer("task.py", "print(42)", "0o644"))));  // Not executable.
  EXPECT_NE(a, Digest(Make("d.tar.gz", Sdist("PAX_FORMAT", 1000), Trainer("main.py"))));
  // A file added twice: extraction keeps the last, so the order of the two counts.
  const std::string twice_a =
      Trainer() + " + [('trainer-0.1/x', b'1', 0o644), ('trainer-0.1/x', b'2', 0o644)]";
  const std::string twice_b =
      Trainer() + " + [('trainer-0.1/x', b'2', 0o644), ('trainer-0.1/x', b'1', 0o644)]";
  EXPECT_NE(Digest(Make("e.tar.gz", Sdist("PAX_FORMAT", 1000), twice_a)),
            Digest(Make("f.tar.gz", Sdist("PAX_FORMAT", 1000), twice_b)));
}

TEST_F(PackageDigestTest, LongNamesArePartOfTheContent) {
  const std::string long_members =
      "[('trainer-0.1/' + 'd' * 150 + '/' + 'f' * 120 + '.py', b'x', 0o644)]";
  const std::string pax = Digest(Make("a.tar.gz", Sdist("PAX_FORMAT", 1), long_members));
  EXPECT_EQ(pax, Digest(Make("b.tar.gz", Sdist("GNU_FORMAT", 2), long_members)));
  const std::string shorter =
      "[('trainer-0.1/' + 'd' * 150 + '/' + 'f' * 119 + '.py', b'x', 0o644)]";
  EXPECT_NE(pax, Digest(Make("c.tar.gz", Sdist("PAX_FORMAT", 1), shorter)));
}

TEST_F(PackageDigestTest, WheelsDigestByTheirFilesStoredOrDeflated) {
  const std::string stored = Digest(Make("a.whl", Wheel("ZIP_STORED", 2001)));
  EXPECT_EQ(stored.rfind("content:", 0), 0u) << stored;
  EXPECT_EQ(stored, Digest(Make("b.whl", Wheel("ZIP_DEFLATED", 2020))));
  const std::string other =
      "[('trainer-0.1/setup.py', b'x', 0o644), ('trainer-0.1/trainer/__init__.py', b'', 0o644)]";
  EXPECT_NE(stored, Digest(Make("c.whl", Wheel("ZIP_DEFLATED", 2020), other)));
}

// What is not read member by member is digested by its bytes: the same file still
// hits, and a damaged archive neither crashes nor passes for another.
TEST_F(PackageDigestTest, AnythingElseIsDigestedByItsBytes) {
  const std::string plain = (dir_ / "p.tar.gz").string();
  std::ofstream(plain) << "not an archive";
  const std::string a = Digest(plain);
  EXPECT_EQ(a.rfind("bytes:", 0), 0u) << a;
  EXPECT_EQ(a, Digest(plain));

  const std::string sdist = Make("s.tar.gz", Sdist("PAX_FORMAT", 1000));
  const std::string wheel = Make("w.whl", Wheel("ZIP_DEFLATED", 2020));
  for (const std::string& path : {sdist, wheel}) {
    const auto size = fs::file_size(path);
    for (uintmax_t cut : {size / 2, size - 1, uintmax_t{10}}) {
      const std::string damaged = path + ".cut";
      fs::copy_file(path, damaged, fs::copy_options::overwrite_existing);
      fs::resize_file(damaged, cut);
      const std::string d = Digest(damaged);
      EXPECT_EQ(d.rfind("bytes:", 0), 0u) << path << " cut at " << cut << ": " << d;
    }
  }
  EXPECT_EQ(PackageDigest((dir_ / "missing").string()).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ty::testing
