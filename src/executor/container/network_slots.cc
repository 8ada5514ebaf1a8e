#include "executor/container/network_slots.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "executor/background_work.h"
#include "executor/executor.h"

namespace ty::executor {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kHolderPrefix[] = "ty-net-";

// Ends in a letter, so that ParseReplicaName never takes a holder for a replica.
std::string NewHolderName(Random& random) {
  return kHolderPrefix + internal::UniqueHexId(random) + "-h";
}

}  // namespace

NetworkSlots::NetworkSlots(EngineClient* engine, NetworkSlotsOptions options)
    : engine_(engine), options_(std::move(options)) {}

NetworkSlots::~NetworkSlots() {
  if (!enabled()) return;
  std::vector<std::string> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all = idle_;
    all.insert(all.end(), taken_.begin(), taken_.end());
  }
  // The engine keeps those a replica still uses (it runs on after the daemon).
  Remove(all);
}

Status NetworkSlots::PrepareRoot() {
  std::error_code ec;
  fs::create_directories(options_.root_dir, ec);
  if (ec)
    return Internal("network slots: cannot create " + options_.root_dir + ": " + ec.message());
  // Holders of an earlier daemon may be running this root's init: writing over it
  // fails (ETXTBSY) and, where none runs yet, a holder starting meanwhile would exec
  // half a file. A fresh copy renamed over it replaces it whole; running holders
  // keep the old one.
  const std::string init = options_.root_dir + "/init";
  const std::string fresh = init + ".new-" + internal::UniqueHexId(Randomness());
  fs::copy_file(options_.init_path, fresh, fs::copy_options::overwrite_existing, ec);
  if (!ec) {
    ::chmod(fresh.c_str(), 0755);
    fs::rename(fresh, init, ec);
  }
  if (ec) {
    const std::string why = ec.message();
    fs::remove(fresh, ec);
    return Internal("network slots: cannot copy " + options_.init_path + " to " + init + ": " +
                    why);
  }
  ::chmod(options_.root_dir.c_str(), 0755);
  return Status::Ok();
}

Result<std::string> NetworkSlots::MakeHolder() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!root_ready_) {
      RETURN_IF_ERROR(PrepareRoot());
      root_ready_ = true;
    }
  }
  const std::string name = NewHolderName(Randomness());
  json labels = {{kLabelNetSlotHolder, "1"}};
  if (!options_.instance.empty()) labels[kLabelInstance] = options_.instance;
  json body = {{"name", name},
               {"rootfs", options_.root_dir},
               {"command", {"/init", "--hold"}},
               {"labels", labels},
               {"netns", {{"nsmode", "bridge"}}}};
  Result<std::string> id = engine_->CreateContainerLibpod(name, body.dump());
  if (!id.ok()) return id.status().WithContext("network slot holder " + name);
  Status started = engine_->StartContainer(name);
  if (!started.ok()) {
    engine_->RemoveContainer(name).IgnoreError();
    return started.WithContext("network slot holder " + name);
  }
  return name;
}

Result<std::string> NetworkSlots::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::string holder = std::move(idle_.back());
      idle_.pop_back();
      taken_.insert(holder);
      return holder;
    }
  }
  ASSIGN_OR_RETURN(std::string holder, MakeHolder());
  std::lock_guard<std::mutex> lock(mu_);
  taken_.insert(holder);
  return holder;
}

void NetworkSlots::Release(const std::string& holder) {
  bool keep = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (taken_.erase(holder) == 0) return;  // Released already, or not ours.
    keep = idle_.size() < static_cast<size_t>(options_.max_idle);
    if (keep) idle_.push_back(holder);
  }
  if (!keep) Remove({holder});
}

void NetworkSlots::Discard(const std::string& holder) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    taken_.erase(holder);
    idle_.erase(std::remove(idle_.begin(), idle_.end(), holder), idle_.end());
  }
  Remove({holder});
}

void NetworkSlots::Recover(const std::set<std::string>& in_use) {
  if (!enabled()) return;
  std::vector<std::string> filters = {kLabelNetSlotHolder};
  if (!options_.instance.empty()) {
    filters.push_back(std::string(kLabelInstance) + "=" + options_.instance);
  }
  Result<std::vector<ContainerSummary>> holders = engine_->ListContainers(filters);
  if (!holders.ok()) {
    spdlog::warn("network slots: cannot list holders: {}", holders.status().ToString());
    return;
  }
  std::vector<std::string> surplus;
  std::lock_guard<std::mutex> lock(mu_);
  for (const ContainerSummary& c : *holders) {
    if (in_use.count(c.name) != 0) {
      taken_.insert(c.name);
    } else if (c.state != "running") {
      // Never started (a daemon killed between create and start) or ended: a replica
      // joining it would make podman start it, which fails the replica's start.
      surplus.push_back(c.name);
    } else if (idle_.size() < static_cast<size_t>(options_.max_idle) &&
               std::find(idle_.begin(), idle_.end(), c.name) == idle_.end()) {
      idle_.push_back(c.name);
    } else if (taken_.count(c.name) == 0) {
      surplus.push_back(c.name);
    }
  }
  for (const std::string& h : surplus) engine_->RemoveContainer(h).IgnoreError();
}

bool NetworkSlots::Running(const std::string& holder) {
  Result<ContainerState> state = engine_->InspectContainer(holder);
  return state.ok() && state->running;
}

void NetworkSlots::Remove(const std::vector<std::string>& holders) {
  internal::ForEachConcurrently(holders.size(), [&](size_t i) {
    engine_->RemoveContainer(holders[i]).IgnoreError();
    return true;
  });
}

}  // namespace ty::executor
