#include "executor/container/package_digest.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace ty::executor::internal {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
  EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr);
}

void Sha256::Add(const void* data, size_t size) { EVP_DigestUpdate(ctx_.get(), data, size); }

std::string Sha256::Hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_.get(), digest, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

namespace {

// Why an archive is digested by its bytes (a status of this code never leaves here).
constexpr StatusCode kByBytes = StatusCode::kFailedPrecondition;
Status ByBytes(const std::string& why) { return Status(kByBytes, why); }

struct Member {
  std::string name;
  char kind = 'f';  // 'f' file, 'l' symbolic link, 'h' hard link.
  bool executable = false;
  std::string hash;  // Of the contents (a link: of its target).
};

// Counts what an archive makes the digest read, against the bounds.
struct Budget {
  uint64_t bytes = 0;
  Status Take(uint64_t n) {
    bytes += n;
    return bytes > kMaxContentBytes ? ByBytes("too large") : Status::Ok();
  }
};

std::string NormalName(std::string name) {
  while (name.rfind("./", 0) == 0) name.erase(0, 2);
  while (!name.empty() && name.back() == '/') name.pop_back();
  return name;
}

// ---- Byte sources ------------------------------------------------------------

class Source {
 public:
  virtual ~Source() = default;
  // Up to `size` bytes; 0 at the end.
  virtual Result<size_t> Read(char* out, size_t size) = 0;

  // Exactly `size` bytes, or an error (the archive ends early).
  Status ReadExactly(char* out, size_t size) {
    while (size > 0) {
      ASSIGN_OR_RETURN(size_t got, Read(out, size));
      if (got == 0) return ByBytes("truncated");
      out += got;
      size -= got;
    }
    return Status::Ok();
  }
  // `size` bytes into `sink` (nullptr: skipped), a buffer at a time.
  Status Pass(uint64_t size, Sha256* sink) {
    char buf[1 << 16];
    while (size > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(size, sizeof buf));
      RETURN_IF_ERROR(ReadExactly(buf, n));
      if (sink != nullptr) sink->Add(buf, n);
      size -= n;
    }
    return Status::Ok();
  }
};

class FileSource : public Source {
 public:
  explicit FileSource(int fd) : fd_(fd) {}
  Result<size_t> Read(char* out, size_t size) override {
    const ssize_t n = ::read(fd_, out, size);
    if (n < 0) return Internal(std::string("read: ") + std::strerror(errno));
    return static_cast<size_t>(n);
  }

 private:
  int fd_;
};

class GzipSource : public Source {
 public:
  explicit GzipSource(Source* in) : in_(in) {
    std::memset(&z_, 0, sizeof z_);
    ok_ = inflateInit2(&z_, 16 + MAX_WBITS) == Z_OK;  // gzip wrapper
  }
  ~GzipSource() override {
    if (ok_) inflateEnd(&z_);
  }
  Result<size_t> Read(char* out, size_t size) override {
    if (!ok_) return ByBytes("zlib");
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(size);
    while (z_.avail_out == size && !ended_) {
      if (z_.avail_in == 0) {
        ASSIGN_OR_RETURN(size_t got, in_->Read(in_buf_, sizeof in_buf_));
        if (got == 0) return ByBytes("truncated gzip");
        z_.next_in = reinterpret_cast<Bytef*>(in_buf_);
        z_.avail_in = static_cast<uInt>(got);
      }
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END)
        ended_ = true;
      else if (rc != Z_OK && rc != Z_BUF_ERROR)
        return ByBytes("bad gzip");
    }
    return size - z_.avail_out;
  }

 private:
  Source* in_;
  z_stream z_;
  bool ok_ = false;
  bool ended_ = false;
  char in_buf_[1 << 16];
};

// ---- tar (sdists) --------------------------------------------------------------

