// What a router's workers share: the one Routing, the link records, the epochs that say when a
// record's DirectTarget may be freed, the taps, the rate requests and the signing clock. The
// Router makes it and hands each Worker a reference; a Worker sees nothing else of the Router.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "protocol/frame.hpp"
#include "protocol/message_table.hpp"
#include "router/epochs.hpp"
#include "router/link_records.hpp"
#include "routing/routing.hpp"

namespace mavswitch {

// Called with every frame received (after routing), on the router's thread: telemetry logs.
using Tap = std::function<void(const protocol::FrameView& frame)>;

// Message rates (rates/): a frame that `is` a request for a message's rate (rates/ knows what
// one is: `is` is asked only of message ids first_id..last_id) from a link whose endpoint
// takes part (EndpointSpec::message_rates) is not routed but handed to `take` on the router's
// thread, with the id of the link it came on; `gone` hears of every link that goes, there too.
struct RateRequests {
  uint32_t first_id = 0, last_id = 0;
  bool (*is)(const protocol::FrameView&) noexcept = nullptr;
  std::function<void(routing::LinkId, const protocol::FrameView&)> take;
  std::function<void(routing::LinkId)> gone;
};

struct Shared {
  Shared(const protocol::MessageTable& message_table, size_t workers) : table(message_table), epochs(workers) {}

  const protocol::MessageTable& table;  // what frames are validated with
  routing::Routing routing;
  LinkRecords links;
  Epochs epochs;               // when a link's DirectTarget, which every worker may read, can be freed
  std::vector<Tap> taps;       // added before start(); run on worker 0
  RateRequests rate_requests;  // set before run(), read by the workers
  // The clock our signatures carry (10 µs units since 2015): never goes backwards.
  std::atomic<uint64_t> signing_last{0};

  void run_taps(const protocol::FrameView& frame) const {
    for (const auto& tap : taps) tap(frame);
  }
  uint64_t next_signing_timestamp() noexcept;  // for every worker's signing links
};

}  // namespace mavswitch
