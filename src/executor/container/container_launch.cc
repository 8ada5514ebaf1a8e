// ContainerExecutor, launch use case: images, the attempt's network and replica
// addresses, and the gang create + start of the replicas (container_executor.h).
#include <arpa/inet.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "executor/container/container_body.h"
#include "executor/container/container_executor.h"
#include "executor/container/registry_digest.h"
#include "images/google_names.h"
#include "images/reference.h"
#include "images/runtimes.h"
#include "model/runtime_env.h"

namespace ty::executor {
namespace {

// The engine refused a create because a container already has the name (Docker: 409;
// podman: 500 "... is already in use").
bool NameTaken(const Status& s) {
  return s.code() == StatusCode::kAlreadyExists ||
         s.message().find("already in use") != std::string::npos;
}

using json = nlohmann::json;
using internal::FirstError;
using internal::ForEachConcurrently;

std::map<std::string, std::string> AttemptLabels(const AttemptSpec& a) {
  std::map<std::string, std::string> labels = a.labels;
  labels[kLabelJob] = a.job_uid;
  labels[kLabelAttempt] = std::to_string(a.attempt);
  return labels;
}

// True when the engine holds a container `name` labelled with this attempt's job and number.
bool IsLeftoverOf(const AttemptSpec& a, const std::string& name, EngineClient* engine) {
  auto mine =
      engine->ListContainers({std::string(kLabelJob) + "=" + a.job_uid,
                              std::string(kLabelAttempt) + "=" + std::to_string(a.attempt)});
  if (!mine.ok()) return false;
  for (const ContainerSummary& c : *mine) {
    if (c.name == name) return true;
  }
  return false;
}

// The digests the engine lists for `image`'s repository (RepoDigests: every name of
// the image with every manifest digest it was pulled or pushed by).
std::set<std::string> DigestsOf(const std::string& image, const ImageConfig& config) {
  std::string repository = image;
  if (Result<images::ImageReference> ref = images::ParseImageReference(image); ref.ok()) {
    repository = ref->domain.empty() ? ref->path : ref->domain + "/" + ref->path;
  }
  std::set<std::string> out;
  for (const std::string& entry : config.repo_digests) {
    const size_t at = entry.rfind('@');
    if (at != std::string::npos && entry.compare(0, at, repository) == 0) {
      out.insert(entry.substr(at + 1));
    }
  }
  return out;
}

// What `image` stands for: the engine's id, and the manifest digest when it is known
// for sure: the registry's (`registry_digest`, when the engine holds it too), else the
// engine's only one. An image pushed from this host has two (the local manifest's and the
// pushed one's) listed in no telling order, and one only built here has none: then "".
model::ImageRan RanOf(const std::string& image, const ImageConfig& config,
                      const std::string& registry_digest = "") {
  model::ImageRan ran{.image = image, .digest = "", .id = config.id};
  const std::set<std::string> digests = DigestsOf(image, config);
  if (!registry_digest.empty() && digests.count(registry_digest) > 0) {
    ran.digest = registry_digest;
  } else if (digests.size() == 1) {
    ran.digest = *digests.begin();
  }
  return ran;
}

bool ParseIpv4(const std::string& text, uint32_t* out) {
  in_addr a{};
  if (inet_pton(AF_INET, text.c_str(), &a) != 1) return false;
  *out = ntohl(a.s_addr);
  return true;
}

std::string FormatIpv4(uint32_t v) {
  in_addr a{};
  a.s_addr = htonl(v);
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, buf, sizeof(buf));
  return buf;
}

}  // namespace

Result<std::vector<std::string>> ContainerExecutor::PickReplicaAddresses(const std::string& subnet,
                                                                         const std::string& gateway,
                                                                         size_t count) {
  size_t slash = subnet.find('/');
  uint32_t base = 0;
  if (slash == std::string::npos || !ParseIpv4(subnet.substr(0, slash), &base)) {
    return InvalidArgument("not an IPv4 subnet: " + subnet);
  }
  char* end = nullptr;
  long prefix = std::strtol(subnet.c_str() + slash + 1, &end, 10);
  if (end == subnet.c_str() + slash + 1 || *end != '\0' || prefix < 0 || prefix > 32) {
    return InvalidArgument("not an IPv4 subnet: " + subnet);
  }
  uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  uint64_t network = base & mask;
  uint64_t broadcast = network | ~mask;
  uint32_t skip = 0;
  if (gateway.empty() || !ParseIpv4(gateway, &skip)) skip = static_cast<uint32_t>(network + 1);
  std::vector<std::string> out;
  // Network and broadcast addresses are not hosts (a /31 or /32 has no room).
  for (uint64_t a = network + 1; a < broadcast && out.size() < count; ++a) {
    if (a != skip) out.push_back(FormatIpv4(static_cast<uint32_t>(a)));
  }
  if (out.size() < count) {
    return ResourceExhausted("subnet " + subnet + " has room for " + std::to_string(out.size()) +
                             " replicas, not " + std::to_string(count));
  }
  return out;
}