uint64_t Octal(const char* field, size_t size, bool* ok) {
  uint64_t v = 0;
  size_t i = 0;
  while (i < size && field[i] == ' ') ++i;
  for (; i < size && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (v > (UINT64_MAX >> 3)) *ok = false;
    v = (v << 3) | static_cast<uint64_t>(field[i] - '0');
  }
  // Only NULs or spaces may follow (base-256 sizes are not read here).
  for (; i < size; ++i) {
    if (field[i] != '\0' && field[i] != ' ') *ok = false;
  }
  return v;
}

std::string Field(const char* field, size_t size) {
  return std::string(field, strnlen(field, size));
}

// pax extended header records ("LEN key=value\n"): the path it gives the next member.
// A pax size (a member past 8 GiB) is not read here.
Status ReadPax(const std::string& text, std::string* path) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t space = text.find(' ', pos);
    if (space == std::string::npos) return ByBytes("bad pax");
    const size_t len = std::strtoull(text.c_str() + pos, nullptr, 10);
    if (len == 0 || pos + len > text.size() || text[pos + len - 1] != '\n') {
      return ByBytes("bad pax");
    }
    const std::string record = text.substr(space + 1, pos + len - space - 2);
    if (record.rfind("path=", 0) == 0) *path = record.substr(5);
    if (record.rfind("size=", 0) == 0) return ByBytes("pax size");
    pos += len;
  }
  return Status::Ok();
}

Result<std::string> ReadSmall(Source& in, uint64_t size) {
  if (size > (1 << 20)) return ByBytes("header too large");
  std::string text(static_cast<size_t>(size), '\0');
  RETURN_IF_ERROR(in.ReadExactly(text.data(), text.size()));
  return text;
}

Result<std::vector<Member>> ReadTar(Source& in) {
  std::vector<Member> members;
  Budget budget;
  std::string next_name;  // From a pax or GNU long-name header.
  char h[512];
  for (;;) {
    ASSIGN_OR_RETURN(size_t got, in.Read(h, sizeof h));
    if (got == 0) break;
    if (got < sizeof h) RETURN_IF_ERROR(in.ReadExactly(h + got, sizeof h - got));
    if (std::all_of(h, h + sizeof h, [](char c) { return c == '\0'; })) break;
    bool ok = true;
    const uint64_t size = Octal(h + 124, 12, &ok);
    const uint64_t mode = Octal(h + 100, 8, &ok);
    if (!ok) return ByBytes("bad tar header");
    RETURN_IF_ERROR(budget.Take(size));
    const char type = h[156];
    std::string name = Field(h, 100);
    // POSIX ustar ("ustar\0"; GNU's "ustar  " keeps other fields there) splits long
    // names into a prefix.
    if (std::memcmp(h + 257, "ustar", 6) == 0 && h[345] != '\0') {
      name = Field(h + 345, 155) + "/" + name;
    }
    if (!next_name.empty()) name = std::move(next_name);
    next_name.clear();
    const uint64_t padding = (512 - size % 512) % 512;
    Member m;
    m.name = NormalName(name);
    m.executable = (mode & 0111) != 0;
    if (type == 'x' || type == 'L') {
      ASSIGN_OR_RETURN(std::string text, ReadSmall(in, size));
      if (type == 'x') RETURN_IF_ERROR(ReadPax(text, &next_name));
      if (type == 'L') next_name = Field(text.data(), text.size());
    } else if (type == '0' || type == '\0' || type == '7') {
      Sha256 contents;
      RETURN_IF_ERROR(in.Pass(size, &contents));
      m.hash = contents.Hex();
      members.push_back(std::move(m));
    } else if (type == '1' || type == '2') {
      m.kind = type == '1' ? 'h' : 'l';
      Sha256 target;
      target.Add(Field(h + 157, 100));
      m.hash = target.Hex();
      members.push_back(std::move(m));
      RETURN_IF_ERROR(in.Pass(size, nullptr));
    } else if (type == '5' || type == 'g') {
      RETURN_IF_ERROR(in.Pass(size, nullptr));  // Directories; pax globals.
    } else {
      return ByBytes(std::string("tar member type ") + type);
    }
    RETURN_IF_ERROR(in.Pass(padding, nullptr));
    if (members.size() > kMaxMembers) return ByBytes("too many members");
  }
  return members;
}

