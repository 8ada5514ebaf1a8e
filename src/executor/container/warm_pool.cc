#include "executor/container/warm_pool.h"

#include <fcntl.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/files.h"
#include "executor/background_work.h"
#include "executor/container/container_body.h"
#include "executor/container/container_executor.h"

namespace ty::executor {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using internal::FirstError;
using internal::ForEachConcurrently;

constexpr char kInitInContainer[] = "/.trainyard/init";
constexpr char kRunInContainer[] = "/.trainyard/run";
constexpr char kSandboxPrefix[] = "ty-sbx-";
// How often the builder looks for gangs past their idle time.
constexpr int kExpiryCheckSeconds = 30;

// Rewrites `path` in place: the file is bind-mounted into a container, which
// keeps seeing the inode it mounted, so a rename would not reach it.
Status WriteFileInPlace(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return Internal("cannot write " + path);
  bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  ::close(fd);
  return ok ? Status::Ok() : Internal("cannot write " + path);
}

// Where the sandbox's init runs now (host pid, UTS namespace inode), so that
// SetHostname can later check it is still that process.
void RecordProcess(EngineClient* engine, Sandbox* s) {
  Result<ContainerState> state = engine->InspectContainer(s->id);
  struct stat st {};
  if (state.ok() && state->pid > 0 &&
      ::stat(("/proc/" + std::to_string(state->pid) + "/ns/uts").c_str(), &st) == 0) {
    s->pid = state->pid;
    s->uts_inode = st.st_ino;
  }
}

}  // namespace

WarmPool::WarmPool(EngineClient* engine, WarmPoolOptions options)
    : engine_(engine), options_(std::move(options)), clock_(options_.clock) {
  if (enabled()) builder_ = std::thread([this] { RunBuilder(); });
}

WarmPool::~WarmPool() {
  std::vector<WarmGang> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (builder_.joinable()) builder_.join();
  left.swap(ready_);
  ForEachConcurrently(left.size(), [&](size_t i) {
    Discard(left[i]);
    return true;
  });
}

std::string WarmPool::ShapeKey(const AttemptSpec& attempt) {
  // A shell (enableWebAccess) is an exec into the replica's container, and a warm
  // sandbox's container was made before the job existed: the shell would have the
  // sandbox's environment, not the replica's (CLUSTER_SPEC, AIP_*, the job's env),
  // which only the init's child gets. Such attempts start cold.
  if (attempt.replicas.empty() || attempt.shells) return "";
  std::ostringstream key;
  key << (attempt.peers_talk ? "own-network" : "default") << '\n';
  for (const ReplicaLaunch& r : attempt.replicas) {
    if (r.accelerator_count > 0) return "";
    key << r.image << '\t' << r.cpu_limit << '\t' << r.memory_limit_gb;
    for (const Mount& m : r.mounts) {
      key << '\t' << m.host_path << ':' << m.container_path << (m.read_only ? ":ro" : "");
    }
    key << '\n';
  }
  return key.str();
}

std::optional<WarmGang> WarmPool::Take(const AttemptSpec& attempt) {
  if (!enabled()) return std::nullopt;
  std::string key = ShapeKey(attempt);
  if (key.empty()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it =
      std::find_if(ready_.begin(), ready_.end(), [&](const WarmGang& g) { return g.key == key; });
  if (it == ready_.end()) return std::nullopt;
  WarmGang gang = std::move(*it);
  ready_.erase(it);
  return gang;
}

Status WarmPool::BuildNow(const AttemptSpec& attempt) {
  if (!enabled() || ShapeKey(attempt).empty())
    return FailedPrecondition("no warm pool for this shape");
  ASSIGN_OR_RETURN(WarmGang gang, Build(attempt));
  std::lock_guard<std::mutex> lock(mu_);
  ready_.push_back(std::move(gang));
  return Status::Ok();
}

size_t WarmPool::ReadySandboxes() {
  std::lock_guard<std::mutex> lock(mu_);
  return SandboxesLocked();
}

void WarmPool::Refill(const AttemptSpec& attempt) {
  if (!enabled() || !options_.refill) return;
  std::string key = ShapeKey(attempt);
  if (key.empty() || attempt.replicas.size() > static_cast<size_t>(options_.max_sandboxes)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || building_key_ == key) return;
    for (const WarmGang& g : ready_) {
      if (g.key == key) return;
    }
    for (const Wanted& w : wanted_) {
      if (w.key == key) return;
    }
    wanted_.push_back(
        {key, attempt,
         std::chrono::steady_clock::now() + std::chrono::microseconds(options_.refill_delay)});
  }
  cv_.notify_all();
}

