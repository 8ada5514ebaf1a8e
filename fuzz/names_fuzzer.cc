// Everything a request names that becomes a path, a key or an engine argument: image
// references, project and location ids, bucket and object names, durations.
#include <string>

#include "common/time.h"
#include "fuzz/fuzz_input.h"
#include "gcs/object_store.h"
#include "images/reference.h"
#include "model/resource_ids.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(ty::fuzz::Text(data, size));
  auto image = ty::images::ParseImageReference(text);
  // An accepted reference never holds what would change an engine API path.
  if (image.ok() && text.find_first_of("?#% \n") != std::string::npos) __builtin_trap();
  (void)ty::model::CheckProjectId(text);
  (void)ty::model::CheckLocationId(text);
  if (ty::gcs::ObjectStore::CheckBucketName(text).ok() &&
      (text.find('/') != std::string::npos || text.find("..") != std::string::npos)) {
    __builtin_trap();
  }
  if (ty::gcs::ObjectStore::CheckObjectName(text).ok() &&
      (text == ".." || text.rfind("../", 0) == 0 || text.find("/../") != std::string::npos ||
       text.front() == '/')) {
    __builtin_trap();
  }
  (void)ty::ParseDuration(text);
  (void)ty::ParseRfc3339(text);
  return 0;
}
