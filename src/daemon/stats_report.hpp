// The statistics report printed with -r / ReportStats and on SIGUSR1.
#pragma once

#include <string>

#include "router/router.hpp"

namespace mavswitch::daemon {

std::string format_stats(Router& router);

}  // namespace mavswitch::daemon
