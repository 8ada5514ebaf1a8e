// libcurl implementation of HttpClient. Streaming uses a write callback that splits
// the body on '\n' as chunks arrive, so a follow request prints lines live.
#include "cli/http_client.h"

#include <curl/curl.h>

#include <cctype>
#include <cstdio>

namespace ty::cli {
namespace {

// curl_global_init is not thread-safe; the CLI calls it once, before any request.
struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
};

size_t AppendToString(char* data, size_t size, size_t nmemb, void* user) {
  static_cast<std::string*>(user)->append(data, size * nmemb);
  return size * nmemb;
}

struct StreamState {
  CURL* curl = nullptr;
  const std::function<bool(std::string_view)>* on_line = nullptr;
  std::string pending;     // Partial line carried over to the next chunk.
  std::string error_body;  // Whole body when the status is not 2xx.
  bool status_known = false;
  bool ok_status = false;
  bool stopped = false;  // `on_line` asked to stop.
};

size_t StreamWrite(char* data, size_t size, size_t nmemb, void* user) {
  auto* st = static_cast<StreamState*>(user);
  const size_t n = size * nmemb;
  if (!st->status_known) {
    long code = 0;
    curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &code);
    st->status_known = true;
    st->ok_status = code >= 200 && code < 300;
  }
  if (!st->ok_status) {
    st->error_body.append(data, n);
    return n;
  }
  st->pending.append(data, n);
  size_t start = 0;
  for (size_t nl; (nl = st->pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(st->pending.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;  // Keep-alive blank lines carry nothing.
    if (!(*st->on_line)(line)) {
      st->stopped = true;
      return 0;  // Aborts the transfer (CURLE_WRITE_ERROR), which we then ignore.
    }
  }
  st->pending.erase(0, start);
  return n;
}

Status TransportError(CURLcode code, const std::string& url, const char* errbuf) {
  std::string detail = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(code);
  if (code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST) {
    // Name the endpoint (scheme://host:port), not the whole request path.
    size_t scheme = url.find("://");
    size_t path = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
    std::string endpoint = path == std::string::npos ? url : url.substr(0, path);
    return Unavailable("could not connect to the Trainyard API at " + endpoint + " (" + detail +
                       "). Is trainyardd running? Start it with `build/bin/trainyardd "
                       "--listen 127.0.0.1:8080` (or scripts/quickstart), or point the CLI "
                       "elsewhere with --api-endpoint or TRAINYARD_API.");
  }
  return Unavailable("request to " + url + " failed: " + detail);
}

}  // namespace

CurlHttpClient::CurlHttpClient() {
  static CurlGlobal global;
  curl_ = curl_easy_init();
}

CurlHttpClient::~CurlHttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

Result<HttpResponse> CurlHttpClient::Send(const std::string& method, const std::string& url,
                                          const std::string& body) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return Internal("curl_easy_init failed");
  curl_easy_reset(curl);
  char errbuf[CURL_ERROR_SIZE] = {0};
  HttpResponse response;
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  if (!body.empty()) headers = curl_slist_append(headers, "Content-Type: application/json");
  if (!token_.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token_).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  if (!ca_file_.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file_.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "POST" || !body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendToString);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 120000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) return TransportError(rc, url, errbuf);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

Result<HttpResponse> CurlHttpClient::StreamLines(
    const std::string& url, const std::function<bool(std::string_view)>& on_line) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return Internal("curl_easy_init failed");
  curl_easy_reset(curl);
  char errbuf[CURL_ERROR_SIZE] = {0};
  StreamState st;
  st.curl = curl;
  st.on_line = &on_line;
  curl_slist* headers = curl_slist_append(nullptr, "Accept: application/x-ndjson");
  if (!token_.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token_).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  if (!ca_file_.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file_.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, StreamWrite);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // A follow stream may be silent for a long time while a job computes; only a dead
  // connection (no bytes for 10 minutes, keep-alives included) counts as dropped.
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 600L);
  CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  HttpResponse response;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  if (st.stopped) return response;
  if (rc != CURLE_OK) return TransportError(rc, url, errbuf);
  if (!st.ok_status && st.status_known) {
    response.body = std::move(st.error_body);
    return response;
  }
  // A last record without a trailing newline still counts.
  if (!st.pending.empty()) on_line(st.pending);
  return response;
}

}  // namespace ty::cli