uint32_t ContainerExecutor::UsernsBase() const {
  return speaks_libpod_ ? options_.replica_userns_base : 0;
}

uint32_t ContainerExecutor::ReplicaUsernsBase(const ReplicaLaunch& r) const {
  const bool gpus = r.accelerator_count > 0 || !r.gpu_indices.empty();
  return gpus ? 0 : UsernsBase();
}

std::string ContainerExecutor::MacAddressFor(const std::string& ipv4) {
  return internal::MacAddressFor(ipv4);
}

std::string ContainerExecutor::CreateBodyForTest(const AttemptSpec& attempt, const ReplicaLaunch& r,
                                                 const std::vector<std::string>& addresses) {
  return internal::RenderContainerBody(ReplicaBody(attempt, r, addresses));
}

internal::ContainerBody ContainerExecutor::ReplicaBody(const AttemptSpec& attempt,
                                                       const ReplicaLaunch& r,
                                                       const std::vector<std::string>& addresses,
                                                       const std::string& holder) {
  internal::ContainerBody b;
  b.image = r.image;
  b.hostname = r.hostname;
  b.env.emplace();
  for (const auto& e : r.env) b.env->push_back(e.name + "=" + e.value);
  if (!r.command.empty()) {
    b.entrypoint = r.command;
    // With Entrypoint overridden the engine already drops the image's CMD; an
    // explicit [] says the same to any engine (executor.h: "the command runs alone").
    b.cmd = r.args;
  } else if (!r.args.empty()) {
    b.cmd = r.args;
  }
  b.labels = AttemptLabels(attempt);
  b.labels[kLabelPool] = std::to_string(r.pool);
  b.labels[kLabelIndex] = std::to_string(r.index);
  b.labels[kLabelTask] = r.task_name;
  internal::AddMounts(r.mounts, kReplicaBucketRoot, &b);
  internal::ApplyGrant(r, &b);
  if (!attempt.peers_talk && !holder.empty()) {
    b.netns_container = holder;
    b.labels[kLabelNetSlot] = holder;
  }
  if (attempt.peers_talk) {
    b.network = AttemptNetworkName(attempt.job_uid, attempt.attempt);
    if (!r.hostname.empty()) b.aliases.push_back(r.hostname);
    if (addresses.size() == attempt.replicas.size()) {
      b.extra_hosts.emplace();
      for (size_t i = 0; i < attempt.replicas.size(); ++i) {
        const ReplicaLaunch& peer = attempt.replicas[i];
        if (peer.name == r.name) b.address = addresses[i];
        if (!peer.hostname.empty()) b.extra_hosts->push_back(peer.hostname + ":" + addresses[i]);
      }
    }
  }
  return b;
}

Status ContainerExecutor::Launch(const AttemptSpec& attempt) {
  RETURN_IF_ERROR(internal::ValidateAttempt(attempt, [](const ReplicaLaunch& r) {
    if (r.name.empty()) return InvalidArgument("launch: a replica has no name");
    if (r.image.empty()) return InvalidArgument("launch: replica " + r.name + " has no image");
    return Status::Ok();
  }));
  AttemptSpec owned = WithEngineParts(attempt);
  return work_.StartLaunch([this, owned] { RunLaunch(owned); });
}

namespace {

// The daemon's wheelhouse, read-only, and pip's find-links there, unless the replica's
// own environment names other links.
void AddWheelhouse(const std::string& host_dir, ReplicaLaunch* r) {
  r->mounts.push_back({host_dir, model::kReplicaWheelhouse, true});
  for (const model::EnvVar& e : r->env) {
    if (e.name == "PIP_FIND_LINKS") return;
  }
  r->env.push_back({"PIP_FIND_LINKS", model::kReplicaWheelhouse});
}

}  // namespace

AttemptSpec ContainerExecutor::WithEngineParts(const AttemptSpec& attempt) const {
  AttemptSpec owned = attempt;
  if (!options_.instance.empty()) owned.labels[kLabelInstance] = options_.instance;
  for (ReplicaLaunch& r : owned.replicas) {
    r = WithMetricsDir(std::move(r), false);
    if (!options_.wheelhouse.empty()) AddWheelhouse(options_.wheelhouse, &r);
  }
  // Buckets: each bucket of the job and of its project at /gcs/BUCKET (as on Vertex),
  // mounted one by one: never the bucket root, so no replica sees another project's
  // buckets. The mounts are part of the attempt from here on, so warm gangs are
  // shaped with them.
  if (!options_.bucket_root.empty()) {
    for (const std::string& bucket : internal::MountedBuckets(attempt)) {
      for (ReplicaLaunch& r : owned.replicas) {
        r.mounts.push_back({options_.bucket_root + "/" + bucket,
                            std::string(kReplicaBucketRoot) + "/" + bucket, false});
      }
    }
  }
  return owned;
}

