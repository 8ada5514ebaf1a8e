#include "fakes/fake_engine.h"

#include <algorithm>
#include <chrono>

#include "common/time.h"

namespace ty::testing {

using executor::ContainerState;
using executor::ContainerSummary;
using executor::ImageConfig;
using executor::NetworkSubnet;
using json = nlohmann::json;

#define FAKE_CALL(operation, target)                    \
  std::unique_lock<std::mutex> lock(mu_);               \
  if (down_) return Unavailable("fake engine is down"); \
  if (Status injected = Injected(operation, target); !injected.ok()) return injected

// ---- Bookkeeping -------------------------------------------------------------

Status FakeEngine::Injected(const std::string& operation, const std::string& target) {
  // A failure aimed at a container by name also meets the calls that address it by id.
  const Container* c = Find(target);
  const std::string name = c != nullptr ? c->name : "";
  for (auto it = failures_.begin(); it != failures_.end(); ++it) {
    const bool aimed = target.find(it->target) != std::string::npos ||
                       (!name.empty() && name.find(it->target) != std::string::npos);
    if (it->operation == operation && aimed) {
      Status s = it->status;
      failures_.erase(it);
      return s;
    }
  }
  return Status::Ok();
}

FakeEngine::Container* FakeEngine::Find(const std::string& what) {
  auto it = containers_.find(what);
  if (it != containers_.end()) return &it->second;
  for (auto& [name, c] : containers_) {
    if (c.id == what) return &c;
  }
  return nullptr;
}

const FakeEngine::Container* FakeEngine::Find(const std::string& what) const {
  return const_cast<FakeEngine*>(this)->Find(what);
}

void FakeEngine::EndLocked(Container* c, int exit_code) {
  c->status = "exited";
  c->exit_code = exit_code;
  cv_.notify_all();
}

bool FakeEngine::Matches(const std::map<std::string, std::string>& labels,
                         const std::vector<std::string>& filters) {
  for (const std::string& f : filters) {
    size_t eq = f.find('=');
    auto it = labels.find(f.substr(0, eq));
    if (it == labels.end()) return false;
    if (eq != std::string::npos && it->second != f.substr(eq + 1)) return false;
  }
  return true;
}

// ---- Images and networks ---------------------------------------------------------

Status FakeEngine::Ping() {
  FAKE_CALL("Ping", "");
  return Status::Ok();
}

Result<bool> FakeEngine::ImageExists(const std::string& image) {
  FAKE_CALL("ImageExists", image);
  return images_.count(image) > 0;
}

Result<ImageConfig> FakeEngine::InspectImage(const std::string& image) {
  FAKE_CALL("InspectImage", image);
  if (images_.count(image) == 0) return NotFound("no such image: " + image);
  return ImageConfig{.id = "sha256:" + std::to_string(std::hash<std::string>()(image)),
                     .entrypoint = {},
                     .cmd = {"/bin/sh"}};
}

Status FakeEngine::PullImage(const std::string& image) {
  FAKE_CALL("PullImage", image);
  pulls_.push_back(image);
  if (registry_.count(image) == 0) return NotFound("manifest unknown: " + image);
  images_.emplace(image, ++image_clock_);
  return Status::Ok();
}

Status FakeEngine::TagImage(const std::string& source, const std::string& target) {
  FAKE_CALL("TagImage", target);
  if (images_.count(source) == 0) return NotFound("image not known: " + source);
  images_.emplace(target, ++image_clock_);
  return Status::Ok();
}

Result<std::vector<executor::ImageSummary>> FakeEngine::ListImages(const std::string& reference) {
  FAKE_CALL("ListImages", reference);
  std::vector<executor::ImageSummary> out;
  for (const auto& [name, created] : images_) {
    if (name.rfind(reference + ":", 0) != 0) continue;
    out.push_back({.id = "id-" + name, .tags = {name}, .created = created});
  }
  return out;
}

Status FakeEngine::RemoveImage(const std::string& name) {
  FAKE_CALL("RemoveImage", name);
  if (images_.erase(name) == 0) return NotFound("image not known: " + name);
  return Status::Ok();
}

Status FakeEngine::CreateNetwork(const std::string& name,
                                 const std::map<std::string, std::string>& labels) {
  FAKE_CALL("CreateNetwork", name);
  if (networks_.count(name) > 0) return AlreadyExists("network " + name + " exists");
  networks_[name] = Network{.labels = labels, .number = ++next_network_};
  return Status::Ok();
}

Status FakeEngine::RemoveNetwork(const std::string& name) {
  FAKE_CALL("RemoveNetwork", name);
  networks_.erase(name);
  return Status::Ok();
}

Result<bool> FakeEngine::NetworkExists(const std::string& name) {
  FAKE_CALL("NetworkExists", name);
  return networks_.count(name) > 0;
}

Result<std::vector<NetworkSubnet>> FakeEngine::NetworkSubnets(const std::string& name) {
  FAKE_CALL("NetworkSubnets", name);
  auto it = networks_.find(name);
  if (it == networks_.end()) return NotFound("no such network: " + name);
  std::string prefix = "10.89." + std::to_string(it->second.number) + ".";
  return std::vector<NetworkSubnet>{{.subnet = prefix + "0/24", .gateway = prefix + "1"}};
}

Result<std::vector<std::string>> FakeEngine::ListNetworks(
    const std::vector<std::string>& label_filters) {
  FAKE_CALL("ListNetworks", "");
  std::vector<std::string> out;
  for (const auto& [name, n] : networks_) {
    if (Matches(n.labels, label_filters)) out.push_back(name);
  }
  return out;
}

// ---- Containers ----------------------------------------------------------------------

Result<std::string> FakeEngine::CreateContainer(const std::string& name,
                                                const std::string& body_json) {
  FAKE_CALL("CreateContainer", name);
  return CreateWith(name, body_json, "Image", "Labels");
}

Result<std::string> FakeEngine::CreateContainerLibpod(const std::string& name,
                                                      const std::string& body_json) {
  FAKE_CALL("CreateContainerLibpod", name);
  return CreateWith(name, body_json, "image", "labels");
}

Result<std::string> FakeEngine::CreateWith(const std::string& name, const std::string& body_json,
                                           const char* image_key, const char* labels_key) {
  if (containers_.count(name) > 0)
    return AlreadyExists("the container name " + name + " is in use");
  json body = json::parse(body_json, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return InvalidArgument("create body is not a JSON object");
  std::string image = body.value(image_key, "");
  // Podman's native create takes a host directory as the root instead of an image.
  const bool rootfs = body.contains("rootfs") && body["rootfs"].is_string();
  if (!rootfs && images_.count(image) == 0) return NotFound("no such image: " + image);
  Container c;
  c.id = "fake" + std::to_string(++next_id_);
  c.name = name;
  if (body.contains(labels_key) && body[labels_key].is_object()) {
    for (const auto& [k, v] : body[labels_key].items()) c.labels[k] = v.get<std::string>();
  }
  bodies_[name] = body;
  containers_[name] = c;
  return c.id;
}

Status FakeEngine::StartContainer(const std::string& id) {
  FAKE_CALL("StartContainer", id);
  Container* c = Find(id);
  if (c == nullptr) return NotFound("no such container: " + id);
  if (c->status == "running") return Status::Ok();
  // Podman starts a container's namespace owner first; this fake models that start
  // failing (as it did for a slot holder caught mid-creation by a daemon's kill -9),
  // with podman's words, which do not name the owner.
  if (std::string owner = JoinedNamespaceOf(c->name); !owner.empty()) {
    const Container* o = Find(owner);
    if (o == nullptr || o->status != "running") {
      return Internal("starting some containers: internal libpod error");
    }
  }
  c->status = "running";
  c->exit_code = 0;
  c->oom_killed = false;
  ++starts_[c->name];
  cv_.notify_all();
  return Status::Ok();
}

Result<ContainerState> FakeEngine::InspectContainer(const std::string& id) {
  FAKE_CALL("InspectContainer", id);
  const Container* c = Find(id);
  if (c == nullptr) return NotFound("no such container: " + id);
  return ContainerState{.id = c->id,
                        .status = c->status,
                        .running = c->status == "running",
                        .exit_code = c->exit_code,
                        .oom_killed = c->oom_killed,
                        .pid = 0};
}

Result<int> FakeEngine::WaitContainer(const std::string& id, const std::atomic<bool>* cancel) {
  FAKE_CALL("WaitContainer", id);
  for (;;) {
    const Container* c = Find(id);
    if (c == nullptr) return NotFound("no such container: " + id);
    if (c->status == "exited") return c->exit_code;
    if (cancel != nullptr && cancel->load()) return Cancelled("wait cancelled");
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

Status FakeEngine::KillContainer(const std::string& id, int signal) {
  FAKE_CALL("KillContainer", id);
  Container* c = Find(id);
  if (c == nullptr) return NotFound("no such container: " + id);
  if (c->status == "running" || c->status == "stopping") EndLocked(c, 128 + signal);
  return Status::Ok();
}

Status FakeEngine::StopContainer(const std::string& id, int timeout_s) {
  FAKE_CALL("StopContainer", id);
  Container* c = Find(id);
  if (c == nullptr) return NotFound("no such container: " + id);
  c->stop_grace = timeout_s;
  if (c->status == "running" || c->status == "stopping") {
    EndLocked(c, c->ignores_term ? 128 + 9 : 128 + 15);
  }
  return Status::Ok();
}

Status FakeEngine::CommitContainer(const std::string& id, const std::string& repo,
                                   const std::string& tag) {
  FAKE_CALL("CommitContainer", id);
  if (Find(id) == nullptr) return NotFound("no such container: " + id);
  images_.emplace(repo + ":" + tag, ++image_clock_);
  return Status::Ok();
}

Status FakeEngine::RemoveContainer(const std::string& id) {
  FAKE_CALL("RemoveContainer", id);
  Container* c = Find(id);
  if (c == nullptr) return Status::Ok();
  // As podman: not while another container lives in its network namespace.
  for (const auto& [name, other] : containers_) {
    if (name != c->name && JoinedNamespaceOf(name) == c->name) {
      return AlreadyExists("container " + c->id + " has dependent containers which must be " +
                           "removed before it: " + other.id);
    }
  }
  containers_.erase(c->name);
  cv_.notify_all();
  return Status::Ok();
}

std::string FakeEngine::JoinedNamespaceOf(const std::string& name) const {
  auto it = bodies_.find(name);
  if (it == bodies_.end()) return "";
  const json& b = it->second;
  std::string mode = b.contains("HostConfig") ? b["HostConfig"].value("NetworkMode", "") : "";
  if (mode.rfind("container:", 0) == 0) return mode.substr(10);
  if (b.contains("netns") && b["netns"].value("nsmode", "") == "container") {
    return b["netns"].value("value", "");
  }
  return "";
}

Result<std::vector<ContainerSummary>> FakeEngine::ListContainers(
    const std::vector<std::string>& label_filters) {
  FAKE_CALL("ListContainers", "");
  std::vector<ContainerSummary> out;
  for (const auto& [name, c] : containers_) {
    if (!Matches(c.labels, label_filters)) continue;
    out.push_back({.id = c.id, .name = name, .state = c.status, .labels = c.labels});
  }
  return out;
}

Status FakeEngine::StreamLogs(const std::string& id, bool follow, int64_t since_s,
                              const executor::LogDemuxer::LineCallback& on_line,
                              const std::atomic<bool>* cancel, bool flush_partial) {
  FAKE_CALL("StreamLogs", id);
  while (follow) {
    const Container* c = Find(id);
    if (c == nullptr || c->status != "running") break;
    if (cancel != nullptr && cancel->load()) return Cancelled("log stream cancelled");
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
  const Container* c = Find(id);
  if (c == nullptr) return NotFound("no such container: " + id);
  std::vector<LogLine> lines = c->logs;
  lock.unlock();  // The callback appends to the log sink; never hold the engine then.
  for (const LogLine& l : lines) {
    if (l.time_us < since_s * 1000000) continue;
    on_line(l.stream, FormatRfc3339(l.time_us) + " " + l.text);
  }
  return Status::Ok();
}

// ---- Test controls ---------------------------------------------------------------------

void FakeEngine::AddImage(const std::string& image) {
  std::lock_guard<std::mutex> lock(mu_);
  images_.emplace(image, ++image_clock_);
}

void FakeEngine::AddRegistryImage(const std::string& image) {
  std::lock_guard<std::mutex> lock(mu_);
  registry_.insert(image);
}

void FakeEngine::SetDown(bool down) {
  std::lock_guard<std::mutex> lock(mu_);
  down_ = down;
}

void FakeEngine::FailNext(const std::string& operation, Status status, const std::string& target) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.push_back({operation, target, std::move(status)});
}

void FakeEngine::Print(const std::string& name, const std::string& line, int stream) {
  std::lock_guard<std::mutex> lock(mu_);
  Container* c = Find(name);
  if (c == nullptr) return;
  log_clock_us_ += 1000;
  c->logs.push_back({log_clock_us_, stream, line});
}

void FakeEngine::Exit(const std::string& name, int exit_code, bool oom_killed) {
  std::lock_guard<std::mutex> lock(mu_);
  Container* c = Find(name);
  if (c == nullptr) return;
  c->oom_killed = oom_killed;
  EndLocked(c, exit_code);
}

void FakeEngine::Stopping(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  Container* c = Find(name);
  if (c == nullptr) return;
  c->status = "stopping";
  c->exit_code = 0;
}

void FakeEngine::IgnoreTerm(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  Container* c = Find(name);
  if (c != nullptr) c->ignores_term = true;
}

std::vector<std::string> FakeEngine::ContainerNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, c] : containers_) out.push_back(name);
  return out;
}

std::vector<std::string> FakeEngine::NetworkNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, n] : networks_) out.push_back(name);
  return out;
}

bool FakeEngine::IsRunning(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Container* c = Find(name);
  return c != nullptr && c->status == "running";
}

int FakeEngine::Starts(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = starts_.find(name);
  return it == starts_.end() ? 0 : it->second;
}

int FakeEngine::StopGrace(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Container* c = Find(name);
  return c == nullptr ? -1 : c->stop_grace;
}

json FakeEngine::CreateBody(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = bodies_.find(name);
  return it == bodies_.end() ? json::object() : it->second;
}

std::vector<std::string> FakeEngine::Pulls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pulls_;
}

bool FakeEngine::WaitRunning(const std::string& name, int timeout_ms) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    const Container* c = Find(name);
    return c != nullptr && c->status == "running";
  });
}

}  // namespace ty::testing
