// What a registry says a tag stands for: the manifest digest of HOST/PATH:TAG, as the
// registry answers a HEAD of /v2/PATH/manifests/TAG (Docker-Content-Digest). The engine
// cannot tell it reliably: an image pushed from this host keeps its locally made
// manifest digest beside the pushed one, and lists both in RepoDigests in an order that
// says nothing. Used for the daemon's own registry, so plain HTTP and loopback.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"
#include "executor/container/engine_client.h"

namespace ty::executor::internal {

// The parameters of a `Bearer realm="…",service="…",scope="…"` challenge; empty when
// the header is not a Bearer challenge.
std::map<std::string, std::string> BearerChallenge(std::string_view www_authenticate);

// The digest ("sha256:…") of `reference` (HOST[:PORT]/PATH:TAG) in its registry. When
// the registry asks for a token, it is fetched from the challenge's realm with `login`
// as Basic credentials (Docker's token protocol). Unavailable when the registry or the
// token service does not answer; NotFound when the registry lacks the tag.
Result<std::string> RegistryManifestDigest(const std::string& reference, const RegistryLogin& login,
                                           long timeout_ms);

}  // namespace ty::executor::internal