std::string ContainerExecutor::AttemptNetworkName(const std::string& job_uid, int attempt) {
  return "ty-" + job_uid + "-" + std::to_string(attempt);
}

std::string ContainerExecutor::ReplicaBucketRoot() const {
  return options_.bucket_root.empty() ? "" : kReplicaBucketRoot;
}

void ContainerExecutor::RunLaunch(const AttemptSpec& attempt) {
  {
    std::unique_lock<std::mutex> lock(launch_mu_);
    // Polls the shutdown flag too: BackgroundWork's shutdown joins this thread
    // without a way to notify launch_cv_.
    while (launches_running_ >= std::max(1, options_.max_parallel_launches) &&
           !work_.shutting_down()) {
      launch_cv_.wait_for(lock, std::chrono::milliseconds(200));
    }
    if (work_.shutting_down()) return;  // Its outcome would not be delivered anyway.
    ++launches_running_;
  }
  RunLaunchInSlot(attempt);
  {
    std::lock_guard<std::mutex> lock(launch_mu_);
    --launches_running_;
  }
  launch_cv_.notify_one();
}

void ContainerExecutor::RunLaunchInSlot(AttemptSpec attempt) {
  // Off the caller's thread: the bucket root may be a slow shared filesystem.
  if (Status s =
          internal::EnsureBucketDirs(options_.bucket_root, internal::MountedBuckets(attempt));
      !s.ok()) {
    work_.Emit(internal::LaunchOutcomeEvent(attempt, s, 0, Now()));
    return;
  }
  if (UsernsBase() > 0) {
    if (Status s = internal::GiveWritableMountsTo(attempt, UsernsBase()); !s.ok()) {
      work_.Emit(internal::LaunchOutcomeEvent(attempt, s, 0, Now()));
      return;
    }
  }
  LaunchRecord record;
  // Packages first (done once: a later try finds them installed), then the replicas.
  auto launch = [&] {
    Status installed = InstallPackages(&attempt);
    return installed.ok() ? LaunchReplicas(attempt, &record) : installed;
  };
  Status s = launch();
  const TimeMicros deadline =
      Now() + static_cast<TimeMicros>(options_.engine_outage_wait_ms) * 1000;
  // What an interrupted try left (its network, created replicas) is taken over or
  // replaced by the next, as after a daemon killed mid-launch.
  while (!s.ok() && !work_.shutting_down() && EngineCameBack(attempt, deadline)) {
    record = LaunchRecord();
    s = launch();
  }
  if (work_.shutting_down()) return;
  ExecutorEvent outcome = internal::LaunchOutcomeEvent(attempt, s, record.image_ready, Now());
  if (s.ok()) outcome.images = record.images;
  if (s.ok() && record.warm) outcome.message = "started from warm sandboxes";
  work_.Emit(outcome);
  // Watchers attach after the event so that no kReplicaExited can overtake
  // kAttemptStarted; the engine keeps every line from the start, so none is lost.
  if (!s.ok()) return;
  // The next attempt of this shape finds a warm gang (made in the background,
  // after this launch so that it does not compete with it).
  warm_->Refill(attempt);
  for (size_t i = 0; i < attempt.replicas.size(); ++i) {
    const ReplicaLaunch& r = attempt.replicas[i];
    StartWatcher({.job_uid = attempt.job_uid,
                  .attempt = attempt.attempt,
                  .pool = r.pool,
                  .index = r.index,
                  .name = r.name,
                  .container = record.containers[i],
                  .task = r.task_name,
                  .skip_until = 0,
                  .run_end = std::nullopt});
  }
}

bool ContainerExecutor::EngineCameBack(const AttemptSpec& attempt, TimeMicros deadline) {
  Status ping = engine_->Ping();
  if (ping.ok()) return false;
  spdlog::warn("launch {}/{}: the container engine does not answer ({}); waiting for it",
               attempt.job_uid, attempt.attempt, ping.message());
  SayLaunchWaits(attempt,
                 "Waiting for the container engine, which does not answer (" + ping.message() +
                     "); the replicas start when it is back.",
                 /*trouble=*/true);
  while (Now() < deadline && !work_.shutting_down()) {
    work_.SleepUnlessShuttingDown(500);
    if (engine_->Ping().ok()) {
      spdlog::info("launch {}/{}: the container engine answers again; launching", attempt.job_uid,
                   attempt.attempt);
      return true;
    }
  }
  return false;
}

