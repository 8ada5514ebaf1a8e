// `--config` files and CLI YAML: any text parses to JSON or gives an error, and what
// parsed renders back as YAML.
#include "format/yaml_json.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ty::Result<nlohmann::json> parsed = ty::format::ParseYamlOrJson(ty::fuzz::Text(data, size));
  if (parsed.ok()) (void)ty::format::ToYaml(*parsed);
  return 0;
}