// ---- zip (wheels) --------------------------------------------------------------

uint32_t Le(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

Status ReadAt(int fd, uint64_t offset, void* out, size_t size) {
  auto* p = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0) return Internal(std::string("read: ") + std::strerror(errno));
    if (n == 0) return ByBytes("truncated zip");
    p += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

// One member's data, stored or deflated, checked against the size it claims.
Result<std::string> HashZipData(int fd, uint64_t offset, uint32_t method, uint64_t packed,
                                uint64_t size) {
  Sha256 contents;
  z_stream z;
  std::memset(&z, 0, sizeof z);
  if (method == 8 && inflateInit2(&z, -MAX_WBITS) != Z_OK) return ByBytes("zlib");
  std::unique_ptr<z_stream, void (*)(z_stream*)> done(method == 8 ? &z : nullptr,
                                                      [](z_stream* s) { inflateEnd(s); });
  unsigned char in[1 << 16], out[1 << 16];
  uint64_t produced = 0;
  for (uint64_t left = packed; left > 0;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, sizeof in));
    RETURN_IF_ERROR(ReadAt(fd, offset, in, n));
    offset += n;
    left -= n;
    if (method == 0) {
      contents.Add(in, n);
      produced += n;
      continue;
    }
    z.next_in = in;
    z.avail_in = static_cast<uInt>(n);
    do {
      z.next_out = out;
      z.avail_out = sizeof out;
      const int rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) return ByBytes("bad deflate");
      const size_t made = sizeof out - z.avail_out;
      contents.Add(out, made);
      produced += made;
      if (produced > size) return ByBytes("member larger than it says");
    } while (z.avail_out == 0);
  }
  if (produced != size) return ByBytes("member size differs");
  return contents.Hex();
}