void ContainerExecutor::SayLaunchWaits(const AttemptSpec& attempt, const std::string& message,
                                       bool trouble) {
  ExecutorEvent waiting;
  waiting.kind = ExecutorEventKind::kLaunchWaiting;
  waiting.job_uid = attempt.job_uid;
  waiting.attempt = attempt.attempt;
  waiting.time = Now();
  waiting.message = message;
  waiting.trouble = trouble;
  work_.Emit(waiting);
}

Status ContainerExecutor::EnsureImages(const AttemptSpec& attempt,
                                       std::vector<model::ImageRan>* ran) {
  std::set<std::string> distinct;
  for (const ReplicaLaunch& r : attempt.replicas) distinct.insert(r.image);
  std::vector<std::string> images(distinct.begin(), distinct.end());
  std::vector<Status> results(images.size());
  std::vector<model::ImageRan> resolved(images.size());
  ForEachConcurrently(images.size(), [&](size_t i) {
    const std::string& image = images[i];
    results[i] = EnsureImage(attempt, image);
    if (!results[i].ok()) return false;
    Result<ImageConfig> config = engine_->InspectImage(image);
    if (!config.ok()) {
      results[i] =
          Unavailable("image inspect failed for " + image + ": " + config.status().message());
      return false;
    }
    resolved[i] = RanOf(image, *config, RegistryDigest(attempt, image));
    if (images::GoogleRegistryHostOf(image)) {
      SayLaunchWaits(attempt,
                     "Image " + image + " is " +
                         (resolved[i].digest.empty() ? resolved[i].id : resolved[i].digest) + ".");
    }
    return true;
  });
  RETURN_IF_ERROR(FirstError(results));
  if (ran != nullptr) *ran = std::move(resolved);
  return Status::Ok();
}

std::string ContainerExecutor::RegistryDigest(const AttemptSpec& attempt,
                                              const std::string& image) {
  if (!images::GoogleRegistryHostOf(image) || options_.google_registry.empty()) return "";
  std::optional<std::string> mirror = images::MirrorReference(image, options_.google_registry);
  if (!mirror) return "";
  Result<std::string> digest = internal::RegistryManifestDigest(*mirror, LoginFor(attempt), 10000);
  if (!digest.ok()) {
    spdlog::warn("launch {}: the digest of {}: {}", attempt.job_uid, image,
                 digest.status().message());
    return "";
  }
  return *digest;
}

RegistryLogin ContainerExecutor::LoginFor(const AttemptSpec& attempt) const {
  RegistryLogin login;
  if (options_.registry_credential) {
    login.username = "trainyard-job";
    login.password = options_.registry_credential(attempt.job_uid);
  }
  return login;
}

Status ContainerExecutor::EnsureImage(const AttemptSpec& attempt, const std::string& image) {
  Result<bool> exists = engine_->ImageExists(image);
  if (!exists.ok()) {
    return Unavailable("image inspect failed for " + image + ": " + exists.status().message());
  }
  if (images::GoogleRegistryHostOf(image) && !options_.google_registry.empty()) {
    // A gcr.io / pkg.dev name is pulled from the daemon's registry at every launch (a
    // loopback manifest check when nothing changed): a tag pushed again after the
    // engine first got the name runs on the next attempt, not the first image for ever.
    Status pulled = PullMissingImage(attempt, image);
    if (!pulled.ok() && *exists) {
      SayLaunchWaits(attempt,
                     "The registry did not give " + image + " (" + pulled.message() +
                         "); running the engine's copy.",
                     /*trouble=*/true);
      return Status::Ok();
    }
    return pulled;
  }
  return *exists ? Status::Ok() : PullMissingImage(attempt, image);
}

