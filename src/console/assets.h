#pragma once

#include <span>
#include <string_view>

namespace relay::console {

/// One file of the console's web assets, embedded in the binary at build time
/// (cmake/EmbedAssets.cmake over src/console/assets): nothing is read from disk or the network
/// at run time.
struct Asset {
  std::string_view path;          // "/index.html", "/js/main.js", "/vendor/uplot/uPlot.min.css"
  std::string_view content_type;  // from the extension
  std::string_view body;
};

/// Every embedded asset.
std::span<const Asset> embeddedAssets();

}  // namespace relay::console
