#include "images/runtimes.h"

#include <array>

namespace ty::images {

namespace {

// What every runtime has beside its frameworks: the guides' Dockerfiles run
// `RUN pip install …` and `ENTRYPOINT ["python", "task.py"]`, and packages are installed
// with pip (service: Python packages, executor/container/package_images.h); protobuf, so
// training code can write TensorBoard event files (tensorboard/indexer.h reads them).
#define TY_RUNTIME_TOOLS                                                            \
  "python3,python3-pip,python3-setuptools,python3-wheel,python-is-python3,curl,ca-" \
  "certificates,python3-protobuf"

constexpr std::array<Runtime, 2> kRuntimes = {{
    {"scikit-learn", "localhost/trainyard/sklearn-cpu:latest",
     TY_RUNTIME_TOOLS ",python3-numpy,python3-sklearn,python3-xgboost,python3-pandas",
     "Python 3.11, scikit-learn 1.2, XGBoost 1.7, pandas 1.5, NumPy 1.24, SciPy 1.10, "
     "protobuf 3.21"},
    {"pytorch", "localhost/trainyard/torch-cpu:latest",
     TY_RUNTIME_TOOLS ",python3-numpy,python3-torch",
     "Python 3.11, PyTorch 1.13 (CPU; gloo for distributed training), NumPy 1.24, "
     "protobuf 3.21"},
}};
#undef TY_RUNTIME_TOOLS

// "host/path/name:tag" -> "host/path/name" (a ':' after the last '/' starts the tag);
// a digest ("@sha256:…") goes too.
std::string_view WithoutTag(std::string_view uri) {
  uri = uri.substr(0, uri.find('@'));
  size_t slash = uri.rfind('/');
  size_t colon = uri.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    uri = uri.substr(0, colon);
  }
  return uri;
}

// The repository name of a prebuilt image ("sklearn-cpu.1-0"), or "" for other names.
std::string_view PrebuiltRepository(std::string_view uri) {
  uri = WithoutTag(uri);
  for (std::string_view region : {"us-", "europe-", "asia-"}) {
    std::string_view host_path = uri;
    if (!host_path.starts_with(region)) continue;
    host_path.remove_prefix(region.size());
    for (std::string_view prefix :
         {"docker.pkg.dev/vertex-ai/training/", "docker.pkg.dev/vertex-ai-restricted/training/",
          "docker.pkg.dev/deeplearning-platform-release/gcr.io/"}) {
      if (host_path.starts_with(prefix)) return host_path.substr(prefix.size());
    }
  }
  for (std::string_view prefix :
       {"gcr.io/deeplearning-platform-release/", "us.gcr.io/deeplearning-platform-release/",
        "eu.gcr.io/deeplearning-platform-release/", "asia.gcr.io/deeplearning-platform-release/"}) {
    if (uri.starts_with(prefix)) return uri.substr(prefix.size());
  }
  return {};
}

}  // namespace

std::span<const Runtime> Runtimes() { return kRuntimes; }