Status ContainerExecutor::PullMissingImage(const AttemptSpec& attempt, const std::string& image) {
  std::optional<std::string> host = images::GoogleRegistryHostOf(image);
  if (!host) {
    // A runtime of the catalogue is built here, never pulled: say how to build it, not
    // what the engine answers for a registry at localhost:443 (issue 33).
    for (const images::Runtime& runtime : images::Runtimes()) {
      if (runtime.local_image != image) continue;
      return FailedPrecondition("the runtime image " + image + " (runtime '" +
                                std::string(runtime.name) +
                                "') is not built on this server: build it with `trainyard "
                                "images build " +
                                std::string(runtime.name) + "`, then submit the job again");
    }
    Status pulled = engine_->PullImage(image);
    if (pulled.ok()) return pulled;
    return Unavailable("image pull failed for " + image + ": " + pulled.message());
  }
  std::optional<std::string> mirror = images::MirrorReference(image, options_.google_registry);
  if (!mirror) {
    return FailedPrecondition("image pull failed for " + image + ": no registry serves " + *host +
                              " names here (the daemon's registry is off), and the engine " +
                              "does not have the image");
  }
  SayLaunchWaits(attempt, "Pulling " + image + " from the local registry (" + *mirror + ").");
  // One at a time: podman 4.3 pulling one image under two names at once rewrote its
  // record with the second pull's names, dropping the tag given after the first (a
  // job of two pools, gcr.io and pkg.dev names of one image, found "image not known").
  // Loopback pulls are quick.
  std::lock_guard<std::mutex> one_pull(mirror_pull_mu_);
  Status pulled = engine_->PullImagePlainHttp(*mirror, LoginFor(attempt));
  if (!pulled.ok()) {
    return FailedPrecondition("image pull failed for " + image + ": the registry at " +
                              options_.google_registry + " does not have it (" + pulled.message() +
                              "); push it there with `docker push " + image +
                              "` after `trainyard config registry`");
  }
  Status tagged = engine_->TagImage(*mirror, image);
  if (!tagged.ok()) return Unavailable("image pull failed for " + image + ": " + tagged.message());
  return Status::Ok();
}

Status ContainerExecutor::InstallPackages(AttemptSpec* attempt) {
  // One install per distinct image and package list (a pool's replicas share it).
  std::map<std::pair<std::string, std::vector<std::string>>, std::string> prepared;
  for (ReplicaLaunch& r : attempt->replicas) {
    if (r.python_packages.empty()) continue;
    auto key = std::make_pair(r.image, r.python_packages);
    auto it = prepared.find(key);
    if (it == prepared.end()) {
      AttemptSpec one;
      one.replicas.push_back(r);
      RETURN_IF_ERROR(EnsureImages(one, nullptr));  // The executor image, before pip runs in it.
      // Within the pool's admitted share (its replica's grant), as its replicas run.
      internal::InstallLimits limits;
      limits.cpus = r.cpu_limit;
      limits.memory_bytes = static_cast<int64_t>(r.memory_limit_gb * (1 << 30));
      Result<std::string> image = packages_->Prepare(
          r.image, r.python_packages, limits, [this] { return work_.shutting_down(); },
          [&](const std::string& message) { SayLaunchWaits(*attempt, message); });
      if (!image.ok()) return image.status();
      it = prepared.emplace(key, *image).first;
    }
    r.image = it->second;
    r.python_packages.clear();
  }
  return Status::Ok();
}

Status ContainerExecutor::CreateNetwork(const AttemptSpec& attempt, std::string* created,
                                        std::vector<std::string>* addresses) {
  if (!attempt.peers_talk) return Status::Ok();
  const std::string network = AttemptNetworkName(attempt.job_uid, attempt.attempt);
  Status s = engine_->CreateNetwork(network, AttemptLabels(attempt));
  if (s.ok()) {
    *created = network;
  } else if (s.code() != StatusCode::kAlreadyExists) {
    return Unavailable("create network " + network + ": " + s.message());
  }
  // The engine chose a free subnet; only now can addresses in it be picked.
  Result<std::vector<NetworkSubnet>> subnets = engine_->NetworkSubnets(network);
  if (!subnets.ok()) {
    return Unavailable("inspect network " + network + ": " + subnets.status().message());
  }
  for (const NetworkSubnet& subnet : *subnets) {
    Result<std::vector<std::string>> picked =
        PickReplicaAddresses(subnet.subnet, subnet.gateway, attempt.replicas.size());
    if (picked.ok()) {
      *addresses = std::move(*picked);
      return Status::Ok();
    }
    if (picked.status().code() == StatusCode::kResourceExhausted) {
      // Peers still find each other through the engine's DNS, only less reliably.
      spdlog::warn("executor: {}: {}; replicas resolve peers through DNS only", network,
                   picked.status().message());
    }
  }
  return Status::Ok();
}

std::map<std::string, std::future<Result<ImageConfig>>> ContainerExecutor::InspectInBackground(
    const AttemptSpec& attempt) {
  std::set<std::string> distinct;
  for (const ReplicaLaunch& r : attempt.replicas) distinct.insert(r.image);
  std::map<std::string, std::future<Result<ImageConfig>>> inspected;
  for (const std::string& image : distinct) {
    inspected[image] =
        std::async(std::launch::async, [this, &attempt, image]() -> Result<ImageConfig> {
          // A Google name's tag may have moved in the registry since the gang was made:
          // resolved first (a loopback manifest check), so a moved tag discards the gang.
          if (images::GoogleRegistryHostOf(image) && !options_.google_registry.empty()) {
            RETURN_IF_ERROR(EnsureImage(attempt, image));
          }
          return engine_->InspectImage(image);
        });
  }
  return inspected;
}

