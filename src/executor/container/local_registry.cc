// The daemon's supervised registry; see local_registry.h.
#include "executor/container/local_registry.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

namespace ty::executor {
namespace {

size_t DiscardBody(char*, size_t size, size_t nmemb, void*) { return size * nmemb; }

// A restart loop that never spins: waits grow to this while the registry keeps exiting.
constexpr int kMaxRestartWaitMs = 30000;

}  // namespace

LocalRegistry::LocalRegistry(Options options) : options_(std::move(options)) {
  std::filesystem::path storage(options_.storage_dir);
  config_path_ = (storage.parent_path() / (options_.name + ".yml")).string();
  log_path_ = (storage.parent_path() / (options_.name + ".log")).string();
}

LocalRegistry::~LocalRegistry() { Stop(); }

long LocalRegistry::Probe(const std::string& address, long timeout_ms, bool https) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return 0;
  const std::string url = (https ? "https://" : "http://") + address + "/v2/";
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);  // Is it up, not who it is.
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");  // Loopback: never through a proxy.
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &DiscardBody);
  long status = 0;
  if (curl_easy_perform(curl) != CURLE_OK ||
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK) {
    status = 0;
  }
  curl_easy_cleanup(curl);
  return status;
}

bool LocalRegistry::Answers(const std::string& address, long timeout_ms, bool https) {
  const long status = Probe(address, timeout_ms, https);
  return status == 200 || status == 401;
}

Status LocalRegistry::Start() {
  const size_t colon = options_.address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == options_.address.size()) {
    return InvalidArgument("registry: \"" + options_.address + "\" is not HOST:PORT");
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.storage_dir, ec);
  if (ec) return Internal("cannot create " + options_.storage_dir + ": " + ec.message());
  RETURN_IF_ERROR(WriteConfig());
  supervisor_ = std::thread([this] { Supervise(); });
  return Status::Ok();
}

void LocalRegistry::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (pid_t pid = child_.load(); pid > 0) kill(pid, SIGTERM);
  if (supervisor_.joinable()) supervisor_.join();
}

Status LocalRegistry::WriteConfig() const {
  std::ofstream out(config_path_, std::ios::trunc);
  out << "version: 0.1\n"
      << "log:\n  level: warn\n  accesslog:\n    disabled: true\n"
      << "storage:\n  filesystem:\n    rootdirectory: " << options_.storage_dir << "\n"
      << "  delete:\n    enabled: true\n"
      << "http:\n  addr: " << options_.address << "\n";
  if (!options_.tls.cert_path.empty()) {
    out << "  tls:\n    certificate: \"" << options_.tls.cert_path << "\"\n    key: \""
        << options_.tls.key_path << "\"\n";
  }
  const Options::TokenAuth& auth = options_.token_auth;
  if (!auth.realm.empty()) {
    // Quoted: the values are the daemon's own (a URL, fixed names, a data-dir path).
    out << "auth:\n  token:\n"
        << "    realm: \"" << auth.realm << "\"\n"
        << "    service: \"" << auth.service << "\"\n"
        << "    issuer: \"" << auth.issuer << "\"\n"
        << "    rootcertbundle: \"" << auth.cert_path << "\"\n";
  }
  if (!out.flush()) return Internal("cannot write " + config_path_);
  return Status::Ok();
}

pid_t LocalRegistry::Spawn() const {
  // Prepared before fork(): only async-signal-safe calls may follow it here.
  std::vector<std::string> args = {options_.binary, "serve", config_path_};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Not the daemon's environment: the registry reads every REGISTRY_* variable as a
  // setting (REGISTRY_AUTH_FILE, which podman users export, stopped it at start).
  std::string path = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {path.data(), nullptr};
  const char* log = log_path_.c_str();
  pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // Never outlives the daemon.
  int out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out >= 0) {
    dup2(out, 1);
    dup2(out, 2);
  }
  if (in >= 0) dup2(in, 0);
  execve(argv[0], argv.data(), envp);
  _exit(127);
}

bool LocalRegistry::SleepUnlessStopping(int ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return !wake_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
}

void LocalRegistry::Supervise() {
  int wait_ms = 1000;
  bool said_shared = false;
  while (true) {
    const long found = Probe(options_.address, 1000, !options_.tls.cert_path.empty());
    if (found == 200 || found == 401) {  // Someone else's: use it while it answers.
      if (!said_shared) {
        spdlog::info("registry: using the one answering at {}", options_.address);
        if (found == 200 && !options_.token_auth.realm.empty()) {
          spdlog::warn(
              "registry: the one at {} takes no tokens: anyone reaching it pushes and pulls "
              "any project's images (stop it, and this daemon starts its own with tokens)",
              options_.address);
        }
        said_shared = true;
      }
      if (!SleepUnlessStopping(5000)) return;
      continue;
    }
    said_shared = false;
    if (access(options_.binary.c_str(), X_OK) != 0) {
      spdlog::warn(
          "registry: {} is missing (scripts/setup installs it); gcr.io and pkg.dev "
          "images cannot be pulled until a registry answers at {}",
          options_.binary, options_.address);
      if (!SleepUnlessStopping(kMaxRestartWaitMs)) return;
      continue;
    }
    pid_t pid = Spawn();
    if (pid < 0) {
      spdlog::warn("registry: cannot start {}", options_.binary);
      if (!SleepUnlessStopping(wait_ms)) return;
      continue;
    }
    child_ = pid;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) kill(pid, SIGTERM);  // Stop() ran before child_ was set.
    }
    spdlog::info("registry: serving gcr.io and pkg.dev names at {} (images in {})",
                 options_.address, options_.storage_dir);
    const auto started = std::chrono::steady_clock::now();
    int status = 0;
    waitpid(pid, &status, 0);  // Stop() ends it with SIGTERM.
    child_ = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    const bool quick = std::chrono::steady_clock::now() - started < std::chrono::seconds(10);
    wait_ms = quick ? std::min(wait_ms * 2, kMaxRestartWaitMs) : 1000;
    spdlog::warn("registry: {} exited (status {}); starting it again in {} ms (its log: {})",
                 options_.binary, status, wait_ms, log_path_);
    if (!SleepUnlessStopping(wait_ms)) return;
  }
}

}  // namespace ty::executor