const Runtime* FindRuntime(std::string_view name) {
  if (name == "sklearn" || name == "xgboost") name = "scikit-learn";  // One image has both.
  if (name == "torch") name = "pytorch";
  for (const Runtime& r : kRuntimes) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::optional<PrebuiltMatch> MatchPrebuilt(std::string_view image_uri) {
  std::string_view repo = PrebuiltRepository(image_uri);
  if (repo.empty() || repo.find('/') != std::string_view::npos) return std::nullopt;
  // "pytorch-gpu.1-13.py310" -> framework "pytorch", kind "gpu".
  std::string_view head = repo.substr(0, repo.find('.'));
  size_t dash = head.rfind('-');
  std::string_view framework = dash == std::string_view::npos ? head : head.substr(0, dash);
  std::string_view kind = dash == std::string_view::npos ? "" : head.substr(dash + 1);
  PrebuiltMatch match;
  if (framework == "tf" || framework == "tf2" || framework == "tensorflow") return match;
  if (framework == "sklearn" || framework == "scikit-learn" || framework == "xgboost" ||
      framework == "base") {
    match.runtime = FindRuntime("scikit-learn");
  } else if (framework == "pytorch") {
    match.runtime = FindRuntime("pytorch");
  } else {
    return std::nullopt;  // r-cpu, beam-notebooks, …: nothing here stands in for them.
  }
  if (!kind.empty() && kind != "cpu") {
    match.note = std::string(image_uri) + " runs as the CPU build here (" +
                 std::string(match.runtime->local_image) + "): Debian builds it without CUDA";
  }
  return match;
}

Status CheckPrebuiltAvailable(std::string_view image_uri, const std::string& path) {
  std::optional<PrebuiltMatch> match = MatchPrebuilt(image_uri);
  if (!match || match->runtime != nullptr) return Status::Ok();
  std::string available;
  for (const Runtime& r : kRuntimes) {
    available += (available.empty() ? "" : "; ") + std::string(r.name) + " (" +
                 std::string(r.contents) + ")";
  }
  return FieldError(path, "\"" + std::string(image_uri) +
                              "\" is a TensorFlow image, and this server has no TensorFlow "
                              "runtime (Debian packages none). Prebuilt runtimes here: " +
                              available);
}

std::string ResolveImage(std::string_view image_uri) {
  std::optional<PrebuiltMatch> match = MatchPrebuilt(image_uri);
  if (match && match->runtime != nullptr) return std::string(match->runtime->local_image);
  return std::string(image_uri);
}

const Runtime* RuntimeOf(std::string_view image_uri) {
  if (std::optional<PrebuiltMatch> match = MatchPrebuilt(image_uri)) return match->runtime;
  for (const Runtime& r : kRuntimes) {
    if (r.local_image == image_uri) return &r;
  }
  return nullptr;
}

const Runtime& MlRuntime(std::string_view /*runtime_version*/) {
  return *FindRuntime("scikit-learn");
}

namespace {

// AI Platform Training's runtime version list as this project reads it: 1.0, 1.2, 1.4
// to 1.15, 2.1 to 2.8 and 2.11 (TensorFlow 2.9 and 2.10 never became AI Platform
// runtimes). The list is Google's and closed (AI Platform is retired); a version
// outside it is refused rather than run on a guess. Uncertain: 1.1 and 1.3, which
// the list as read here does not have.
constexpr std::string_view kMlRuntimeVersions[] = {
    "1.0",  "1.2",  "1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11", "1.12", "1.13",
    "1.14", "1.15", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7",  "2.8",  "2.11"};

int MinorOf(std::string_view version) {  // "1.14" -> 14; only called for 1.x.
  int minor = 0;
  for (char c : version.substr(version.find('.') + 1)) minor = minor * 10 + (c - '0');
  return minor;
}

// The Python versions a runtime version offered: 3.7 from 1.15 on, 3.5 on 1.4 to 1.14,
// 2.7 up to 1.15.
bool HadPython(std::string_view runtime_version, std::string_view python_version) {
  const bool one = runtime_version.rfind("1.", 0) == 0;
  const int minor = one ? MinorOf(runtime_version) : 0;
  if (python_version == "3.7") return !one || minor >= 15;
  if (python_version == "3.5") return one && minor >= 4 && minor <= 14;
  if (python_version == "2.7") return one;
  return false;
}

}  // namespace

Status CheckMlRuntimeVersion(std::string_view runtime_version, std::string_view python_version,
                             const std::string& runtime_path, const std::string& python_path) {
  if (!runtime_version.empty()) {
    bool known = false;
    std::string all;
    for (std::string_view v : kMlRuntimeVersions) {
      known |= v == runtime_version;
      all += (all.empty() ? "" : ", ") + std::string(v);
    }
    if (!known) {
      return FieldError(runtime_path, "\"" + std::string(runtime_version) +
                                          "\" is no AI Platform Training runtime version; "
                                          "they are " +
                                          all);
    }
  }
  if (python_version.empty()) return Status::Ok();
  if (python_version != "3.7" && python_version != "3.5" && python_version != "2.7") {
    return FieldError(python_path, "must be one of \"3.7\", \"3.5\", \"2.7\"");
  }
  if (!runtime_version.empty() && !HadPython(runtime_version, python_version)) {
    return FieldError(python_path, "runtime version " + std::string(runtime_version) +
                                       " had no Python " + std::string(python_version) +
                                       " (3.7 from 1.15 on, 3.5 on 1.4 to 1.14, 2.7 up to 1.15)");
  }
  return Status::Ok();
}

std::string DescribeMlRuntime(std::string_view runtime_version, std::string_view python_version) {
  const Runtime& runtime = MlRuntime(runtime_version);
  std::string line = "runtimeVersion " + std::string(runtime_version) + " runs on the " +
                     std::string(runtime.name) + " runtime (" + std::string(runtime.local_image) +
                     ": " + std::string(runtime.contents) + ")";
  if (!python_version.empty()) {
    line += "; pythonVersion " + std::string(python_version) + " runs as its Python 3.11";
  }
  return line +
         ". AI Platform's runtime also had TensorFlow, which this one lacks (Debian packages "
         "none): a trainer that imports tensorflow fails; run it in a container image of its own.";
}

std::string DescribeRuntimes(const std::function<std::string(const Runtime&)>& state_of) {
  std::string out;
  for (const Runtime& r : kRuntimes) {
    out += std::string(r.name) + "\t" + std::string(r.local_image) + "\t" + state_of(r) + "\t" +
           std::string(r.contents) + "\n";
  }
  out +=
      "\nNames that run on them:\n"
      "  scikit-learn: us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.*, xgboost-cpu.*;\n"
      "                gcr.io/deeplearning-platform-release/sklearn-cpu, xgboost-cpu, base-*;\n"
      "                every ml v1 runtimeVersion (any pythonVersion: Python 3.11)\n"
      "  pytorch:      us-docker.pkg.dev/vertex-ai/training/pytorch-*.* (GPU and XLA names run\n"
      "                the CPU build); gcr.io/deeplearning-platform-release/pytorch-*\n"
      "  TensorFlow (tf-*, tf2-*): none; Debian packages no TensorFlow\n";
  return out;
}

}  // namespace ty::images
