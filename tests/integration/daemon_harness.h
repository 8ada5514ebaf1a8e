// Runs the real trainyardd (build/bin/trainyardd) on 127.0.0.1:0 with a temp data
// dir, and talks to it and to the container engine over HTTP with libcurl.
#pragma once

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace ty::testing {

inline constexpr char kTestImage[] = "localhost/trainyard/busybox:latest";
inline const char* EngineSocket() {
  const char* s = std::getenv("TRAINYARD_ENGINE_SOCKET");
  return s && *s ? s : "/run/podman/podman.sock";
}

struct HttpReply {
  long status = 0;
  std::string body;
  std::string content_type;
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// One request; `unix_socket` non-empty talks to the engine.
inline HttpReply Http(const std::string& method, const std::string& url,
                      const std::string& body = "", bool send_body = true,
                      const std::string& unix_socket = "", long timeout_s = 60,
                      const std::string& bearer = "") {
  HttpReply reply;
  CURL* curl = curl_easy_init();
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_s);
  if (!unix_socket.empty()) curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, unix_socket.c_str());
  struct curl_slist* headers = nullptr;
  if (!bearer.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + bearer).c_str());
  if (method == "POST" || method == "PATCH") {
    if (send_body) {
      headers = curl_slist_append(headers, "Content-Type: application/json");
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    } else {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L);
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
    }
  }
  if (headers) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* out) {
        static_cast<std::string*>(out)->append(p, s * n);
        return s * n;
      });
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
    char* ct = nullptr;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct);
    if (ct) reply.content_type = ct;
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return reply;
}

// build/ of this checkout, or TRAINYARD_BINARY_DIR where the binaries were copied to
// another machine (the GPU checks run on a lent machine without the build tree).
inline std::string BinaryDir() {
  const char* dir = std::getenv("TRAINYARD_BINARY_DIR");
  return dir && *dir ? dir : TY_BINARY_DIR;
}

inline bool EngineAnswers() {
  return Http("GET", "http://d/_ping", "", true, EngineSocket(), 3).status == 200;
}

inline bool EngineHasImage(const std::string& image) {
  return Http("GET", "http://d/v1.41/images/" + image + "/json", "", true, EngineSocket(), 10)
             .status == 200;
}

// What the registry tests need and this machine lacks ("" = nothing): the engine,
// the test image and docker-registry.
inline std::string MissingForRegistryTests() {
  if (!EngineAnswers() || !EngineHasImage(kTestImage))
    return "engine or " + std::string(kTestImage);
  if (!std::filesystem::exists("/usr/bin/docker-registry")) return "docker-registry";
  return "";
}

// An address of the test's own for a daemon's registry: 127.77.X.Y on port 80 (a
// name without a port is reached on port 80).
inline std::string RandomRegistryAddress(std::mt19937& rng) {
  return "127.77." + std::to_string(1 + rng() % 254) + "." + std::to_string(1 + rng() % 254) +
         ":80";
}

// The engine's list of containers (all states) carrying every label filter
// ("k" or "k=v"); not an array when the engine did not answer.
inline nlohmann::json EngineContainers(const std::vector<std::string>& labels) {
  std::string filters = nlohmann::json{{"label", labels}}.dump();
  CURL* c = curl_easy_init();
  char* enc = curl_easy_escape(c, filters.c_str(), 0);
  std::string url = std::string("http://d/v1.41/containers/json?all=true&filters=") + enc;
  curl_free(enc);
  curl_easy_cleanup(c);
  return Http("GET", url, "", true, EngineSocket(), 10).Json();
}

// Containers the engine still has for a job (by Trainyard's label).
inline size_t ContainersOfJob(const std::string& uid) {
  auto j = EngineContainers({"trainyard.job=" + uid});
  return j.is_array() ? j.size() : 999;
}

// Containers of a job once its cleanup has had up to `timeout_s` to run (cleanup
// starts right after the job reaches a terminal state).
inline size_t ContainersOfJobAfterCleanup(const std::string& uid, int timeout_s = 10) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  size_t n = ContainersOfJob(uid);
  while (n != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    n = ContainersOfJob(uid);
  }
  return n;
}

// The id at the end of a job resource's `name`.
inline std::string IdOf(const nlohmann::json& job) {
  std::string name = job.value("name", "");
  return name.substr(name.rfind('/') + 1);
}

