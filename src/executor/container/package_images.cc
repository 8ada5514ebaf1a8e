#include "executor/container/package_images.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "executor/container/container_body.h"
#include "executor/container/package_digest.h"
#include "model/runtime_env.h"

namespace ty::executor::internal {

namespace {

namespace fs = std::filesystem;

// Where the install container sees the packages: one directory per package, so two
// packages of the same file name (from two buckets) do not collide, and pip finds each
// by its own name (a wheel's name is its metadata).
constexpr char kPackagesDir[] = "/trainyard/packages";
// Packages are copied before they are hashed and mounted; more than this is refused.
constexpr int64_t kMaxPackageBytes = 2LL * 1024 * 1024 * 1024;

// Offline and without build isolation: the image's own setuptools builds sdists, and
// every requirement must already be in the image (or among the packages given).
// PIP_BREAK_SYSTEM_PACKAGES: Debian's Python refuses pip installs outside a venv
// (PEP 668); in an image of its own that is what is wanted. Environment variables,
// not flags, so an older pip in a user's image ignores what it does not know.
// What the install script prints when its memory cgroup killed a process.
constexpr char kOutOfMemoryLine[] = "trainyard: the install ran out of memory";

std::string InstallScript(size_t count, bool wheelhouse) {
  std::string find_links, targets;
  if (wheelhouse) find_links = std::string(" --find-links ") + model::kReplicaWheelhouse;
  for (size_t i = 0; i < count; ++i) {
    const std::string dir = std::string(kPackagesDir) + "/" + std::to_string(i);
    find_links += " --find-links " + dir;
    targets += " " + dir + "/*";
  }
  // pip runs a package's build in a child: the kernel's OOM killer takes that child,
  // pip exits 1 and the engine reports no OOM of the container. The container's own
  // memory cgroup counts the kill (cgroup v2 memory.events, v1 memory.oom_control), so
  // the script says so and exits 137 (plain sh, no grep: any executor image).
  return "cd /tmp && python3 -m pip install --no-index --no-cache-dir "
         "--disable-pip-version-check --no-build-isolation" +
         find_links + targets +
         " 2>&1; rc=$?; for f in /sys/fs/cgroup/memory.events "
         "/sys/fs/cgroup/memory/memory.oom_control; do [ -r \"$f\" ] || continue; "
         "while read -r k v; do if [ \"$k\" = oom_kill ] && [ \"$v\" != 0 ]; then echo \"" +
         std::string(kOutOfMemoryLine) + "\"; exit 137; fi; done < \"$f\"; done; exit $rc";
}

// "gs://b/dir/p.tar.gz" -> ("b", "dir/p.tar.gz"); nullopt for anything that could
// leave the bucket ("..", empty segments).
std::optional<std::pair<std::string, std::string>> SplitPackageUri(const std::string& uri) {
  constexpr std::string_view kScheme = "gs://";
  if (uri.rfind(kScheme, 0) != 0) return std::nullopt;
  std::string rest = uri.substr(kScheme.size());
  size_t slash = rest.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == rest.size()) return std::nullopt;
  std::string bucket = rest.substr(0, slash), object = rest.substr(slash + 1);
  for (size_t start = 0;;) {
    size_t end = object.find('/', start);
    std::string segment = object.substr(start, end == std::string::npos ? end : end - start);
    if (segment.empty() || segment == "." || segment == "..") return std::nullopt;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return std::make_pair(bucket, object);
}

// Copies `from` (a regular file, never through a symbolic link: a replica may have
// written the bucket) to `to`, mode 0644.
Status CopyRegularFile(const std::string& root, const std::string& bucket,
                       const std::string& object, const std::string& to, int64_t* budget) {
  const std::string uri = "gs://" + bucket + "/" + object;
  // Every directory on the way is opened without following links.
  int dir = ::open((root + "/" + bucket).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return NotFound("package " + uri + ": no such bucket");
  std::string object_rest = object;
  for (size_t slash; (slash = object_rest.find('/')) != std::string::npos;) {
    int next = ::openat(dir, object_rest.substr(0, slash).c_str(),
                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    ::close(dir);
    if (next < 0) return NotFound("package " + uri + " does not exist");
    dir = next;
    object_rest = object_rest.substr(slash + 1);
  }
  int in = ::openat(dir, object_rest.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  ::close(dir);
  if (in < 0) return NotFound("package " + uri + " does not exist (or is not a file)");
  struct stat file_info {};
  if (::fstat(in, &file_info) != 0 || !S_ISREG(file_info.st_mode)) {
    ::close(in);
    return InvalidArgument("package " + uri + " is not a file");
  }
  *budget -= file_info.st_size;
  if (*budget < 0) {
    ::close(in);
    return InvalidArgument("the packages of a pool may hold at most 2 GiB");
  }
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    ::close(in);
    return Internal("package copy " + to + ": " + std::strerror(errno));
  }
  char buf[1 << 16];
  ssize_t n = 0;
  bool ok = true;
  while (ok && (n = ::read(in, buf, sizeof buf)) > 0) ok = ::write(out, buf, n) == n;
  ok = ok && n == 0;
  ::close(in);
  ok = ::close(out) == 0 && ok;
  return ok ? Status::Ok() : Internal("package copy " + to + " failed");
}

// A private copy of the packages, removed with this object.
class StagedPackages {
 public:
  ~StagedPackages() {
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }
  Status Stage(const std::string& bucket_root, const std::vector<std::string>& uris) {
    std::string tmpl = (fs::temp_directory_path() / "trainyard-packages-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      return Internal("mkdtemp: " + std::string(std::strerror(errno)));
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);  // Readable by the install container's root.
    int64_t budget = kMaxPackageBytes;
    for (size_t i = 0; i < uris.size(); ++i) {
      auto split = SplitPackageUri(uris[i]);
      if (!split) return InvalidArgument("package URI " + uris[i] + " is not gs://BUCKET/OBJECT");
      const std::string sub = dir_ + "/" + std::to_string(i);
      ::mkdir(sub.c_str(), 0755);
      const std::string name = split->second.substr(split->second.rfind('/') + 1);
      paths_.push_back(sub + "/" + name);
      RETURN_IF_ERROR(
          CopyRegularFile(bucket_root, split->first, split->second, paths_.back(), &budget));
    }
    return Status::Ok();
  }
  const std::string& dir() const { return dir_; }
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::string dir_;
  std::vector<std::string> paths_;
};

}  // namespace

Result<std::string> PackageImages::KeyFor(const std::string& image_id,
                                          const std::vector<std::string>& uris,
                                          const std::vector<std::string>& host_paths) {
  Sha256 total;
  auto add = [&](const std::string& s) {
    total.Add(s);
    total.Add("\n");
  };
  add("v2");  // Bump when the install script changes what an image holds.
  add(image_id);
  for (size_t i = 0; i < uris.size() && i < host_paths.size(); ++i) {
    Result<std::string> digest = PackageDigest(host_paths[i]);
    if (!digest.ok()) {
      return Status(digest.status().code(),
                    "package " + uris[i] + " cannot be read: " + digest.status().message());
    }
    // The bucket (one project's: no two projects share an installed image) and the
    // file name (pip reads a wheel's tags and a package's kind from it), not the path
    // between: gcloud stages every submit's package under a path of its own.
    const std::string bucket = uris[i].substr(0, uris[i].find('/', 5));  // "gs://B"
    add(bucket + " " + fs::path(uris[i]).filename().string());
    add(*digest);
  }
  return total.Hex().substr(0, 32);
}

Result<std::string> PackageImages::Prepare(const std::string& image,
                                           const std::vector<std::string>& packages,
                                           const InstallLimits& limits,
                                           const std::function<bool()>& stop,
                                           const std::function<void(const std::string&)>& say) {
  if (packages.empty()) return image;
  StagedPackages staged;
  RETURN_IF_ERROR(staged.Stage(options_.bucket_root, packages));
  ASSIGN_OR_RETURN(ImageConfig config, engine_->InspectImage(image));
  ASSIGN_OR_RETURN(std::string tag, KeyFor(config.id, packages, staged.paths()));
  const std::string target = std::string(kPackageImageRepo) + ":" + tag;
  std::lock_guard<std::mutex> lock(install_mu_);
  ASSIGN_OR_RETURN(bool cached, engine_->ImageExists(target));
  if (cached) return target;
  say("Installing the Python packages into " + image +
      " (pip, offline); replicas, trials and jobs with the same packages start from the result "
      "without installing.");
  const auto started = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::string pip_said, Install(image, staged.paths(), tag, limits, stop, say));
  char took[32];
  std::snprintf(took, sizeof took, "%.1f",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  say("Installed the Python packages in " + std::string(took) + " s (pip: " + pip_said + ").");
  Prune(target);
  return target;
}

void PackageImages::Prune(const std::string& just_made) {
  Result<std::vector<ImageSummary>> images = engine_->ListImages(kPackageImageRepo);
  if (!images.ok()) {
    spdlog::warn("package images: cannot list them to prune: {}", images.status().message());
    return;
  }
  std::vector<std::pair<int64_t, std::string>> by_age;  // (created, tag)
  for (const ImageSummary& image : *images) {
    for (const std::string& tag : image.tags) {
      if (tag != just_made && tag.rfind(std::string(kPackageImageRepo) + ":", 0) == 0) {
        by_age.emplace_back(image.created, tag);
      }
    }
  }
  if (by_age.size() + 1 <= options_.keep_images) return;
  std::sort(by_age.begin(), by_age.end());
  const size_t excess = by_age.size() + 1 - options_.keep_images;
  for (size_t i = 0; i < excess && i < by_age.size(); ++i) {
    Status removed = engine_->RemoveImage(by_age[i].second);
    if (!removed.ok() && removed.code() != StatusCode::kNotFound) {
      spdlog::info("package images: kept {}: {}", by_age[i].second, removed.message());
    }
  }
}

namespace {

Status InstallRanOutOfMemory(const InstallLimits& limits) {
  char gb[32];
  std::snprintf(gb, sizeof gb, "%.2f", static_cast<double>(limits.memory_bytes) / (1 << 30));
  return FailedPrecondition(
      "installing the Python packages ran out of memory: the install runs within the first "
      "pool's machine type, " +
      std::string(gb) + " GB here (pip or a package's setup.py used more)");
}

}  // namespace

// The install container: pip over the packages mounted read-only, no network.
ContainerBody PackageImages::InstallBody(const std::string& image,
                                         const std::vector<std::string>& host_paths,
                                         const InstallLimits& limits) const {
  ContainerBody body;
  // Inside the job's admitted share: a setup.py runs whatever it likes.
  body.cpu_limit = limits.cpus;
  body.memory_bytes = limits.memory_bytes;
  body.pids_limit = limits.pids;
  body.image = image;
  body.entrypoint = std::vector<std::string>{"/bin/sh", "-c"};
  body.cmd =
      std::vector<std::string>{InstallScript(host_paths.size(), !options_.wheelhouse.empty())};
  body.env = std::vector<std::string>{
      "PIP_BREAK_SYSTEM_PACKAGES=1", "PIP_ROOT_USER_ACTION=ignore", "PIP_NO_INPUT=1",
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
  body.labels = options_.labels;
  body.no_network = true;
  body.userns_base = options_.userns_base;
  for (size_t i = 0; i < host_paths.size(); ++i) {
    const std::string dir = host_paths[i].substr(0, host_paths[i].rfind('/'));
    body.binds.push_back(dir + ":" + kPackagesDir + "/" + std::to_string(i) + ":ro");
  }
  if (!options_.wheelhouse.empty()) {
    body.binds.push_back(options_.wheelhouse + ":" + model::kReplicaWheelhouse + ":ro");
  }
  return body;
}

Result<std::string> PackageImages::Install(const std::string& image,
                                           const std::vector<std::string>& host_paths,
                                           const std::string& tag, const InstallLimits& limits,
                                           const std::function<bool()>& stop,
                                           const std::function<void(const std::string&)>& say) {
  ContainerBody body = InstallBody(image, host_paths, limits);
  const std::string name = "ty-pkg-" + tag;
  engine_->RemoveContainer(name).IgnoreError();  // A daemon killed mid-install left it.
  const bool native = options_.native_create || body.userns_base > 0;
  Result<std::string> id =
      native ? engine_->CreateContainerLibpod(name, RenderLibpodBody(body, name, ""))
             : engine_->CreateContainer(name, RenderContainerBody(body));
  if (!id.ok())
    return Unavailable("create the package install container: " + id.status().message());
  Status done = engine_->StartContainer(*id);
  Result<int> exit_code = done.ok() ? RunToEnd(*id, stop) : Result<int>(done);
  std::string pip_said;
  if (exit_code.ok()) {
    std::istringstream lines(LastLines(*id, kSaidLines));
    for (std::string line; std::getline(lines, line);) say("pip: " + line);
  }
  Result<ContainerState> ended =
      exit_code.ok() ? engine_->InspectContainer(*id) : Result<ContainerState>(exit_code.status());
  const bool oom = exit_code.ok() && *exit_code != 0 &&
                   ((ended.ok() && ended->oom_killed) ||
                    LastLines(*id, 1).find(kOutOfMemoryLine) != std::string::npos);
  if (oom) {
    done = InstallRanOutOfMemory(limits);
  } else if (exit_code.ok() && *exit_code == 0) {
    pip_said = LastLines(*id, 1);
    done = engine_->CommitContainer(*id, kPackageImageRepo, tag);
  } else if (exit_code.ok()) {
    done = FailedPrecondition("installing the Python packages failed (pip exited " +
                              std::to_string(*exit_code) + "): " + LastLines(*id, 12));
  } else {
    done = exit_code.status();
  }
  engine_->RemoveContainer(*id).IgnoreError();
  if (!done.ok()) return done;
  return pip_said;
}

Result<int> PackageImages::RunToEnd(const std::string& id, const std::function<bool()>& stop) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  for (;;) {
    ASSIGN_OR_RETURN(ContainerState state, engine_->InspectContainer(id));
    if (!state.running && state.status != "created" && state.status != "configured") {
      return state.exit_code;
    }
    if (stop && stop()) return Aborted("the daemon is stopping");
    if (std::chrono::steady_clock::now() > deadline) {
      engine_->KillContainer(id, 9).IgnoreError();
      return DeadlineExceeded("installing the Python packages took longer than " +
                              std::to_string(options_.timeout_ms / 60000) + " minutes");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string PackageImages::LastLines(const std::string& id, size_t n) {
  std::deque<std::string> lines;
  engine_
      ->StreamLogs(
          id, /*follow=*/false, 0,
          [&](int, std::string_view line) {
            // The engine's timestamp prefix ("2024-…Z ") is not pip's.
            size_t space = line.find(' ');
            lines.emplace_back(space == std::string_view::npos ? line : line.substr(space + 1));
            if (lines.size() > n) lines.pop_front();
          },
          nullptr)
      .IgnoreError();
  std::string out;
  for (const std::string& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out.empty() ? "(pip printed nothing)" : out;
}

}  // namespace ty::executor::internal
