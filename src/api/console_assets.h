// The console's files (console/ in the source tree), built into the daemon so it needs
// nothing installed beside it: cmake/embed_console.cmake writes their table.
#pragma once

#include <string_view>
#include <vector>

namespace ty::api {

struct ConsoleAsset {
  std::string_view path;  // Below /console/: "index.html", "app.js".
  std::string_view content_type;
  std::string_view body;
};

const std::vector<ConsoleAsset>& ConsoleAssets();

}  // namespace ty::api
