// Keeps replay protection across restarts: our signing clock (which must never go backwards)
// and, per endpoint, the newest timestamp accepted from each signed stream, in a small text
// file written atomically.
#pragma once

#include <filesystem>
#include <string>

#include "router/router.hpp"

namespace mavswitch::daemon {

// Restores what `file` holds into the router (a missing file is a first start). Endpoints are
// matched by name.
// False, with `error`, when the file is there but is not a state file we can read (a
// directory, a device, too large); a file that is not there yet is no error.
bool load_signing_state(const std::filesystem::path& file, Router& router, std::string* error);
// Writes the state; returns false with *error on failure (the previous file stays intact).
bool save_signing_state(const std::filesystem::path& file, const Router& router, std::string* error);

}  // namespace mavswitch::daemon