size_t WarmPool::SandboxesLocked() const {
  size_t n = 0;
  for (const WarmGang& g : ready_) n += g.sandboxes.size();
  return n;
}

std::vector<WarmGang> WarmPool::EvictLocked(size_t incoming) {
  std::vector<WarmGang> out;
  TimeMicros now = clock_->Now();
  for (auto it = ready_.begin(); it != ready_.end();) {
    if (now - it->ready_time > options_.idle_ttl) {
      out.push_back(std::move(*it));
      it = ready_.erase(it);
    } else {
      ++it;
    }
  }
  // ready_ is in the order the gangs were made: the front is the oldest.
  while (!ready_.empty() &&
         SandboxesLocked() + incoming > static_cast<size_t>(options_.max_sandboxes)) {
    out.push_back(std::move(ready_.front()));
    ready_.erase(ready_.begin());
  }
  return out;
}

void WarmPool::RunBuilder() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::seconds(kExpiryCheckSeconds),
                 [&] { return stopping_ || !wanted_.empty(); });
    if (stopping_) break;
    if (!wanted_.empty() && std::chrono::steady_clock::now() < wanted_.front().not_before) {
      cv_.wait_until(lock, wanted_.front().not_before, [&] { return stopping_; });
      if (stopping_) break;
    }
    std::optional<Wanted> wanted;
    if (!wanted_.empty()) {
      wanted = std::move(wanted_.front());
      wanted_.pop_front();
      building_key_ = wanted->key;
    }
    std::vector<WarmGang> victims = EvictLocked(wanted ? wanted->shape.replicas.size() : 0);
    lock.unlock();
    ForEachConcurrently(victims.size(), [&](size_t i) {
      Discard(victims[i]);
      return true;
    });
    if (!wanted) {  // Only the idle check was due.
      lock.lock();
      continue;
    }
    Result<WarmGang> gang = Build(wanted->shape);
    if (!gang.ok()) spdlog::warn("warm pool: {}", gang.status().ToString());
    lock.lock();
    building_key_.clear();
    if (gang.ok()) {
      if (stopping_) {
        lock.unlock();
        Discard(*gang);
        lock.lock();
      } else {
        ready_.push_back(std::move(*gang));
      }
    }
  }
}

Result<std::vector<std::string>> WarmPool::CreateGangNetwork(
    const std::map<std::string, std::string>& labels, size_t n, WarmGang* gang) {
  gang->network = kSandboxPrefix + gang->id;
  std::map<std::string, std::string> net_labels = labels;
  net_labels[kLabelSandbox] = gang->network;
  RETURN_IF_ERROR(engine_->CreateNetwork(gang->network, net_labels));
  Result<std::vector<NetworkSubnet>> subnets = engine_->NetworkSubnets(gang->network);
  if (subnets.ok()) {
    for (const NetworkSubnet& s : *subnets) {
      auto picked = ContainerExecutor::PickReplicaAddresses(s.subnet, s.gateway, n);
      if (picked.ok()) return std::move(picked).value();
    }
  }
  return ResourceExhausted("warm pool: no room for " + std::to_string(n) + " fixed addresses on " +
                           gang->network);
}

