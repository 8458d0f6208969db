// The statistics report printed with -r / ReportStats and on SIGUSR1.
#pragma once

#include <string>

#include "router/router.hpp"
#include "window/router_report.hpp"

namespace mavswitch::daemon {

std::string format_stats(Router& router);
// The same lines for the links the router's own endpoints do not hold (WebSocket clients, the
// NATS connections).
std::string format_stats(const std::vector<EndpointSnapshot>& endpoints);

}  // namespace mavswitch::daemon
