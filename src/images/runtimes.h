// The prebuilt training runtimes this project ships, and the names users bring for them
// from Vertex AI (prebuilt training containers), Deep Learning Containers (the bases the
// guides' Dockerfiles start FROM) and AI Platform Training (`runtimeVersion`).
//
// Each runtime is an image built here from Debian 12 packages (`trainyard images
// build`): Python 3.11 with pip, setuptools, wheel, curl and a `python` command. Debian
// packages no TensorFlow, so a TensorFlow name has no runtime: it is refused at submit
// (400 listing what there is). GPU names run their CPU build here (PyTorch from Debian
// is built without CUDA); the catalogue says so. Pure; thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ty::images {

struct Runtime {
  std::string_view name;         // "scikit-learn": what `trainyard images build` takes.
  std::string_view local_image;  // What it is built as, in the engine's local storage.
  std::string_view packages;     // The Debian packages it is made of (comma-separated).
  std::string_view contents;     // For people: the frameworks and their versions.
};

std::span<const Runtime> Runtimes();
const Runtime* FindRuntime(std::string_view name);

// What a name that stands for a prebuilt image is here.
struct PrebuiltMatch {
  const Runtime* runtime = nullptr;  // Null: a TensorFlow name (no runtime here).
  std::string note;                  // Set when a CPU build stands in for a GPU/TPU name.
};

// Nullopt for a name that is no prebuilt name (the user's own image). Recognised:
// {us,europe,asia}-docker.pkg.dev/vertex-ai[-restricted]/training/FRAMEWORK-KIND.VERSION
// and gcr.io/deeplearning-platform-release/NAME (also under
// {us,europe,asia}-docker.pkg.dev/deeplearning-platform-release/gcr.io/NAME), any tag.
std::optional<PrebuiltMatch> MatchPrebuilt(std::string_view image_uri);

// InvalidArgument at `path` for a TensorFlow name (listing the runtimes there are); OK
// for every other name.
Status CheckPrebuiltAvailable(std::string_view image_uri, const std::string& path);

// The image a replica runs for `image_uri`: the runtime's local image for a prebuilt
// name, the name itself otherwise.
std::string ResolveImage(std::string_view image_uri);

// The runtime a replica of `image_uri` runs: a prebuilt name's, or the one whose local
// image it names; null for a user's own image (and a TensorFlow name).
const Runtime* RuntimeOf(std::string_view image_uri);

// The runtime an ml v1 package job runs on. Every AI Platform runtime version bundled
// scikit-learn and XGBoost (and TensorFlow, which Debian lacks), so every version maps to
// the scikit-learn runtime; `pythonVersion` is Debian 12's Python 3.11 whatever it says.
const Runtime& MlRuntime(std::string_view runtime_version);

// InvalidArgument naming `runtime_path` for a runtimeVersion AI Platform Training never
// published, or `python_path` for a pythonVersion no runtime of that version had (each
// listing what exists); OK for "" (not given).
Status CheckMlRuntimeVersion(std::string_view runtime_version, std::string_view python_version,
                             const std::string& runtime_path, const std::string& python_path);

// What a package job on `runtime_version` runs, for the first line of its log: the
// runtime image, its Python, and what AI Platform's runtime had that this one lacks.
std::string DescribeMlRuntime(std::string_view runtime_version, std::string_view python_version);

// One line per runtime: "NAME  IMAGE  STATE  CONTENTS", STATE being what `state_of`
// says of it (whether it is built here, and its size), then the names that map to each.
std::string DescribeRuntimes(const std::function<std::string(const Runtime&)>& state_of);

// A Python-package pool's packages installed into its executor image are kept as an
// image of this repository (executor/container/package_images.h), reused by every job
// with the same executor image and packages; at most kPackageInstallsKept of them,
// the oldest removed first.
inline constexpr char kPackageImageRepo[] = "localhost/trainyard/packages";
inline constexpr size_t kPackageInstallsKept = 32;

}  // namespace ty::images
