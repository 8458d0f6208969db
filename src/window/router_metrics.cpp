// /metrics: the router's snapshot in Prometheus' text exposition format, with the process
// figures its client libraries export.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "window/router_report.hpp"

namespace mavswitch::window {
namespace {

// Resident memory, open descriptors and CPU time of this process, as Prometheus' client
// libraries name them.
struct ProcessFigures {
  uint64_t resident_bytes = 0;
  double cpu_seconds = 0;
};
ProcessFigures process_figures() {
  ProcessFigures f;
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  if (statm >> pages >> resident) f.resident_bytes = resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close != std::string::npos) {
    std::istringstream rest(text.substr(close + 2));
    std::string field;
    uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {  // fields 14 and 15: user and system ticks
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    f.cpu_seconds = double(utime + stime) / double(sysconf(_SC_CLK_TCK));
  }
  return f;
}

// A label value as the exposition format quotes it.
std::string label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

class Exposition {
 public:
  void family(const char* name, const char* type, const char* help) {
    fmt::format_to(it_, "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  template <class T>
  void sample(const char* name, const std::string& labels, T value) {
    fmt::format_to(it_, "{}{{{}}} {}\n", name, labels, value);
  }
  template <class T>
  void sample(const char* name, T value) {
    fmt::format_to(it_, "{} {}\n", name, value);
  }
  std::string text() const { return fmt::to_string(out_); }

 private:
  fmt::memory_buffer out_;
  std::back_insert_iterator<fmt::memory_buffer> it_{out_};
};

}  // namespace

std::string metrics_text(const RouterSnapshot& s, bool per_link) {
  Exposition x;
  // Each link family: one sample per endpoint, and one per link when asked.
  struct Series {
    std::string labels;
    const transport::LinkCounters* counters;
    const protocol::ParserStats* parser;
    uint64_t sequence_lost;
    size_t queued;
  };
  std::vector<Series> series;
  for (const auto& e : s.endpoints) {
    const std::string base = fmt::format("endpoint=\"{}\",kind=\"{}\"", label(e.name), e.kind);
    size_t queued = 0;
    for (const auto& l : e.links) queued += l.queued;
    series.push_back({base, &e.totals.counters, &e.totals.parser, e.sequence_lost, queued});
    if (!per_link) continue;
    for (const auto& l : e.links) {
      series.push_back(
          {base + fmt::format(",link=\"{}\"", label(l.peer)), &l.counters, &l.parser, l.sequence_lost, l.queued});
    }
  }
  auto each = [&](const char* name, const char* help, auto value) {
    x.family(name, "counter", help);
    for (const auto& se : series) x.sample(name, se.labels, value(se));
  };
  each("mavswitch_link_received_frames_total", "Frames received (per endpoint, or per link with link=).",
       [](const Series& se) { return se.counters->frames_in; });
  each("mavswitch_link_received_bytes_total", "Bytes received.",
       [](const Series& se) { return se.counters->bytes_in; });
  each("mavswitch_link_sent_frames_total", "Frames sent.", [](const Series& se) { return se.counters->frames_out; });
  each("mavswitch_link_sent_bytes_total", "Bytes sent.", [](const Series& se) { return se.counters->bytes_out; });
  each("mavswitch_link_crc_errors_total", "Candidate frames whose checksum failed.",
       [](const Series& se) { return se.parser->crc_failures; });
  each("mavswitch_link_skipped_bytes_total", "Received bytes that were part of no frame.",
       [](const Series& se) { return se.parser->bytes_skipped; });
  each("mavswitch_link_sequence_lost_frames_total",
       "Frames missing from the sequence numbers of the sources heard (links now up).",
       [](const Series& se) { return se.sequence_lost; });
  each("mavswitch_link_fabric_lost_frames_total",
       "The fleet fabric: frames of another router that never came (gaps in the count each router's frames carry).",
       [](const Series& se) { return se.counters->fabric_lost; });
  x.family("mavswitch_link_dropped_frames_total", "counter", "Frames a link did not send, by cause.");
  for (const auto& se : series) {
    for (const auto& [cause, n] : drops_of(*se.counters)) {
      x.sample("mavswitch_link_dropped_frames_total", se.labels + fmt::format(",cause=\"{}\"", cause), n);
    }
  }
  // A radio's view of the air, per link that carries RADIO_STATUS (a radio reports its own link).
  struct RadioGauge {
    const char* name;
    const char* help;
    uint64_t (*value)(const RadioReport&);
  };
  static constexpr RadioGauge kRadioGauges[] = {
      {"mavswitch_link_radio_rssi", "RADIO_STATUS: the signal the radio on this link receives (the radio's own scale).",
       [](const RadioReport& r) -> uint64_t { return r.status.rssi; }},
      {"mavswitch_link_radio_remote_rssi", "RADIO_STATUS: the signal the radio at the other end receives.",
       [](const RadioReport& r) -> uint64_t { return r.status.remrssi; }},
      {"mavswitch_link_radio_noise", "RADIO_STATUS: the background noise at the radio on this link.",
       [](const RadioReport& r) -> uint64_t { return r.status.noise; }},
      {"mavswitch_link_radio_remote_noise", "RADIO_STATUS: the background noise at the other end.",
       [](const RadioReport& r) -> uint64_t { return r.status.remnoise; }},
      {"mavswitch_link_radio_rx_errors", "RADIO_STATUS: receive errors the radio counted (its own counter).",
       [](const RadioReport& r) -> uint64_t { return r.status.rxerrors; }},
      {"mavswitch_link_radio_fixed", "RADIO_STATUS: packets the radio's error correction repaired (its own counter).",
       [](const RadioReport& r) -> uint64_t { return r.status.fixed; }},
      {"mavswitch_link_radio_tx_buffer_percent", "RADIO_STATUS: free space in the radio's transmit buffer.",
       [](const RadioReport& r) -> uint64_t { return r.status.txbuf; }},
  };
  const bool any_radio = std::ranges::any_of(s.endpoints, [](const auto& e) {
    return std::ranges::any_of(e.links, [](const auto& l) { return l.radio.has_value(); });
  });
  for (const RadioGauge& g : kRadioGauges) {
    if (!any_radio) break;
    x.family(g.name, "gauge", g.help);
    for (const auto& e : s.endpoints) {
      for (const auto& l : e.links) {
        if (!l.radio) continue;
        x.sample(g.name, fmt::format("endpoint=\"{}\",kind=\"{}\",link=\"{}\"", label(e.name), e.kind, label(l.peer)),
                 g.value(*l.radio));
      }
    }
  }
  x.family("mavswitch_link_queued_bytes", "gauge", "Bytes waiting in the links' output queues.");
  for (const auto& se : series) x.sample("mavswitch_link_queued_bytes", se.labels, se.queued);
  x.family("mavswitch_endpoint_links", "gauge", "Links an endpoint has up (peers, clients, a port).");
  for (const auto& e : s.endpoints)
    x.sample("mavswitch_endpoint_links", fmt::format("endpoint=\"{}\",kind=\"{}\"", label(e.name), e.kind),
             e.links.size());
  x.family("mavswitch_endpoint_kernel_dropped_datagrams_total", "counter",
           "Datagrams the kernel dropped at an endpoint's sockets (its buffer was full).");
  for (const auto& e : s.endpoints)
    x.sample("mavswitch_endpoint_kernel_dropped_datagrams_total",
             fmt::format("endpoint=\"{}\",kind=\"{}\"", label(e.name), e.kind), e.totals.kernel_drops);

  const routing::RoutingStats& r = s.routing;
  x.family("mavswitch_routed_frames_total", "counter", "Frames the router decided on.");
  x.sample("mavswitch_routed_frames_total", r.frames);
  x.family("mavswitch_delivered_frames_total", "counter", "Frame copies handed to links.");
  x.sample("mavswitch_delivered_frames_total", r.deliveries);
  x.family("mavswitch_routing_dropped_frames_total", "counter", "Frames the routing rules dropped, by cause.");
  for (const auto& [cause, n] : drops_of(r))
    x.sample("mavswitch_routing_dropped_frames_total", fmt::format("cause=\"{}\"", cause), n);
  x.family("mavswitch_routes", "gauge", "Components (system, component) the router knows a link for.");
  x.sample("mavswitch_routes", s.routes);
  x.family("mavswitch_workers", "gauge", "I/O worker threads.");
  x.sample("mavswitch_workers", s.workers);
  x.family("mavswitch_worker_busy_seconds_total", "counter",
           "Time each I/O worker spent awake (not waiting for events): its rate is the worker's busy share.");
  for (size_t w = 0; w < s.worker_busy_us.size(); ++w)
    x.sample("mavswitch_worker_busy_seconds_total", fmt::format("worker=\"{}\"", w), double(s.worker_busy_us[w]) / 1e6);
  x.family("mavswitch_worker_handover_dropped_frames_total", "counter",
           "Frames one worker could not hand to another (its queue was full).");
  x.sample("mavswitch_worker_handover_dropped_frames_total", s.cross_worker_drops);

  x.family("mavswitch_spoofed_answers_total", "counter",
           "Answers (COMMAND_ACK, PARAM_VALUE, log data) that came in on another link than where their source "
           "lives: not believed.");
  x.sample("mavswitch_spoofed_answers_total", s.spoofed_answers);
  x.family("mavswitch_faults_total", "counter",
           "Exceptions caught at a boundary (a request, a job, a handler): each cut its work short; see the log.");
  x.sample("mavswitch_faults_total", s.faults);

  const ProcessFigures p = process_figures();
  x.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  x.sample("process_resident_memory_bytes", p.resident_bytes);
  x.family("process_cpu_seconds_total", "counter", "User and system CPU time spent in seconds.");
  x.sample("process_cpu_seconds_total", p.cpu_seconds);
  return x.text();
}

}  // namespace mavswitch::window
