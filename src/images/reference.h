// Container image references, parsed by the grammar the OCI distribution spec and
// Docker's reference package define, so that nothing else reaches the engine:
//
//   reference  := name [ ":" tag ] [ "@" digest ]
//   name       := [ domain "/" ] path-component ( "/" path-component )*
//   domain     := host [ ":" port ]          (host: dot-separated [A-Za-z0-9-] labels,
//                                             not starting or ending with '-')
//   path-comp  := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
//   tag        := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
//   digest     := algorithm ":" hex          (algorithm: [A-Za-z][A-Za-z0-9]* joined by
//                                             [+._-]; hex: 32 or more [0-9a-fA-F])
//
// The first component is a domain when it holds '.' or ':' or is "localhost" (as
// Docker reads "gcr.io/p/img" and "localhost:5000/img"); the name is at most 255
// characters. A reference like "../containers/json?x=" or "-v /:/host" is refused
// at submit with a 400 naming the field (model/spec_images.h), and the executor can
// put any accepted reference into an engine API path.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace ty::images {

struct ImageReference {
  std::string domain;  // "" when the name has none ("python:3.11").
  std::string path;    // "library/python" is not added: the engine resolves short names.
  std::string tag;     // "" when absent.
  std::string digest;  // "sha256:..." or "".
};

// InvalidArgument saying which rule `text` breaks.
Result<ImageReference> ParseImageReference(std::string_view text);

}  // namespace ty::images