namespace {

// Every image's inspection, or the first failure.
Result<std::map<std::string, ImageConfig>> AwaitAll(
    std::map<std::string, std::future<Result<ImageConfig>>>& inspected) {
  std::map<std::string, ImageConfig> configs;
  Status first = Status::Ok();
  for (auto& [image, future] : inspected) {
    Result<ImageConfig> config = future.get();  // Every future waited for, failed or not.
    if (!config.ok()) {
      if (first.ok()) first = Aborted("warm gang: " + config.status().message());
      continue;
    }
    configs[image] = *config;
  }
  if (!first.ok()) return first;
  return configs;
}

// Each replica's command line.
Result<std::vector<std::vector<std::string>>> WarmArgv(
    const AttemptSpec& attempt, std::map<std::string, ImageConfig>& configs) {
  // What the engine would run (Docker semantics, executor.h): the command
  // replaces the image's ENTRYPOINT and drops its CMD; args replace CMD.
  const size_t n = attempt.replicas.size();
  std::vector<std::vector<std::string>> argv(n);
  for (size_t i = 0; i < n; ++i) {
    const ReplicaLaunch& r = attempt.replicas[i];
    const ImageConfig& config = configs[r.image];
    argv[i] = !r.command.empty() ? r.command : config.entrypoint;
    const std::vector<std::string>& tail =
        !r.command.empty() || !r.args.empty() ? r.args : config.cmd;
    argv[i].insert(argv[i].end(), tail.begin(), tail.end());
    if (argv[i].empty()) {
      return InvalidArgument("create replica " + r.name +
                             ": no command given and the image has none");
    }
  }
  return argv;
}

}  // namespace

Status ContainerExecutor::LaunchWarm(const AttemptSpec& attempt, const WarmGang& gang,
                                     LaunchRecord* record) {
  const size_t n = attempt.replicas.size();
  auto give_up = [&](Status why) {
    warm_->Discard(gang);
    return why;
  };
  // The sandboxes run the image a name stood for when they were made; a name
  // pointed at a new image since then (a push to :latest) makes them stale. The
  // engine's image inspect is the slowest step here (~3 ms), so it runs while the
  // sandboxes are claimed: a claim is only files, nothing runs before the launch.
  std::map<std::string, std::future<Result<ImageConfig>>> inspected = InspectInBackground(attempt);
  std::vector<std::pair<const ReplicaLaunch*, const Sandbox*>> peers;
  for (size_t i = 0; i < n; ++i) peers.emplace_back(&attempt.replicas[i], &gang.sandboxes[i]);
  // Claim: after this every sandbox says which replica it is and knows its peers'
  // host names; nothing has run yet, so a failure can still fall back to cold.
  std::vector<Status> results(n);
  ForEachConcurrently(n, [&](size_t i) {
    results[i] = WarmPool::Claim(gang.sandboxes[i], attempt.replicas[i], gang.network, peers);
    return results[i].ok();
  });
  Result<std::map<std::string, ImageConfig>> inspected_configs = AwaitAll(inspected);
  if (!inspected_configs.ok()) return give_up(inspected_configs.status());
  std::map<std::string, ImageConfig>& configs = *inspected_configs;
  for (size_t i = 0; i < n; ++i) {
    if (configs[attempt.replicas[i].image].id != gang.sandboxes[i].image_id) {
      return give_up(
          Aborted("warm gang: " + attempt.replicas[i].image + " changed since the gang was made"));
    }
  }
  record->image_ready = Now();
  if (Status s = FirstError(results); !s.ok()) return give_up(Aborted("warm gang: " + s.message()));
  record->images.clear();
  for (const auto& [image, config] : configs)
    record->images.push_back(RanOf(image, config, RegistryDigest(attempt, image)));
  Result<std::vector<std::vector<std::string>>> argv = WarmArgv(attempt, configs);
  if (!argv.ok()) return give_up(argv.status());
  Status started = StartWarmGang(attempt, gang, *argv);
  return started.ok() ? started : give_up(started);
}

// Gang start, in two steps so that a daemon dying between them leaves no replica that
// cannot run: every launch is prepared (written where the sandbox does not look), then
// each is handed over and its replica runs. A restart finds each sandbox either handed
// its launch or holding it prepared, which RestartReplica hands over; a death before
// every launch was prepared left no replica running, and the attempt is launched again.
Status ContainerExecutor::StartWarmGang(const AttemptSpec& attempt, const WarmGang& gang,
                                        const std::vector<std::vector<std::string>>& argv) {
  const size_t n = attempt.replicas.size();
  std::vector<Status> results(n);
  ForEachConcurrently(n, [&](size_t i) {
    results[i] = WarmPool::PrepareLaunch(gang.sandboxes[i], argv[i], attempt.replicas[i].env);
    return results[i].ok();
  });
  if (Status s = FirstError(results); !s.ok()) {
    return Unavailable("start replica from warm gang: " + s.message());
  }
  ForEachConcurrently(n, [&](size_t i) {
    results[i] = HandOverLaunch(i, gang.sandboxes[i].dir);
    return results[i].ok();
  });
  if (Status s = FirstError(results); !s.ok()) {
    return Unavailable("start replica from warm gang: " + s.message());
  }
  return Status::Ok();
}