Status WarmPool::CreateSandbox(const ReplicaLaunch& r, const std::string& network,
                               const std::map<std::string, std::string>& labels, Sandbox* s) {
  std::error_code ec;
  fs::create_directories(s->dir + "/run", ec);
  ::chmod(s->dir.c_str(), 0755);
  ::chmod((s->dir + "/run").c_str(), 0755);
  if (!network.empty() && !ec) {
    // Filled in when the gang is taken; mounted now, so it must exist.
    std::ofstream(s->dir + "/hosts") << "127.0.0.1\tlocalhost\n::1\tlocalhost\n";
  }
  if (ec) return Internal("warm pool: cannot create " + s->dir + ": " + ec.message());
  // The same body as a cold replica's, but its first process is the sandbox init.
  internal::ContainerBody body;
  body.image = r.image;
  body.hostname = s->name;
  body.entrypoint = std::vector<std::string>{kInitInContainer};
  body.cmd = std::vector<std::string>{};
  body.labels = labels;
  body.labels[kLabelSandbox] = s->name;
  body.labels[kLabelSandboxNetwork] = network;
  internal::ApplyGrant(r, &body);  // Limits (a warm shape has no GPUs).
  internal::AddMounts(r.mounts, ContainerExecutor::kReplicaBucketRoot, &body);
  body.binds.push_back(options_.init_path + ":" + kInitInContainer + ":ro");
  body.binds.push_back(s->dir + "/run:" + kRunInContainer + ":ro");
  if (!network.empty()) body.binds.push_back(s->dir + "/hosts:/etc/hosts");
  body.network = network;
  body.address = s->address;
  body.userns_base = options_.userns_base;
  Result<std::string> id =
      body.userns_base > 0
          ? engine_->CreateContainerLibpod(s->name, internal::RenderLibpodBody(body, s->name, ""))
          : engine_->CreateContainer(s->name, internal::RenderContainerBody(body));
  if (!id.ok()) return id.status().WithContext("warm pool: create " + s->name);
  s->id = *id;
  return Status::Ok();
}

Result<WarmGang> WarmPool::Build(const AttemptSpec& shape) {
  WarmGang gang;
  gang.id = internal::UniqueHexId(*options_.random);
  gang.key = ShapeKey(shape);
  const size_t n = shape.replicas.size();
  std::map<std::string, std::string> image_ids;
  for (const ReplicaLaunch& r : shape.replicas) {
    if (image_ids.count(r.image)) continue;
    ASSIGN_OR_RETURN(ImageConfig config, engine_->InspectImage(r.image));
    image_ids[r.image] = config.id;
  }
  std::map<std::string, std::string> labels;
  if (!options_.instance.empty()) labels[kLabelInstance] = options_.instance;
  std::vector<std::string> addresses;
  if (shape.peers_talk) {
    Result<std::vector<std::string>> made = CreateGangNetwork(labels, n, &gang);
    if (!made.ok()) {
      Discard(gang);
      return made.status();
    }
    addresses = std::move(made).value();
  }
  gang.sandboxes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Sandbox& s = gang.sandboxes[i];
    s.name = kSandboxPrefix + gang.id + "-" + std::to_string(i);
    s.dir = options_.dir + "/" + s.name;
    s.image_id = image_ids[shape.replicas[i].image];
    if (!addresses.empty()) s.address = addresses[i];
  }
  std::vector<Status> results(n);
  ForEachConcurrently(n, [&](size_t i) {
    results[i] = CreateSandbox(shape.replicas[i], gang.network, labels, &gang.sandboxes[i]);
    return results[i].ok();
  });
  if (Status s = FirstError(results); !s.ok()) {
    Discard(gang);
    return s;
  }
  ForEachConcurrently(n, [&](size_t i) {
    results[i] = engine_->StartContainer(gang.sandboxes[i].id)
                     .WithContext("warm pool: start " + gang.sandboxes[i].name);
    return results[i].ok();
  });
  if (Status s = FirstError(results); !s.ok()) {
    Discard(gang);
    return s;
  }
  // Where each init runs, for SetHostname at take time (off the start path).
  ForEachConcurrently(n, [&](size_t i) {
    RecordProcess(engine_, &gang.sandboxes[i]);
    return true;
  });
  gang.ready_time = clock_->Now();
  return gang;
}

void WarmPool::Discard(const WarmGang& gang) {
  ForEachConcurrently(gang.sandboxes.size(), [&](size_t i) {
    const Sandbox& s = gang.sandboxes[i];
    Status st = engine_->RemoveContainer(s.id.empty() ? s.name : s.id);
    if (!st.ok()) spdlog::warn("warm pool: {}", st.ToString());
    std::error_code ec;
    fs::remove_all(s.dir, ec);
    return true;
  });
  if (!gang.network.empty()) {
    Status st = engine_->RemoveNetwork(gang.network);
    if (!st.ok()) spdlog::warn("warm pool: {}", st.ToString());
  }
}

