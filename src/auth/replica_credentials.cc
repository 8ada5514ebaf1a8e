#include "auth/replica_credentials.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "auth/tokens.h"
#include "common/files.h"

namespace ty::auth {

namespace {

constexpr size_t kSecretBytes = 32;
constexpr size_t kMacHexDigits = 32;  // 128 bits of the HMAC.

Status MakeSecret(const std::string& path) {
  unsigned char bytes[kSecretBytes];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return Internal("replica secret: no randomness");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return Status::Ok();  // Another start made it first: use theirs.
    return Internal("replica secret " + path + ": " + std::strerror(errno));
  }
  const bool written = write(fd, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes);
  const bool synced = fsync(fd) == 0;
  close(fd);
  if (!written || !synced) {
    unlink(path.c_str());
    return Internal("replica secret " + path + ": cannot write it");
  }
  return Status::Ok();
}

// Standard base64 -> bytes; nullopt when malformed.
std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0 || text.size() > 4096) return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  size_t padding = text.back() == '=' ? (text[text.size() - 2] == '=' ? 2 : 1) : 0;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

// What follows a Basic scheme (case-insensitive, RFC 7235), without the blanks
// around it; nullopt for another scheme. (Bearer: auth::BearerToken.)
std::optional<std::string_view> AfterBasic(std::string_view header) {
  constexpr std::string_view kScheme = "basic ";
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view rest = header.substr(kScheme.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) {
    rest.remove_suffix(1);
  }
  return rest;
}

}  // namespace

Result<ReplicaCredentials> ReplicaCredentials::Open(const std::string& path) {
  RETURN_IF_ERROR(MakeSecret(path));
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || (st.st_mode & 077) != 0) {
    return Internal("replica secret " + path + " must be a file only its owner reads (0600)");
  }
  ASSIGN_OR_RETURN(std::string secret, ReadFile(path));
  if (secret.size() != kSecretBytes) {
    return Internal("replica secret " + path + " holds " + std::to_string(secret.size()) +
                    " bytes, not " + std::to_string(kSecretBytes) + "; remove it to make another");
  }
  return ReplicaCredentials(std::move(secret));
}

std::string ReplicaCredentials::Mac(std::string_view job_uid) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(job_uid.data()), job_uid.size(), mac, &len);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < kMacHexDigits / 2 && i < len; ++i) {
    hex.push_back(kHex[mac[i] >> 4]);
    hex.push_back(kHex[mac[i] & 15]);
  }
  return hex;
}

std::string ReplicaCredentials::TokenFor(const std::string& job_uid) const {
  return job_uid + "." + Mac(job_uid);
}

std::optional<std::string> ReplicaCredentials::JobOf(std::string_view token) const {
  const size_t dot = token.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || token.size() - dot - 1 != kMacHexDigits) {
    return std::nullopt;
  }
  std::string_view uid = token.substr(0, dot);
  const std::string expected = Mac(uid);
  if (CRYPTO_memcmp(expected.data(), token.data() + dot + 1, kMacHexDigits) != 0) {
    return std::nullopt;
  }
  return std::string(uid);
}

std::string BasicUserinfo(std::string_view authorization) {
  std::optional<std::string_view> basic = AfterBasic(authorization);
  if (!basic) return "";
  std::optional<std::string> pair = Base64Decode(*basic);
  return pair && pair->find(':') != std::string::npos ? *pair : "";
}

std::string ReplicaCredential(std::string_view authorization) {
  if (std::string bearer = BearerToken(authorization); !bearer.empty()) return bearer;
  const std::string pair = BasicUserinfo(authorization);
  return pair.empty() ? "" : pair.substr(pair.find(':') + 1);
}

}  // namespace ty::auth