Result<std::vector<Member>> ReadZip(int fd, uint64_t file_size) {
  const size_t tail_size = static_cast<size_t>(std::min<uint64_t>(file_size, 65557));
  std::vector<unsigned char> tail(tail_size);
  RETURN_IF_ERROR(ReadAt(fd, file_size - tail_size, tail.data(), tail_size));
  size_t eocd = std::string::npos;
  for (size_t i = tail_size >= 22 ? tail_size - 22 + 1 : 0; i-- > 0;) {
    if (Le(&tail[i], 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) return ByBytes("no zip directory");
  const uint32_t entries = Le(&tail[eocd + 10], 2);
  const uint32_t dir_size = Le(&tail[eocd + 12], 4);
  const uint32_t dir_offset = Le(&tail[eocd + 16], 4);
  if (entries == 0xFFFF || dir_offset == 0xFFFFFFFF) return ByBytes("zip64");
  if (entries > kMaxMembers || uint64_t{dir_offset} + dir_size > file_size ||
      dir_size > (64u << 20)) {
    return ByBytes("bad zip directory");
  }
  std::vector<unsigned char> dir(dir_size);
  RETURN_IF_ERROR(ReadAt(fd, dir_offset, dir.data(), dir_size));
  std::vector<Member> members;
  Budget budget;
  size_t pos = 0;
  for (uint32_t e = 0; e < entries; ++e) {
    if (pos + 46 > dir.size() || Le(&dir[pos], 4) != 0x02014b50) return ByBytes("bad entry");
    const unsigned char* c = &dir[pos];
    const uint32_t method = Le(c + 10, 2), packed = Le(c + 20, 4), size = Le(c + 24, 4);
    const uint32_t name_len = Le(c + 28, 2), extra_len = Le(c + 30, 2), note_len = Le(c + 32, 2);
    const uint32_t unix_mode = Le(c + 38, 4) >> 16, local = Le(c + 42, 4);
    if (pos + 46 + name_len > dir.size()) return ByBytes("bad entry");
    Member m;
    m.name = NormalName(std::string(reinterpret_cast<const char*>(c + 46), name_len));
    pos += 46 + name_len + extra_len + note_len;
    if (method != 0 && method != 8) return ByBytes("zip compression method");
    if (packed == 0xFFFFFFFF || size == 0xFFFFFFFF) return ByBytes("zip64");
    const bool directory =
        !m.name.empty() &&
        std::string_view(reinterpret_cast<const char*>(c + 46), name_len).back() == '/';
    if (directory) continue;
    RETURN_IF_ERROR(budget.Take(size));
    unsigned char lh[30];
    RETURN_IF_ERROR(ReadAt(fd, local, lh, sizeof lh));
    if (Le(lh, 4) != 0x04034b50) return ByBytes("bad local header");
    const uint64_t data = uint64_t{local} + 30 + Le(lh + 26, 2) + Le(lh + 28, 2);
    if (data + packed > file_size) return ByBytes("member past the end");
    m.kind = (unix_mode & 0170000) == 0120000 ? 'l' : 'f';
    m.executable = (unix_mode & 0111) != 0;
    ASSIGN_OR_RETURN(m.hash, HashZipData(fd, data, method, packed, size));
    members.push_back(std::move(m));
  }
  return members;
}

// ---- The digest ------------------------------------------------------------------

std::string DigestOf(const char* format, std::vector<Member> members) {
  std::stable_sort(members.begin(), members.end(),
                   [](const Member& a, const Member& b) { return a.name < b.name; });
  Sha256 all;
  all.Add(std::string("v1 ") + format + "\n");
  for (const Member& m : members) {
    all.Add(m.name);
    all.Add(std::string(1, '\0') + m.kind + (m.executable ? "x" : "-") + '\0' + m.hash + "\n");
  }
  return "content:" + all.Hex();
}

Result<std::string> BytesDigest(int fd) {
  if (::lseek(fd, 0, SEEK_SET) < 0) return Internal("seek failed");
  FileSource file(fd);
  Sha256 bytes;
  char buf[1 << 16];
  for (;;) {
    ASSIGN_OR_RETURN(size_t got, file.Read(buf, sizeof buf));
    if (got == 0) break;
    bytes.Add(buf, got);
  }
  return "bytes:" + bytes.Hex();
}

Result<std::string> ContentDigest(int fd, uint64_t size) {
  unsigned char magic[262] = {};
  const ssize_t n = ::pread(fd, magic, sizeof magic, 0);
  if (n < 0) return Internal("read failed");
  if (n >= 4 && Le(magic, 4) == 0x04034b50) {
    ASSIGN_OR_RETURN(std::vector<Member> members, ReadZip(fd, size));
    return DigestOf("zip", std::move(members));
  }
  if (::lseek(fd, 0, SEEK_SET) < 0) return Internal("seek failed");
  FileSource file(fd);
  if (n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    GzipSource gunzipped(&file);
    ASSIGN_OR_RETURN(std::vector<Member> members, ReadTar(gunzipped));
    // The whole stream, to its end and check: a damaged archive is not digested as the
    // files it still holds.
    Budget trailing;
    for (char rest[1 << 16];;) {
      ASSIGN_OR_RETURN(size_t got, gunzipped.Read(rest, sizeof rest));
      if (got == 0) break;
      RETURN_IF_ERROR(trailing.Take(got));
    }
    return DigestOf("tar", std::move(members));
  }
  if (n >= 262 && std::memcmp(magic + 257, "ustar", 5) == 0) {
    ASSIGN_OR_RETURN(std::vector<Member> members, ReadTar(file));
    return DigestOf("tar", std::move(members));
  }
  return ByBytes("not an archive read here");
}

}  // namespace

Result<std::string> PackageDigest(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound("cannot open " + path + ": " + std::strerror(errno));
  std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* f) {
    ::close(*f);
    delete f;
  });
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return NotFound(path + " is no file");
  Result<std::string> content = ContentDigest(fd, static_cast<uint64_t>(st.st_size));
  if (content.ok() || content.status().code() != kByBytes) return content;
  return BytesDigest(fd);
}

}  // namespace ty::executor::internal
