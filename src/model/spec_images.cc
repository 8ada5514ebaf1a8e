#include "model/spec_images.h"

#include <algorithm>
#include <map>

#include "images/google_names.h"
#include "images/reference.h"
#include "images/runtimes.h"

namespace ty::model {

namespace {

std::string ImagePath(const JobSpec& spec, size_t pool) {
  const WorkerPool& p = spec.pools[pool];
  if (spec.dialect == Dialect::kMlV1) {
    if (p.python_package) return "trainingInput.runtimeVersion";
    static constexpr const char* kRoles[] = {"masterConfig", "workerConfig",
                                             "parameterServerConfig", "evaluatorConfig"};
    return std::string("trainingInput.") + kRoles[pool < 4 ? pool : 0] + ".imageUri";
  }
  return "jobSpec.workerPoolSpecs[" + std::to_string(pool) + "]" +
         (p.python_package ? ".pythonPackageSpec.executorImageUri" : ".containerSpec.imageUri");
}

// The image a pool's replicas run (its executor image for a package pool).
const std::string* ImageOf(const WorkerPool& p) {
  return p.container        ? &p.container->image_uri
         : p.python_package ? &p.python_package->executor_image_uri
                            : nullptr;
}

}  // namespace

Status CheckSpecImages(const JobSpec& spec) {
  for (size_t i = 0; i < spec.pools.size(); ++i) {
    const WorkerPool& p = spec.pools[i];
    const std::string* image = ImageOf(p);
    if (image == nullptr || p.empty()) continue;
    // An ml v1 package job names no image: the runtime image comes from runtimeVersion
    // at launch, not from the request.
    if (image->empty() && p.python_package && spec.dialect == Dialect::kMlV1) continue;
    Result<images::ImageReference> parsed = images::ParseImageReference(*image);
    if (!parsed.ok()) return FieldError(ImagePath(spec, i), parsed.status().message());
    RETURN_IF_ERROR(images::CheckPrebuiltAvailable(*image, ImagePath(spec, i)));
  }
  return Status::Ok();
}

Status CheckRuntimesBuilt(const JobSpec& spec,
                          const std::function<bool(const std::string& local_image)>& built) {
  std::map<const images::Runtime*, bool> asked;
  for (size_t i = 0; i < spec.pools.size(); ++i) {
    const std::string* image = ImageOf(spec.pools[i]);
    if (image == nullptr || spec.pools[i].empty()) continue;
    const images::Runtime* runtime = images::RuntimeOf(*image);
    if (runtime == nullptr) continue;
    auto [it, first] = asked.try_emplace(runtime, true);
    if (first) it->second = built(std::string(runtime->local_image));
    if (it->second) continue;
    const std::string name(runtime->name);
    return FailedPrecondition(ImagePath(spec, i) + ": " + *image + " runs on the " + name +
                              " runtime (" + std::string(runtime->local_image) +
                              "), which is not built on this server: build it with "
                              "`trainyard images build " +
                              name + "` (minutes, once), then submit the job again")
        .WithField(ImagePath(spec, i));
  }
  return Status::Ok();
}

Status CheckImageProjects(const std::string& project, const JobSpec& spec) {
  for (size_t i = 0; i < spec.pools.size(); ++i) {
    const WorkerPool& pool = spec.pools[i];
    std::string image, field;
    if (pool.container) {
      image = pool.container->image_uri;
      field = "containerSpec.imageUri";
    } else if (pool.python_package) {
      image = pool.python_package->executor_image_uri;
      field = "pythonPackageSpec.executorImageUri";
    }
    std::optional<std::string> owner = images::GoogleImageProject(image);
    if (!owner || *owner == project) continue;
    const auto& shared = images::SharedImageProjects();
    if (std::find(shared.begin(), shared.end(), *owner) != shared.end()) continue;
    const std::string path = "workerPoolSpecs[" + std::to_string(i) + "]." + field;
    return PermissionDenied(path + ": " + image + " is an image of project " + *owner +
                            "; a job of project " + project +
                            " pulls only its own project's images (gcr.io/" + project +
                            "/..., REGION-docker.pkg.dev/" + project +
                            "/...) and the shared "
                            "runtimes'");
  }
  return Status::Ok();
}

}  // namespace ty::model