class Daemon {
 public:
  // kRelative starts the daemon in its temp dir with `--data-dir data`, as a user
  // typing a relative path does.
  // kOwnDisk: an absolute data directory on a disk of its own (a 256 MiB tmpfs; root
  // only, else an ordinary directory: own_disk() says which) that FillDisk fills. Its
  // buckets and trials directories are bind mounts of the host's disk, so replicas
  // never see it full: only the daemon's store and logs do.
  enum class DataDirArg { kAbsolute, kRelative, kOwnDisk };
  explicit Daemon(std::vector<std::string> extra_args = {},
                  DataDirArg data_dir_arg = DataDirArg::kAbsolute)
      : data_dir_arg_(data_dir_arg) {
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-it-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    data_dir_ = (dir_ / "data").string();
    if (data_dir_arg_ == DataDirArg::kOwnDisk && geteuid() == 0) MountOwnDisk();
    Start(std::move(extra_args));
  }
  ~Daemon() {
    Stop();
    RemoveInstanceContainers();
    if (own_disk_) Shell("umount -R " + data_dir_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  bool own_disk() const { return own_disk_; }
  // Fills the data directory's own disk to the last byte (a ballast file); FreeDisk
  // removes it. Nothing without an own disk.
  void FillDisk() {
    if (!own_disk_) return;
    std::ofstream ballast(data_dir_ + "/ballast", std::ios::binary);
    const std::string mib(1 << 20, '\0');
    while (ballast.write(mib.data(), static_cast<std::streamsize>(mib.size()))) ballast.flush();
    ballast.clear();
    const std::string byte(1, '\0');  // The tail below a MiB, byte by byte.
    for (int i = 0; i < (1 << 20) && ballast.write(byte.data(), 1) && ballast.flush(); ++i) {
    }
  }
  void FreeDisk() {
    std::error_code ec;
    std::filesystem::remove(data_dir_ + "/ballast", ec);
  }

  void Start(std::vector<std::string> extra_args = {}) {
    std::string port_file = (dir_ / "port").string();
    std::filesystem::remove(port_file);
    std::vector<std::string> args = {BinaryDir() + "/bin/trainyardd",
                                     "--port-file",
                                     port_file,
                                     "--data-dir",
                                     data_dir_arg_ == DataDirArg::kRelative ? "data" : data_dir_,
                                     "--engine-socket",
                                     EngineSocket()};
    // Loopback unless a test listens wider (it needs tokens then); 127.0.0.1 reaches both.
    if (std::find(extra_args.begin(), extra_args.end(), "--listen") == extra_args.end()) {
      args.insert(args.end(), {"--listen", "127.0.0.1:0"});
    }
    // A short grace keeps tests fast unless a test asks for its own.
    if (std::find(extra_args.begin(), extra_args.end(), "--stop-grace") == extra_args.end()) {
      args.insert(args.end(), {"--stop-grace", "2"});
    }
    // No registry unless a test asks for one at an address of its own.
    if (std::find(extra_args.begin(), extra_args.end(), "--registry") == extra_args.end()) {
      args.insert(args.end(), {"--registry", ""});
    }
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::string log = (dir_ / "daemon.log").string();
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = freopen(log.c_str(), "a", stderr);
      (void)f;
      dup2(fileno(stderr), 1);
      if (data_dir_arg_ == DataDirArg::kRelative && chdir(dir_.c_str()) != 0) _exit(126);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(port_file);
      int port = 0;
      if (in >> port && port > 0) {
        base_ = "http://127.0.0.1:" + std::to_string(port);
        return;
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "trainyardd did not start; log:\n" << Log();
  }

  // What a test left running of this daemon (a daemon stops without stopping its
  // replicas): the jobs' containers, then the network slot holders they joined.
  void RemoveInstanceContainers() {
    std::string instance = Instance();
    if (instance.empty()) return;
    for (std::vector<std::string> labels :
         {std::vector<std::string>{"trainyard.job", "trainyard.instance=" + instance},
          std::vector<std::string>{"trainyard.instance=" + instance}}) {
      nlohmann::json list = EngineContainers(labels);
      if (!list.is_array()) continue;
      for (const auto& c : list) {
        Http("DELETE", "http://d/v1.41/containers/" + c.value("Id", "") + "?force=true&v=true", "",
             true, EngineSocket(), 30);
      }
    }
  }

  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  // kill -9: the daemon dies between two instructions, nothing is flushed or stopped.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  bool Alive() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
  // The daemon's resident memory now (VmRSS), in KiB; 0 when it does not run.
  long RssKb() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; pid_ > 0 && std::getline(status, line);) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    }
    return 0;
  }

