// Google's image registry names (Container Registry `gcr.io/P/IMG`, `*.gcr.io`;
// Artifact Registry `REGION-docker.pkg.dev/P/REPO/IMG`, any `*.pkg.dev`) served by the
// local registry that stands in for them (docs/design.md: images). Pure: no engine calls.
//
// One registry serves every Google host, so the host is not part of the stored name:
// `gcr.io/p/img` and `us-docker.pkg.dev/p/img` are the same repository `p/img` there.
// That is what `docker push` through /etc/hosts (`trainyard config registry`) stores,
// since a registry does not see the name the client used; the daemon resolves the same
// way, so a name pushed from any machine pulls by that name on every other.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ty::images {

// Where trainyardd serves its registry unless told otherwise, and where `trainyard
// config registry` points the names: port 80, since a name without a port is tried
// there over plain HTTP, on a loopback address of its own, so nothing else on port 80
// is in the way.
inline constexpr char kDefaultRegistryAddress[] = "127.77.0.1:80";

// "gcr.io", "eu.gcr.io", "us-central1-docker.pkg.dev", "us-docker.pkg.dev", ...
bool IsGoogleRegistryHost(std::string_view host);

// The image's registry host when its first path component is one ("gcr.io/p/i:t"
// -> "gcr.io"); nullopt for local or other names.
std::optional<std::string> GoogleRegistryHostOf(std::string_view image);

// The same image at the local registry `address` ("127.77.0.1:80"): the host is
// replaced ("gcr.io/p/i:t" -> "127.77.0.1:80/p/i:t"). nullopt when the name is not
// a Google registry's or has nothing after its host.
std::optional<std::string> MirrorReference(std::string_view image, std::string_view address);

// The projects every job may pull images of, whose names the prebuilt runtimes use
// (images/runtimes.h); with tokens only an admin of every project pushes there.
const std::vector<std::string>& SharedImageProjects();

// The project a Google registry name belongs to, its first path component after the
// host ("gcr.io/p/img:t", "us-docker.pkg.dev/p/repo/img" -> "p"); nullopt for other
// names. The registry sees the same component first (one registry, every host).
std::optional<std::string> GoogleImageProject(std::string_view image);

// The host names `trainyard config registry` points at the local registry: gcr.io's
// four, and docker.pkg.dev for the multi-regions and every region Vertex runs in
// (/etc/hosts has no wildcards; `--host` adds others).
std::vector<std::string> GoogleRegistryHosts();

}  // namespace ty::images
