// Internal to executor/: Python packages installed into a pool's executor image once.
//
// A Python-package pool (Vertex pythonPackageSpec, ml v1 packageUris) runs
// `python3 -m MODULE` in its executor image with its packages installed. They are
// installed with pip in a container of their own: the executor image, the packages
// mounted read-only, no network (pip runs with --no-index, so a requirement the image
// lacks fails with pip's message naming it), the replicas' user namespace. The container
// is then committed as the image `localhost/trainyard/packages:<key>`, where the key
// hashes the executor image's id and each package's bucket, file name and what it holds
// (package_digest.h: the files, not the archive's bytes, so gcloud's fresh sdist of the
// same trainer on every submit hits): every later replica, trial and job with the same
// inputs starts from that image without pip. A bucket belongs to one project, so no two
// projects share an installed image.
//
// Installed images beyond a bound are removed, oldest first (Options::keep_images).
//
// Thread-safe; installs run one at a time (pip is CPU-bound, and two launches of one
// key must not install twice).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/container/container_body.h"
#include "executor/container/engine_client.h"
#include "images/runtimes.h"

namespace ty::executor::internal {

using images::kPackageImageRepo;

// What one install may use: the pool's admitted share (its first replica's grant), so
// pip and a package's setup.py run inside the resources admission gave the job.
struct InstallLimits {
  double cpus = 0;           // 0 = no CPU limit.
  int64_t memory_bytes = 0;  // 0 = no memory limit.
  int64_t pids = 4096;       // Processes and threads at once (a fork bomb in setup.py).
};

class PackageImages {
 public:
  struct Options {
    std::string bucket_root;   // Host directory of the buckets (gs://B/O = <root>/B/O).
    std::string wheelhouse;    // Host directory of wheels pip may take requirements from.
    uint32_t userns_base = 0;  // The replicas' user namespace (0 = host ids).
    bool native_create = false;
    std::map<std::string, std::string> labels;  // On the install container.
    // An install that runs longer fails (DeadlineExceeded naming it). Documented in the
    // docs/runtimes.md: 15 minutes, far past a pip install of wheels and sdists without network.
    int64_t timeout_ms = 15LL * 60 * 1000;
    // Installed images kept: after each new install the oldest beyond this many are
    // removed (never one a container uses), so distinct packages cannot fill the disk.
    size_t keep_images = images::kPackageInstallsKept;
  };
  PackageImages(EngineClient* engine, Options options)
      : engine_(engine), options_(std::move(options)) {}

  // The image to run: `image` with `packages` (gs:// URIs) installed. `image` must be
  // present. FailedPrecondition with pip's last lines when the install fails;
  // NotFound naming a package that is not in its bucket. `stop` is polled while pip
  // runs (the daemon stopping); true abandons the install.
  // `say` gets what the job's log should tell: that pip runs (not when the image exists
  // already), then pip's last line ("Successfully installed trainer-0.1") and how long.
  // `limits`: the pool's grant; an install killed for memory fails saying so. pip's
  // output goes to `say` too, each line as "pip: ...", at most kSaidLines of them.
  Result<std::string> Prepare(
      const std::string& image, const std::vector<std::string>& packages,
      const InstallLimits& limits, const std::function<bool()>& stop,
      const std::function<void(const std::string&)>& say = [](const std::string&) {});
  static constexpr size_t kSaidLines = 200;

  // The tag Prepare uses for these inputs: a hash of the image id and of each
  // package's bucket, file name and contents (PackageDigest). Exposed for tests.
  static Result<std::string> KeyFor(const std::string& image_id,
                                    const std::vector<std::string>& uris,
                                    const std::vector<std::string>& host_paths);

  // Removes installed images beyond Options::keep_images, oldest first, never
  // `just_made` (Prepare calls it after each install; public for tests).
  void Prune(const std::string& just_made);

 private:
  // pip's last line on success.
  Result<std::string> Install(const std::string& image, const std::vector<std::string>& host_paths,
                              const std::string& tag, const InstallLimits& limits,
                              const std::function<bool()>& stop,
                              const std::function<void(const std::string&)>& say);
  ContainerBody InstallBody(const std::string& image, const std::vector<std::string>& host_paths,
                            const InstallLimits& limits) const;
  Result<int> RunToEnd(const std::string& id, const std::function<bool()>& stop);
  std::string LastLines(const std::string& id, size_t n);

  EngineClient* engine_;
  Options options_;
  std::mutex install_mu_;
};

}  // namespace ty::executor::internal