Status WarmPool::Claim(const Sandbox& sandbox, const ReplicaLaunch& replica,
                       const std::string& network,
                       const std::vector<std::pair<const ReplicaLaunch*, const Sandbox*>>& peers) {
  if (!network.empty()) {
    std::string hosts = "127.0.0.1\tlocalhost\n::1\tlocalhost\n";
    for (const auto& [peer, box] : peers) {
      hosts += box->address + "\t" +
               (peer->hostname.empty() ? box->name : peer->hostname + " " + box->name) + "\n";
    }
    RETURN_IF_ERROR(WriteFileInPlace(sandbox.dir + "/hosts", hosts));
  }
  json claim = {{"task", replica.task_name},
                {"network", network},
                {"replica", replica.name},
                {"hostname", replica.hostname}};
  RETURN_IF_ERROR(WriteFileAtomically(sandbox.dir + "/claim.json", claim.dump()));
  NameOrSay(sandbox, replica.hostname);
  return Status::Ok();
}

void WarmPool::NameOrSay(const Sandbox& sandbox, const std::string& hostname) {
  if (hostname.empty()) return;
  // Best effort: without the privilege the sandbox's own name stays (warm_pool.h).
  Status named = SetHostname(sandbox, hostname);
  if (!named.ok()) {
    spdlog::warn("warm pool: host name {} for {}: {}", hostname, sandbox.name, named.message());
  }
}

Status WarmPool::StartAgain(const std::string& container, const SandboxClaim& claim) {
  if (claim.hostname.empty()) return engine_->StartContainer(container);
  // A restart gets a new UTS namespace: the init waits (launch file held back)
  // until the host name is set in it again.
  RETURN_IF_ERROR(HoldLaunch(claim.dir));
  Status started = engine_->StartContainer(container);
  if (started.ok()) {
    Sandbox box;
    box.id = container;
    box.name = container;
    RecordProcess(engine_, &box);
    NameOrSay(box, claim.hostname);
  }
  // Released even when the start failed: a later start must find it.
  Status released = ReleaseLaunch(claim.dir);
  return started.ok() ? released : started;
}

Status WarmPool::SetHostname(const Sandbox& sandbox, const std::string& hostname) {
  if (sandbox.pid <= 0 || hostname.empty()) return FailedPrecondition("no process recorded");
  std::string path = "/proc/" + std::to_string(sandbox.pid) + "/ns/uts";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FailedPrecondition("cannot open " + path);
  struct stat st {};
  struct stat own {};
  // The pid must still be the sandbox's init (not reused), and its namespace must
  // not be this process's own: never rename the host.
  if (::fstat(fd, &st) != 0 || st.st_ino != sandbox.uts_inode ||
      ::stat("/proc/self/ns/uts", &own) != 0 || own.st_ino == st.st_ino) {
    ::close(fd);
    return FailedPrecondition(sandbox.name + ": its process changed");
  }
  // setns() moves only the calling thread; that thread ends right after.
  Status result = Status::Ok();
  std::thread([&] {
    if (::setns(fd, CLONE_NEWUTS) != 0) {
      result = FailedPrecondition(std::string("setns: ") + std::strerror(errno));
    } else if (::sethostname(hostname.data(), hostname.size()) != 0) {
      result = FailedPrecondition(std::string("sethostname: ") + std::strerror(errno));
    }
  }).join();
  ::close(fd);
  return result;
}

Status WarmPool::PrepareLaunch(const Sandbox& sandbox, const std::vector<std::string>& argv,
                               const std::vector<model::EnvVar>& env) {
  std::string data = std::to_string(argv.size());
  data.push_back('\0');
  for (const std::string& a : argv) {
    data += a;
    data.push_back('\0');
  }
  data += std::to_string(env.size());
  data.push_back('\0');
  for (const model::EnvVar& e : env) {
    data += e.name + "=" + e.value;
    data.push_back('\0');
  }
  return WriteFileAtomically(sandbox.dir + "/launch.prepared", data);
}

