// Google registry names and the local registry that serves them; see google_names.h.
#include "images/google_names.h"

#include <algorithm>

namespace ty::images {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Regions with Vertex AI training (its locations page), for REGION-docker.pkg.dev.
constexpr std::string_view kVertexRegions[] = {"us-central1",
                                               "us-east1",
                                               "us-east4",
                                               "us-east5",
                                               "us-south1",
                                               "us-west1",
                                               "us-west2",
                                               "us-west3",
                                               "us-west4",
                                               "northamerica-northeast1",
                                               "northamerica-northeast2",
                                               "southamerica-east1",
                                               "southamerica-west1",
                                               "europe-central2",
                                               "europe-north1",
                                               "europe-southwest1",
                                               "europe-west1",
                                               "europe-west2",
                                               "europe-west3",
                                               "europe-west4",
                                               "europe-west6",
                                               "europe-west8",
                                               "europe-west9",
                                               "europe-west12",
                                               "me-central1",
                                               "me-central2",
                                               "me-west1",
                                               "africa-south1",
                                               "asia-east1",
                                               "asia-east2",
                                               "asia-northeast1",
                                               "asia-northeast2",
                                               "asia-northeast3",
                                               "asia-south1",
                                               "asia-southeast1",
                                               "asia-southeast2",
                                               "australia-southeast1",
                                               "australia-southeast2"};

}  // namespace

bool IsGoogleRegistryHost(std::string_view host) {
  return host == "gcr.io" || EndsWith(host, ".gcr.io") || EndsWith(host, ".pkg.dev");
}

std::optional<std::string> GoogleRegistryHostOf(std::string_view image) {
  size_t slash = image.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view host = image.substr(0, slash);
  if (!IsGoogleRegistryHost(host)) return std::nullopt;
  return std::string(host);
}

std::optional<std::string> MirrorReference(std::string_view image, std::string_view address) {
  std::optional<std::string> host = GoogleRegistryHostOf(image);
  if (!host || image.size() <= host->size() + 1 || address.empty()) return std::nullopt;
  return std::string(address) + std::string(image.substr(host->size()));
}

const std::vector<std::string>& SharedImageProjects() {
  static const std::vector<std::string> kShared = {"deeplearning-platform-release", "vertex-ai",
                                                   "vertex-ai-restricted", "cloud-aiplatform"};
  return kShared;
}

std::optional<std::string> GoogleImageProject(std::string_view image) {
  std::optional<std::string> host = GoogleRegistryHostOf(image);
  if (!host) return std::nullopt;
  std::string_view rest = image.substr(host->size() + 1);
  const size_t end = rest.find_first_of("/:@");
  return std::string(rest.substr(0, end));
}

std::vector<std::string> GoogleRegistryHosts() {
  std::vector<std::string> hosts = {"gcr.io",
                                    "us.gcr.io",
                                    "eu.gcr.io",
                                    "asia.gcr.io",
                                    "us-docker.pkg.dev",
                                    "europe-docker.pkg.dev",
                                    "asia-docker.pkg.dev"};
  for (std::string_view region : kVertexRegions) {
    hosts.push_back(std::string(region) + "-docker.pkg.dev");
  }
  return hosts;
}

}  // namespace ty::images
