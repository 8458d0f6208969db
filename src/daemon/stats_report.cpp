#include "daemon/stats_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iterator>

namespace mavswitch::daemon {

std::string format_stats(Router& router) {
  fmt::memory_buffer out;
  auto it = std::back_inserter(out);
  const routing::RoutingStats r = router.routing().stats();
  fmt::format_to(
      it,
      "stats: {} frames routed ({} broadcast, {} targeted), {} copies delivered; dropped: "
      "filter-in {}, filter-out {}, unknown-target {}, duplicate {}, unknown-id {}; "
      "signing {}, SETUP_SIGNING {}, command denied {}; unknown-id forwarded {}; reboots {}; routes expired {}\n",
      r.frames, r.broadcast, r.targeted, r.deliveries, r.filtered_in, r.filtered_out, r.unknown_target, r.duplicates,
      r.unknown_ids_dropped, r.signing_rejected, r.setup_signing_dropped, r.commands_denied, r.unknown_ids_forwarded,
      r.reboots, r.routes_expired);
  if (router.worker_count() > 1) {
    fmt::format_to(it,
                   "  {} workers; frames written to another worker's UDP links: {}; input paused for a busy "
                   "worker: {} times; frames dropped between workers (queue full): {}\n",
                   router.worker_count(), router.cross_worker_direct(), router.input_pauses(),
                   router.cross_worker_drops());
  }
  for (const auto& g : router.routing().group_stats()) {
    fmt::format_to(it, "  group {}: traffic on {}; failovers {}; duplicates removed {}\n", g.name,
                   g.stats.active == routing::kNoLink ? "every link (none healthy)" : router.link_name(g.stats.active),
                   g.stats.failovers, g.stats.duplicates);
  }
  for (size_t i = 0; i < router.endpoint_count(); ++i) {
    if (router.endpoint_closed(i)) continue;
    const uint64_t refused = router.endpoint_refused(i), refused_no_fd = router.endpoint_refused_no_fd(i),
                   refused_full = router.endpoint_refused_full(i);
    // A listening endpoint has a socket on every worker: how its peers are shared among them.
    const bool shared = router.worker_count() > 1 && transport::listens(router.endpoint_spec(i));
    if (!router.endpoint_error(i).empty()) {
      fmt::format_to(it, "  {} (not open: {})\n", router.endpoint_description(i), router.endpoint_error(i));
      continue;
    }
    fmt::format_to(it, "  {}{}{}{}{}\n", router.endpoint_description(i),
                   refused ? fmt::format(" (refused {} peers not in AllowFrom)", refused) : "",
                   refused_no_fd ? fmt::format(" (refused {} clients: out of file descriptors)", refused_no_fd) : "",
                   refused_full ? fmt::format(" (refused {} clients: MaxClients reached)", refused_full) : "",
                   shared ? fmt::format(" (peers by worker: {})", fmt::join(router.links_by_worker(i), ", ")) : "");
    {
      const transport::Endpoint::Totals t = router.endpoint_totals(i);
      fmt::format_to(it,
                     "    totals: in {} frames / {} B, out {} frames / {} B; dropped out: queue-full {}; bad input: "
                     "crc {}, skipped {} B; links closed {}{}\n",
                     t.counters.frames_in, t.counters.bytes_in, t.counters.frames_out, t.counters.bytes_out,
                     t.counters.dropped_queue_full, t.parser.crc_failures, t.parser.bytes_skipped, t.links_closed,
                     router.endpoint_spec(i).kind == transport::EndpointSpec::Kind::kUdpServer ||
                             router.endpoint_spec(i).kind == transport::EndpointSpec::Kind::kUdpClient
                         ? fmt::format("; kernel drops {}", t.kernel_drops)
                         : "");
    }
    if (const auto* gate = router.endpoint_policy(i).signing.get()) {
      const auto& s = gate->counters();
      fmt::format_to(it,
                     "    signing: accepted {} signed, {} unsigned allowed; rejected: unsigned {}, bad signature {}, "
                     "replay {}, mavlink1 {}; signed out {}, sent unsigned (MAVLink 1) {}\n",
                     s.accepted, s.accepted_unsigned, s.rejected_unsigned, s.rejected_bad_signature, s.rejected_replay,
                     s.rejected_mavlink1, s.signed_out, s.unsignable_out);
    }
    router.for_each_link(i, [&](const Router::LinkReport& report) {
      const transport::Link& l = report.link;
      const routing::SequenceTracker* seq = report.sequences;
      const auto& c = report.counters;
      const auto& p = l.parser_stats();
      const routing::LinkRoutingStats r2 =
          l.id != routing::kNoLink ? router.routing().link_stats(l.id) : routing::LinkRoutingStats{};
      fmt::format_to(
          it,
          "    {}: in {} frames / {} B, out {} frames / {} B; dropped in: filter {}, unknown-target {}, "
          "signing {}, command denied {}; dropped out: queue-full {}, filter {}; bad input: crc {}, skipped {} B, "
          "bad-flags {}, unknown-id {}; queue storage {} B\n",
          l.peer(), c.frames_in, c.bytes_in, c.frames_out, c.bytes_out, r2.filtered_in, r2.unknown_target,
          r2.signing_rejected, r2.commands_denied, c.dropped_queue_full, r2.filtered_out, p.crc_failures,
          p.bytes_skipped, p.bad_incompat_flags, p.unknown_ids, report.queue_storage);
      if (l.shaped()) {
        const auto& d = c.paced_drops;
        fmt::format_to(
            it,
            "      shaped: rate-limited in {}, out {}; rate-thinned {}; paced: telemetry superseded by newer "
            "{}; dropped (full or late): control {}, status {}, telemetry {}\n",
            c.rate_limited_in, c.rate_limited_out, c.rate_thinned, c.superseded, d[0], d[1], d[2]);
      }
      if (const RadioReport* radio = report.radio) {
        const msg::RadioStatus& m = radio->status;
        fmt::format_to(it,
                       "      radio: rssi {}, remote rssi {}, noise {}, remote noise {}, rx errors {}, fixed {}, "
                       "tx buffer {}%\n",
                       m.rssi, m.remrssi, m.noise, m.remnoise, m.rxerrors, m.fixed, m.txbuf);
      }
      if (seq != nullptr) {
        for (const auto& [key, s] : seq->sources()) {
          const double pct = s.received + s.lost
                                 ? 100.0 * static_cast<double>(s.lost) / static_cast<double>(s.received + s.lost)
                                 : 0.0;
          fmt::format_to(it, "      source {}/{}: {} received, {} lost ({:.1f}%){}\n", key >> 8, key & 0xFF, s.received,
                         s.lost, pct, s.restarts ? fmt::format(", sequence restarted {} times", s.restarts) : "");
        }
        if (seq->untracked_frames() != 0) {
          fmt::format_to(it, "      {} frames from sources past the first {} (not tracked one by one)\n",
                         seq->untracked_frames(), routing::SequenceTracker::kMaxSources);
        }
      }
    });
  }
  return fmt::to_string(out);
}

}  // namespace mavswitch::daemon