Status ContainerExecutor::HandOverLaunch(size_t /*replica*/, const std::string& sandbox_dir) {
  return WarmPool::HandOverLaunch(sandbox_dir);
}

Result<std::string> ContainerExecutor::CreateReplica(const AttemptSpec& attempt,
                                                     const ReplicaLaunch& r,
                                                     const std::vector<std::string>& addresses,
                                                     const std::string& holder) {
  internal::ContainerBody body = ReplicaBody(attempt, r, addresses, holder);
  body.userns_base = ReplicaUsernsBase(r);
  // Podman gives GPUs only to containers created through its own API (RenderLibpodBody).
  const bool native = speaks_libpod_ && (options_.native_create || body.nvidia_gpus > 0 ||
                                         !body.gpu_indices.empty() || body.userns_base > 0);
  auto create = [&] {
    return native ? engine_->CreateContainerLibpod(
                        r.name, internal::RenderLibpodBody(body, r.name, options_.cdi_gpu_kind))
                  : engine_->CreateContainer(r.name, internal::RenderContainerBody(body));
  };
  Result<std::string> id = create();
  if (!id.ok() && NameTaken(id.status()) && IsLeftoverOf(attempt, r.name, engine_.get())) {
    // A daemon killed while this very attempt was being created: the engine finished
    // the create after its client was gone, and recovery saw nothing yet. The leftover
    // carries this attempt's labels, so it is stale: replace it. A container of the
    // name that is not this attempt's is someone else's and fails the launch.
    spdlog::warn("launch {}: replacing leftover container {} of an interrupted launch",
                 attempt.job_uid, r.name);
    engine_->RemoveContainer(r.name).IgnoreError();
    id = create();
  }
  return id;
}

Status ContainerExecutor::LaunchReplicas(const AttemptSpec& attempt, LaunchRecord* record) {
  const size_t n = attempt.replicas.size();
  if (std::optional<WarmGang> gang = warm_->Take(attempt)) {
    Status launched = LaunchWarm(attempt, *gang, record);
    if (launched.code() != StatusCode::kAborted) {
      for (const Sandbox& box : gang->sandboxes) record->containers.push_back(box.id);
      record->warm = launched.ok();
      return launched;
    }
    spdlog::info("executor: {}; launching {}/{} cold", launched.message(), attempt.job_uid,
                 attempt.attempt);
  }
  // The network does not depend on the images: create it while they are checked
  // (or pulled), so a gang launch pays for the slower of the two only.
  std::string network;  // Set only when this launch created it, so only then removed.
  std::vector<std::string> addresses;
  std::future<Status> network_ready;
  if (attempt.peers_talk) {
    network_ready = std::async(std::launch::async,
                               [&] { return CreateNetwork(attempt, &network, &addresses); });
  }
  Status images = EnsureImages(attempt, &record->images);
  record->image_ready = Now();
  Status net = network_ready.valid() ? network_ready.get() : Status::Ok();
  if (!images.ok() || !net.ok()) {
    RemoveAll({}, network);
    return images.ok() ? net : images;
  }

  for (const ReplicaLaunch& r : attempt.replicas) record->containers.push_back(r.name);
  std::vector<std::string> holders = AcquireSlots(attempt);
  Status s = CreateAndStart(attempt, addresses, holders);
  if (const std::string* bad = s.ok() ? nullptr : FailedHolder(holders, s)) {
    // The engine lost the holder (removed by hand, its namespace gone) or cannot start
    // it: never again, and this launch goes on without slots.
    spdlog::warn("launch {}: network slot {} failed ({}); launching without", attempt.job_uid, *bad,
                 s.message());
    for (const std::string& h : holders) {
      if (!h.empty()) slots_->Discard(h);
    }
    holders.assign(n, "");
    s = CreateAndStart(attempt, addresses, holders);
  }
  if (!s.ok()) {
    RemoveAll({}, network);
    for (const std::string& h : holders) {
      if (!h.empty()) slots_->Release(h);
    }
  }
  return s;
}