Status WarmPool::HandOverLaunch(const std::string& sandbox_dir) {
  const std::string from = sandbox_dir + "/launch.prepared";
  if (::rename(from.c_str(), (sandbox_dir + "/run/launch").c_str()) != 0) {
    if (errno == ENOENT) return NotFound("no launch prepared in " + sandbox_dir);
    return Internal("cannot hand over " + from + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

bool WarmPool::LaunchPrepared(const std::string& sandbox_dir) {
  return ::access((sandbox_dir + "/launch.prepared").c_str(), F_OK) == 0;
}

Result<SandboxClaim> WarmPool::ReadClaim(const ContainerSummary& container) const {
  std::string name = container.Label(kLabelSandbox);
  if (name.empty()) return NotFound("not a warm sandbox");
  SandboxClaim claim;
  claim.dir = options_.dir + "/" + name;
  // Read back as untrusted: a regular file (a FIFO would block recovery), bounded,
  // each field a string or nothing.
  Result<std::string> text = ReadStateFile(claim.dir + "/claim.json", 64 << 10);
  if (!text.ok() && text.status().code() == StatusCode::kNotFound) {
    return NotFound("sandbox " + name + " holds no claim");
  }
  if (!text.ok()) return Internal("sandbox " + name + ": " + text.status().message());
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Internal("sandbox " + name + ": malformed claim.json");
  for (auto [key, out] :
       {std::pair{"replica", &claim.replica}, std::pair{"task", &claim.task},
        std::pair{"hostname", &claim.hostname}, std::pair{"network", &claim.network}}) {
    auto it = j.find(key);
    if (it == j.end()) continue;
    if (!it->is_string()) return Internal("sandbox " + name + ": malformed claim.json");
    *out = it->get<std::string>();
  }
  return claim;
}

bool WarmPool::Launched(const std::string& sandbox_dir) {
  return ::access((sandbox_dir + "/run/launch").c_str(), F_OK) == 0 ||
         ::access((sandbox_dir + "/run/launch.held").c_str(), F_OK) == 0;
}

Status WarmPool::HoldLaunch(const std::string& sandbox_dir) {
  std::string run = sandbox_dir + "/run/";
  if (::rename((run + "launch").c_str(), (run + "launch.held").c_str()) != 0 && errno != ENOENT) {
    return Internal("cannot hold " + run + "launch: " + std::strerror(errno));
  }
  return Status::Ok();
}

Status WarmPool::ReleaseLaunch(const std::string& sandbox_dir) {
  std::string run = sandbox_dir + "/run/";
  if (::rename((run + "launch.held").c_str(), (run + "launch").c_str()) != 0 && errno != ENOENT) {
    return Internal("cannot release " + run + "launch: " + std::strerror(errno));
  }
  return Status::Ok();
}

void WarmPool::ReapLeftovers() {
  // Only sandboxes provably this daemon's: without an instance label to select
  // them (or a directory to read claims from) another daemon's would look untaken.
  if (options_.instance.empty() || options_.dir.empty()) return;
  std::vector<std::string> filters = {kLabelSandbox,
                                      std::string(kLabelInstance) + "=" + options_.instance};
  Result<std::vector<ContainerSummary>> containers = engine_->ListContainers(filters);
  if (!containers.ok()) {
    spdlog::warn("warm pool: {}", containers.status().ToString());
    return;
  }
  std::set<std::string> mine;  // Gangs this pool holds or builds: not leftovers.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const WarmGang& g : ready_) {
      for (const Sandbox& s : g.sandboxes) mine.insert(s.name);
    }
  }
  std::set<std::string> networks_in_use;
  std::set<std::string> dirs_in_use;
  std::vector<std::string> leftovers;
  for (const ContainerSummary& c : *containers) {
    std::string sandbox = c.Label(kLabelSandbox);
    bool unclaimed = !ReadClaim(c).ok();
    if (unclaimed && !mine.count(sandbox)) {
      leftovers.push_back(c.id);
      continue;
    }
    networks_in_use.insert(c.Label(kLabelSandboxNetwork));
    dirs_in_use.insert(sandbox);
  }
  ForEachConcurrently(leftovers.size(), [&](size_t i) {
    (void)engine_->RemoveContainer(leftovers[i]);
    return true;
  });
  std::vector<std::string> net_filters = {kLabelSandbox,
                                          std::string(kLabelInstance) + "=" + options_.instance};
  Result<std::vector<std::string>> networks = engine_->ListNetworks(net_filters);
  if (networks.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& net : *networks) {
      bool held = std::any_of(ready_.begin(), ready_.end(),
                              [&](const WarmGang& g) { return g.network == net; });
      // A network being built has no container yet: leave networks alone while
      // the builder works (the next reap takes a real leftover).
      if (!held && building_key_.empty() && !networks_in_use.count(net))
        (void)engine_->RemoveNetwork(net);
    }
  }
  std::error_code ec;
  if (!fs::is_directory(options_.dir, ec)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!building_key_.empty()) return;
  for (const fs::directory_entry& e : fs::directory_iterator(options_.dir, ec)) {
    std::string name = e.path().filename().string();
    if (!dirs_in_use.count(name) && !mine.count(name)) fs::remove_all(e.path(), ec);
  }
}

}  // namespace ty::executor
