// The Content-Security-Policy every answer of the window carries.
#pragma once

#include <string>

namespace mavswitch::window {

// The page's own files and scripts only: no inline script, nothing from elsewhere, but the map
// tiles' images from their server where [Http] MapTiles names one ({s} and the like as '*').
std::string page_policy(const std::string& map_tiles);

}  // namespace mavswitch::window
