#include "executor/container/registry_digest.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/files.h"

namespace ty::executor::internal {
namespace {

// Every manifest kind a tag may name; the registry answers the digest of the one stored.
constexpr char kAccept[] =
    "Accept: application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json";
constexpr size_t kMaxTokenAnswer = 64 * 1024;

struct Answer {
  long status = 0;
  std::map<std::string, std::string> headers;  // Lower-case names.
  std::string body;
};

size_t OnHeader(char* data, size_t size, size_t n, void* out) {
  std::string line(data, size * n);
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string value = line.substr(colon + 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front())))
      value.erase(0, 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
      value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = value;
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() + size * n > kMaxTokenAnswer) return 0;  // Not a token answer: stop.
  body->append(data, size * n);
  return size * n;
}

Result<Answer> Fetch(const std::string& url, bool head, const std::vector<std::string>& headers,
                     const RegistryLogin* basic, long timeout_ms) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Internal("curl_easy_init failed");
  Answer a;
  curl_slist* list = nullptr;
  for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_NOBODY, head ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &a.headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &a.body);
  if (basic != nullptr && !basic->username.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, basic->username.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, basic->password.c_str());
  }
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.status);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) return Unavailable(url + ": " + curl_easy_strerror(rc));
  return a;
}

// A token for the challenge, from its realm.
Result<std::string> TokenFor(const std::map<std::string, std::string>& challenge,
                             const RegistryLogin& login, long timeout_ms) {
  auto realm = challenge.find("realm");
  if (realm == challenge.end()) return Unavailable("the registry's challenge names no realm");
  std::string url = realm->second;
  char sep = url.find('?') == std::string::npos ? '?' : '&';
  for (const char* key : {"service", "scope"}) {
    auto it = challenge.find(key);
    if (it == challenge.end()) continue;
    url += sep + std::string(key) + "=" + UrlEncode(it->second);
    sep = '&';
  }
  ASSIGN_OR_RETURN(Answer a, Fetch(url, /*head=*/false, {}, &login, timeout_ms));
  if (a.status != 200) {
    return Unavailable("the registry's token service answered " + std::to_string(a.status));
  }
  nlohmann::json j = nlohmann::json::parse(a.body, nullptr, /*allow_exceptions=*/false);
  for (const char* key : {"token", "access_token"}) {
    if (j.is_object() && j.contains(key) && j[key].is_string()) return j[key].get<std::string>();
  }
  return Unavailable("the registry's token service gave no token");
}

}  // namespace

std::map<std::string, std::string> BearerChallenge(std::string_view header) {
  std::map<std::string, std::string> out;
  if (header.size() < 7 || header.substr(0, 7) != "Bearer ") return out;
  std::string_view rest = header.substr(7);
  while (!rest.empty()) {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == ',')) rest.remove_prefix(1);
    const size_t eq = rest.find('=');
    if (eq == std::string_view::npos) break;
    std::string key(rest.substr(0, eq));
    rest.remove_prefix(eq + 1);
    std::string value;
    if (!rest.empty() && rest.front() == '"') {
      const size_t close = rest.find('"', 1);
      if (close == std::string_view::npos) break;
      value = std::string(rest.substr(1, close - 1));
      rest.remove_prefix(close + 1);
    } else {
      const size_t comma = rest.find(',');
      value = std::string(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma);
    }
    out[key] = value;
  }
  return out;
}

Result<std::string> RegistryManifestDigest(const std::string& reference, const RegistryLogin& login,
                                           long timeout_ms) {
  const size_t slash = reference.find('/');
  const size_t colon = reference.rfind(':');
  if (slash == std::string::npos || colon == std::string::npos || colon < slash) {
    return InvalidArgument("not HOST/PATH:TAG: " + reference);
  }
  const std::string url = "http://" + reference.substr(0, slash) + "/v2/" +
                          reference.substr(slash + 1, colon - slash - 1) + "/manifests/" +
                          reference.substr(colon + 1);
  ASSIGN_OR_RETURN(Answer a, Fetch(url, /*head=*/true, {kAccept}, nullptr, timeout_ms));
  if (a.status == 401) {
    std::map<std::string, std::string> challenge = BearerChallenge(a.headers["www-authenticate"]);
    ASSIGN_OR_RETURN(std::string token, TokenFor(challenge, login, timeout_ms));
    ASSIGN_OR_RETURN(a, Fetch(url, /*head=*/true, {kAccept, "Authorization: Bearer " + token},
                              nullptr, timeout_ms));
  }
  if (a.status == 404) return NotFound("the registry has no " + reference);
  auto digest = a.headers.find("docker-content-digest");
  if (a.status != 200 || digest == a.headers.end()) {
    return Unavailable("the registry answered " + std::to_string(a.status) + " for " + reference);
  }
  return digest->second;
}

}  // namespace ty::executor::internal
