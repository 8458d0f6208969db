// Serial: a device path and a list of baud rates tried in turn until valid MAVLink arrives.
// When the device disappears (unplugged, autopilot rebooted) the endpoint keeps trying to
// reopen it and comes back by itself; nothing else in the router notices.
#include <algorithm>
#include <filesystem>

#include "base/log.hpp"
#include "transport/endpoint_kinds.hpp"
#include "transport/event_loop.hpp"
#include "transport/serial_port.hpp"
#include "transport/stream_link.hpp"

namespace mavswitch::transport {
namespace {

constexpr Millis kReopenInterval = 1000;
constexpr Millis kBaudProbe = 2000;  // silence at one rate this long: try the next

class SerialEndpoint final : public Endpoint {
 public:
  using Endpoint::Endpoint;
  ~SerialEndpoint() override {
    if (timer_) host_.loop().cancel(timer_);
  }

  void start() override { try_open(); }

  void for_each_link(const std::function<void(const Link&)>& f) const override {
    if (link_) f(*link_);
  }

 private:
  uint32_t baud() const { return spec_.bauds[baud_index_ % spec_.bauds.size()]; }

  // MaxRate left to the link kind: the line's rate, 10 bits a byte (start, 8 data, stop). Not
  // for a USB autopilot (ttyACM: CDC ACM ignores the baud rate and runs at USB speed).
  void pace_to_baud() {
    if (spec_.max_rate != EndpointSpec::kAutoRate) return;
    std::error_code ec;
    const auto real = std::filesystem::canonical(spec_.device, ec);
    if (!ec && real.filename().string().starts_with("ttyACM")) return;
    link_->pace(baud() / 10);
  }

  void try_open() {
    timer_ = 0;
    std::string error;
    const int fd = open_serial_port(spec_.device, baud(), spec_.flow_control, &error);
    if (fd < 0) {
      if (!reported_) log::warning("{}: {}; retrying every {} ms", describe(), error, kReopenInterval);
      reported_ = true;
      timer_ = host_.loop().after(kReopenInterval, [this] { try_open(); });
      return;
    }
    reported_ = false;
    link_ = std::make_unique<StreamLink>(*this, host_, spec_.device, fd, spec_.stream_queue_bytes,
                                         [this](StreamLink& l, const std::string& why) { closed(l, why); });
    log::info("{}: open at {} baud", describe(), baud());
    pace_to_baud();
    host_.link_up(*link_);
    if (spec_.bauds.size() > 1 && !baud_locked_) watch_baud(0);
  }

  // With several rates configured: keep this one only if frames arrive.
  void watch_baud(uint64_t frames_before) {
    timer_ = host_.loop().after(kBaudProbe, [this, frames_before] {
      timer_ = 0;
      if (!link_) return;
      if (link_->counters().frames_in > frames_before) {
        baud_locked_ = true;
        log::info("{}: MAVLink at {} baud", describe(), baud());
        return;
      }
      ++baud_index_;
      std::string error;
      if (!set_serial_baud(link_->fd(), baud(), spec_.flow_control, &error)) {
        log::warning("{}: {}", describe(), error);
      } else {
        log::debug("{}: no MAVLink yet, trying {} baud", describe(), baud());
        pace_to_baud();
      }
      watch_baud(link_->counters().frames_in);
    });
  }

  void closed(StreamLink& link, const std::string& why) {
    log::warning("{}: lost ({}); reopening", describe(), why);
    host_.link_down(link);
    host_.loop().post([dead = std::shared_ptr<StreamLink>(std::move(link_))] {});
    if (timer_) host_.loop().cancel(timer_);
    baud_locked_ = false;
    timer_ = host_.loop().after(kReopenInterval, [this] { try_open(); });
  }

  std::unique_ptr<StreamLink> link_;
  EventLoop::TimerId timer_ = 0;
  size_t baud_index_ = 0;
  bool baud_locked_ = false;
  bool reported_ = false;
};

}  // namespace

std::unique_ptr<Endpoint> make_serial_endpoint(EndpointSpec spec, LinkHost& host) {
  if (spec.bauds.empty()) spec.bauds = {115200};
  return std::make_unique<SerialEndpoint>(std::move(spec), host);
}

}  // namespace mavswitch::transport