const std::string* ContainerExecutor::FailedHolder(const std::vector<std::string>& holders,
                                                   const Status& failure) {
  for (const std::string& h : holders) {
    if (!h.empty() && failure.message().find(h) != std::string::npos) return &h;
  }
  // Podman's error for a namespace owner it could not start does not name it.
  for (const std::string& h : holders) {
    if (!h.empty() && !slots_->Running(h)) return &h;
  }
  return nullptr;
}

std::vector<std::string> ContainerExecutor::AcquireSlots(const AttemptSpec& attempt) {
  std::vector<std::string> holders(attempt.replicas.size());
  if (attempt.peers_talk || attempt.shells || !slots_->enabled()) return holders;
  for (std::string& h : holders) {
    Result<std::string> holder = slots_->Acquire();
    // Without a slot the replica gets a namespace of its own, as always.
    if (holder.ok()) {
      h = *holder;
    } else {
      spdlog::warn("executor: {}", holder.status().ToString());
    }
  }
  return holders;
}

Status ContainerExecutor::CreateAndStart(const AttemptSpec& attempt,
                                         const std::vector<std::string>& addresses,
                                         const std::vector<std::string>& holders) {
  const size_t n = attempt.replicas.size();
  // Gang start: every replica exists before any runs, so no replica starts
  // unless all of them could be created.
  std::vector<std::string> created;
  Status s = CreateGang(attempt, addresses, holders, &created);
  // A shutdown that began while the gang was created starts none of it: a launch is
  // either started (and its outcome recorded) or never started.
  if (s.ok() && work_.shutting_down()) s = Cancelled("launch: executor is shutting down");
  if (s.ok()) {
    std::vector<Status> results(n);
    ForEachConcurrently(n, [&](size_t i) {
      results[i] = StartReplica(attempt.replicas[i]);
      return results[i].ok();
    });
    s = FirstError(results);
  }
  // Before any holder serves another replica.
  if (!s.ok()) RemoveAll(created, "");
  return s;
}

Status ContainerExecutor::CreateGang(const AttemptSpec& attempt,
                                     const std::vector<std::string>& addresses,
                                     const std::vector<std::string>& holders,
                                     std::vector<std::string>* created) {
  const size_t n = attempt.replicas.size();
  std::vector<Status> results(n);
  std::vector<char> made(n, 0);
  ForEachConcurrently(n, [&](size_t i) {
    const ReplicaLaunch& r = attempt.replicas[i];
    if (work_.shutting_down()) {
      results[i] = Cancelled("launch: executor is shutting down");
      return false;
    }
    Result<std::string> id = CreateReplica(attempt, r, addresses, holders[i]);
    if (!id.ok()) {
      results[i] = Unavailable("create replica " + r.name + ": " + id.status().message());
      return false;
    }
    made[i] = 1;
    return true;
  });
  for (size_t i = 0; i < n; ++i) {
    if (made[i]) created->push_back(attempt.replicas[i].name);
  }
  return FirstError(results);
}

Status ContainerExecutor::StartReplica(const ReplicaLaunch& r) {
  Status s = engine_->StartContainer(r.name);
  if (s.ok()) return s;
  std::string why = "start replica " + r.name + ": " + s.message();
  // Podman resolves CDI devices only at start; without NVIDIA's spec none exists.
  if (s.message().find("CDI device") != std::string::npos) {
    why +=
        " (no CDI spec names these GPUs: on the host, run `nvidia-ctk cdi generate "
        "--output=/etc/cdi/nvidia.yaml`)";
  }
  return Unavailable(why);
}

Status ContainerExecutor::RemoveReplica(const std::string& id) {
  // Podman 4.3 unmounts a stopped container's /dev/shm in its own cleanup process; a
  // remove that comes first (seen with replicas in a user namespace, right after their
  // stop) fails with "device or resource busy" on that mount, which is gone moments
  // later: try again for up to 5 s, unless the daemon is stopping (the next one's
  // recovery removes what is left).
  for (int attempt = 0;; ++attempt) {
    Status s = engine_->RemoveContainer(id);
    if (s.ok() || attempt >= 25 || work_.shutting_down() ||
        s.message().find("device or resource busy") == std::string::npos) {
      return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

void ContainerExecutor::RemoveAll(const std::vector<std::string>& containers,
                                  const std::string& network) {
  // Force-removal kills running ones first; failures here are only logged:
  // Cleanup() retries by label.
  ForEachConcurrently(containers.size(), [&](size_t i) {
    Status s = RemoveReplica(containers[i]);
    if (!s.ok()) spdlog::warn("executor: {}", s.ToString());
    return true;
  });
  if (!network.empty()) {
    Status s = engine_->RemoveNetwork(network);
    if (!s.ok()) spdlog::warn("executor: {}", s.ToString());
  }
}

}  // namespace ty::executor