  static void Shell(const std::string& command) {
    if (std::system(command.c_str()) != 0) ADD_FAILURE() << "failed: " << command;
  }
  void MountOwnDisk() {
    std::filesystem::create_directories(data_dir_);
    Shell("mount -t tmpfs -o size=256m tmpfs " + data_dir_);
    for (const char* dir : {"buckets", "trials"}) {
      const std::string host = (dir_ / (std::string(dir) + "-host")).string();
      std::filesystem::create_directories(host);
      std::filesystem::create_directories(data_dir_ + "/" + dir);
      Shell("mount --bind " + host + " " + data_dir_ + "/" + dir);
    }
    own_disk_ = true;
  }

  std::string Log() const {
    std::ifstream in(dir_ / "daemon.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  const std::string& base() const { return base_; }

  // Warm pool (--warm-pool): sandboxes of this daemon not taken by any job, and
  // those that became replicas of job `uid` (their claim names its replicas).
  size_t WarmSandboxes() { return Sandboxes("").size(); }
  // Every sandbox container of this daemon, taken or not.
  size_t SandboxContainers() {
    auto list = EngineContainers({"trainyard.sandbox", "trainyard.instance=" + Instance()});
    return list.is_array() ? list.size() : 999;
  }
  size_t WarmReplicasOf(const std::string& uid) { return Sandboxes("ty-" + uid + "-").size(); }
  const std::string& data_dir() const { return data_dir_; }
  pid_t pid() const { return pid_; }  // The daemon's process, to freeze it (SIGSTOP).

  // Every later request of Get/Post/Delete carries `token` (a daemon with `tokens:`).
  void set_token(std::string token) { token_ = std::move(token); }
  HttpReply Get(const std::string& path) {
    return Http("GET", base_ + path, "", true, "", 60, token_);
  }
  HttpReply Post(const std::string& path, const std::string& body) {
    return Http("POST", base_ + path, body, true, "", 60, token_);
  }
  HttpReply Delete(const std::string& path) {
    return Http("DELETE", base_ + path, "", true, "", 60, token_);
  }

  // Polls GET `path` until `state` holds or `timeout_s` passes; returns the last body.
  nlohmann::json WaitForField(const std::string& path, const std::string& field,
                              const std::vector<std::string>& wanted, int timeout_s = 60) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    nlohmann::json last;
    while (std::chrono::steady_clock::now() < deadline) {
      last = Get(path).Json();
      if (last.is_object() && last.contains(field)) {
        for (const auto& w : wanted) {
          if (last[field] == w) return last;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return last;
  }

  // The daemon's instance id (its containers' trainyard.instance label).
  std::string Instance() const {
    std::ifstream id_file(data_dir_ + "/instance-id");
    std::string instance;
    id_file >> instance;
    return instance;
  }

 private:
  // Sandbox containers of this daemon whose claim.json contains `needle`; "" =
  // those without a claim.
  std::vector<std::string> Sandboxes(const std::string& needle) {
    auto list = EngineContainers({"trainyard.sandbox", "trainyard.instance=" + Instance()});
    std::vector<std::string> out;
    if (!list.is_array()) return out;
    for (const auto& ctr : list) {
      std::string name = ctr["Labels"].value("trainyard.sandbox", "");
      std::ifstream claim(data_dir_ + "/sandboxes/" + name + "/claim.json");
      std::string text((std::istreambuf_iterator<char>(claim)), std::istreambuf_iterator<char>());
      bool match = needle.empty() ? !claim.is_open() : text.find(needle) != std::string::npos;
      if (match) out.push_back(name);
    }
    return out;
  }

  std::filesystem::path dir_;
  std::string data_dir_;
  DataDirArg data_dir_arg_ = DataDirArg::kAbsolute;
  bool own_disk_ = false;  // data_dir_ is a tmpfs of its own (kOwnDisk, as root).
  std::string base_;
  std::string token_;  // Sent as a bearer token when set (set_token).
  pid_t pid_ = -1;
  static inline int counter_ = 0;
};

}  // namespace ty::testing
