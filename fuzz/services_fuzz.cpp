// A hostile vehicle's side of the vehicle services (services/): a mission read, written or
// cleared, a MAVFTP listing, read, write, removal or CRC, a log listed or read, and the files a
// client uploads for them (.plan, WPL, .param). Each exchange is driven as the transaction engine
// drives it, on the router's thread: started, then told of the vehicle's replies and its
// silences. A reply is one of the messages the exchange listens for, built from the last request
// the vehicle heard (its sequence number, offset, item, mission type) and then bent by the input,
// so that the fuzzer reaches deep into a transfer instead of being refused at its first check.
// What must hold beyond "no crash, no leak": the bytes an exchange holds stay bounded, a mission's
// progress never passes its count, and a file we write is read back as the same lists.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "base/byte_stream.hpp"
#include "fuzz_world.hpp"
#include "library/component.hpp"
#include "library/transactions.hpp"
#include "mavswitch/msg/file_transfer_protocol.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/log_data.hpp"
#include "mavswitch/msg/log_entry.hpp"
#include "mavswitch/msg/log_erase.hpp"
#include "mavswitch/msg/log_request_data.hpp"
#include "mavswitch/msg/log_request_list.hpp"
#include "mavswitch/msg/mission_ack.hpp"
#include "mavswitch/msg/mission_clear_all.hpp"
#include "mavswitch/msg/mission_count.hpp"
#include "mavswitch/msg/mission_item.hpp"
#include "mavswitch/msg/mission_item_int.hpp"
#include "mavswitch/msg/mission_request.hpp"
#include "mavswitch/msg/mission_request_int.hpp"
#include "mavswitch/msg/mission_request_list.hpp"
#include "protocol/parser.hpp"
#include "services/ftp_exchange.hpp"
#include "services/log_exchange.hpp"
#include "services/mission_exchange.hpp"
#include "services/mission_plan.hpp"
#include "vehicle/parameter_file.hpp"

using namespace mavswitch;
using services::FtpExchange;
using services::LogExchange;
using services::MissionExchange;

namespace {

constexpr uint8_t kVehicle = 1;
constexpr int kMostSteps = 400;        // replies and silences per input: a transfer, not a soak
constexpr size_t kStreamBytes = 4096;  // a reader that holds little, so that pauses are reached

using fuzz::Input;

// One router for the whole run: the router's own component (whose exchanges these are) and the
// vehicle's, which keeps the scalar fields of the last request of each name it heard.
struct World : fuzz::RunningRouter {
  World() {
    own = std::make_unique<Component>(router, 255, 190);
    vehicle = std::make_unique<Component>(router, kVehicle, kVehicle);
    heard = vehicle->subscribe({}, [this](const protocol::FrameView& f) { remember(f); });
    vehicle->send(msg::Heartbeat{});  // so that the route to it is known before the first request
    for (int i = 0; i < 200 && !reachable(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  bool reachable() {
    bool known = false;
    router.run_on_loop([&] { known = router.routing().routes().knows(kVehicle, kVehicle); });
    return known;
  }

  template <class M>
  void keep(const protocol::FrameView& f) {
    M m = M::decode(f.payload());
    m.visit([&](std::string_view name, const auto& field) {
      using T = std::remove_cvref_t<decltype(field)>;
      if constexpr (std::is_arithmetic_v<T>) last[std::string(name)] = static_cast<double>(field);
    });
    if constexpr (std::is_same_v<M, msg::FileTransferProtocol>) ftp = services::ftp::Payload::decode(m.payload);
  }
  void remember(const protocol::FrameView& f) {
    switch (f.msgid()) {
      case msg::MissionRequestList::kId: keep<msg::MissionRequestList>(f); break;
      case msg::MissionRequestInt::kId: keep<msg::MissionRequestInt>(f); break;
      case msg::MissionCount::kId: keep<msg::MissionCount>(f); break;
      case msg::MissionItemInt::kId: keep<msg::MissionItemInt>(f); break;
      case msg::MissionClearAll::kId: keep<msg::MissionClearAll>(f); break;
      case msg::MissionAck::kId: keep<msg::MissionAck>(f); break;
      case msg::LogRequestList::kId: keep<msg::LogRequestList>(f); break;
      case msg::LogRequestData::kId: keep<msg::LogRequestData>(f); break;
      case msg::LogErase::kId: keep<msg::LogErase>(f); break;
      case msg::FileTransferProtocol::kId: keep<msg::FileTransferProtocol>(f); break;
      default: break;
    }
  }

  std::unique_ptr<Component> own, vehicle;
  Subscription heard;
  std::map<std::string, double> last;  // the router's thread
  services::ftp::Payload ftp;          // the last MAVFTP request
};

// A reply of type M: each field the last request had by that name is copied (a sequence number,
// an offset, a mission type, a log id), moved by a little or replaced from the input; the
// target is the router's component, as the engine would have it.
template <class M>
M reply(World& w, Input& in) {
  M m{};
  m.visit([&](std::string_view name, auto& field) {
    using T = std::remove_cvref_t<decltype(field)>;
    if constexpr (std::is_arithmetic_v<T>) {
      const uint8_t how = in.byte();
      const auto said = w.last.find(std::string(name));
      if (how < 160 && said != w.last.end()) {
        const int delta = how < 128 ? 0 : int(how % 8) - 2;
        if constexpr (std::is_floating_point_v<T>)
          field = static_cast<T>(said->second + delta);
        else  // wraps, as the field on the wire would
          field = static_cast<T>(static_cast<int64_t>(said->second) + delta);
      } else if (how < 224) {
        field = static_cast<T>(how % 4);  // small: counts, results, sizes that end at once
      } else {
        const uint64_t raw = in.bytes(sizeof(T));
        if constexpr (std::is_floating_point_v<T>) {
          T v;
          std::memcpy(&v, &raw, sizeof(T));
          field = v;
        } else {
          field = static_cast<T>(raw);
        }
      }
    } else {
      for (auto& b : field) b = static_cast<std::remove_cvref_t<decltype(b)>>(in.byte());
    }
  });
  if constexpr (requires { m.target_system; }) m.target_system = w.own->system_id();
  if constexpr (requires { m.target_component; }) m.target_component = w.own->component_id();
  return m;
}

// MAVFTP's reply to the last request: its sequence number plus one, its opcode, an ACK or a NAK,
// each bent by the input; the data from the input.
msg::FileTransferProtocol ftp_reply(World& w, Input& in) {
  services::ftp::Payload p;
  const services::ftp::Payload& asked = w.ftp;
  const uint8_t how = in.byte();
  p.seq = static_cast<uint16_t>(asked.seq + 1 + (how & 0x80 ? in.byte() % 8 : 0));
  p.session = how & 0x40 ? in.byte() : asked.session;
  p.opcode = how & 0x20 ? services::ftp::kNak : services::ftp::kAck;
  p.req_opcode = how & 0x10 ? in.byte() % 16 : asked.opcode;
  p.burst_complete = how & 0x08;
  p.offset = how & 0x04 ? static_cast<uint32_t>(in.bytes(4)) : asked.offset;
  p.size = in.byte();
  for (size_t i = 0; i < std::min<size_t>(p.size, p.data.size()); ++i) p.data[i] = in.byte();
  msg::FileTransferProtocol m;
  m.target_system = w.own->system_id(), m.target_component = w.own->component_id();
  m.payload = p.encode();
  return m;
}

std::vector<uint8_t> frame_of(const auto& message) {
  std::vector<uint8_t> bytes(protocol::kMaxFrameLen);
  bytes.resize(dialect::typed::encode_frame(message, {.sysid = kVehicle, .compid = kVehicle}, bytes));
  return bytes;
}

// One reply of a message the exchange listens for, chosen by the input.
std::vector<uint8_t> any_reply(World& w, Input& in, uint32_t message) {
  switch (message) {
    case msg::MissionCount::kId: return frame_of(reply<msg::MissionCount>(w, in));
    case msg::MissionItemInt::kId: return frame_of(reply<msg::MissionItemInt>(w, in));
    case msg::MissionItem::kId: return frame_of(reply<msg::MissionItem>(w, in));
    case msg::MissionRequestInt::kId: return frame_of(reply<msg::MissionRequestInt>(w, in));
    case msg::MissionRequest::kId: return frame_of(reply<msg::MissionRequest>(w, in));
    case msg::MissionAck::kId: return frame_of(reply<msg::MissionAck>(w, in));
    case msg::LogEntry::kId: return frame_of(reply<msg::LogEntry>(w, in));
    case msg::LogData::kId: return frame_of(reply<msg::LogData>(w, in));
    case msg::FileTransferProtocol::kId: return frame_of(ftp_reply(w, in));
    default: std::abort();  // an exchange listens for a message this target does not build
  }
}

void check(bool holds) {
  if (!holds) std::abort();
}

// Drives `e` as the engine would: started, then each step a reply or a silence, until it is done,
// gives up, or the input ends. `stream` (a read's) is drained by a reader that takes a little at
// a time.
void drive(World& w, Input& in, Exchange& e, const std::shared_ptr<ByteStream>& stream) {
  Component& own = *w.own;
  e.start(own);
  for (int step = 0; step < kMostSteps && !in.empty(); ++step) {
    const uint8_t what = in.byte();
    if (stream != nullptr && (what & 1)) {
      uint8_t out[1024];
      bool last = false;
      (void)stream->take(out, 1 + in.byte() * 4u, &last);
    }
    if (what % 8 == 0) {
      if (!e.paused() && !e.silent(own)) return;  // it gives up
      continue;
    }
    const std::vector<Exchange::Listen> listens = e.listens();
    check(!listens.empty());
    const std::vector<uint8_t> bytes = any_reply(w, in, listens[(what >> 3) % listens.size()].message);
    const protocol::FrameView f = protocol::view_checked(w.router.routing_table(), bytes);
    check(f.size() == bytes.size());
    if (e.heard(f, own) == Exchange::Step::kDone) return;
    if (stream != nullptr) check(stream->available() <= kStreamBytes);
  }
}

bool same_items(const std::vector<services::MissionItem>& a, const std::vector<services::MissionItem>& b) {
  if (a.size() != b.size()) return false;
  auto same = [](float x, float y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  for (size_t i = 0; i < a.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    if (x.command != y.command || x.frame != y.frame || x.current != y.current || x.autocontinue != y.autocontinue ||
        x.x != y.x || x.y != y.y || !same(x.z, y.z))
      return false;
    for (size_t k = 0; k < 4; ++k)
      if (!same(x.params[k], y.params[k])) return false;
  }
  return true;
}

// A client's file: read, and when it is one, written back and read again to the same lists.
void files(Input& in) {
  const uint8_t what = in.byte() % 3;
  const services::PlanVehicle vehicle{.autopilot = static_cast<uint8_t>(in.byte() & 1 ? 3 : 12), .type = 2};
  const std::string_view text = in.rest();
  std::string error;
  if (what == 0) {
    const auto plan = services::parse_plan(text, vehicle, &error);
    if (!plan) return;
    const auto again = services::parse_plan(services::plan_json(*plan, vehicle), vehicle, &error);
    check(again.has_value());
    for (auto list : {&services::Plan::mission, &services::Plan::fence, &services::Plan::rally}) {
      check(((*plan).*list).has_value() == ((*again).*list).has_value());
      if ((*plan).*list) check(same_items(*((*plan).*list), *((*again).*list)));
    }
  } else if (what == 1) {
    const auto items = services::parse_wpl(text, &error);
    if (!items) return;
    const auto again = services::parse_wpl(services::wpl_text(*items), &error);
    check(again.has_value() && same_items(*items, *again));
  } else {
    const auto lines = vehicle::parse_parameter_file(text, &error);
    if (lines) check(lines->size() <= vehicle::VehicleParameters::kMaxParameters);
  }
}

std::vector<services::MissionItem> items_from(Input& in) {
  std::vector<services::MissionItem> items(in.byte() % 8);
  for (auto& i : items) i.command = static_cast<uint16_t>(in.bytes(2)), i.frame = in.byte() % 12;
  return items;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  Input in(data, size);
  const uint8_t what = in.byte() % 12;
  if (what == 11) {
    files(in);
    return 0;
  }
  world.router.run_on_loop([&] {
    world.last.clear();
    world.ftp = {};
    const uint8_t type = in.byte() % 4;  // mission, fence, rally, and one that is none
    std::shared_ptr<ByteStream> stream;
    std::unique_ptr<Exchange> e;
    switch (what) {
      case 0: e = std::make_unique<MissionExchange>(MissionExchange::Mode::kRead, kVehicle, kVehicle, type); break;
      case 1:
        e = std::make_unique<MissionExchange>(MissionExchange::Mode::kWrite, kVehicle, kVehicle, type, items_from(in));
        break;
      case 2: e = std::make_unique<MissionExchange>(MissionExchange::Mode::kClear, kVehicle, kVehicle, type); break;
      case 3: e = std::make_unique<FtpExchange>(FtpExchange::Mode::kList, kVehicle, kVehicle, "/", in.byte()); break;
      case 4: {
        auto f = std::make_unique<FtpExchange>(FtpExchange::Mode::kRead, kVehicle, kVehicle, "/a", in.byte());
        stream = std::make_shared<ByteStream>(kStreamBytes);
        f->read_into(stream, [](uint64_t) {});
        e = std::move(f);
        break;
      }
      case 5: {
        auto f = std::make_unique<FtpExchange>(FtpExchange::Mode::kWrite, kVehicle, kVehicle, "/a", in.byte());
        f->write_from(std::string(in.byte() * 7u, 'x'));
        e = std::move(f);
        break;
      }
      case 6: e = std::make_unique<FtpExchange>(FtpExchange::Mode::kRemove, kVehicle, kVehicle, "/a", 0); break;
      case 7: e = std::make_unique<FtpExchange>(FtpExchange::Mode::kCrc, kVehicle, kVehicle, "/a", 0); break;
      case 8: e = LogExchange::list(kVehicle, kVehicle, in.byte() % 4, 0xFFFF, in.byte() & 1); break;
      case 9: e = LogExchange::list(kVehicle, kVehicle, 0, in.byte() % 8); break;
      default: {
        stream = std::make_shared<ByteStream>(kStreamBytes);
        const uint64_t from = in.byte() * 45u;
        e = LogExchange::read(kVehicle, kVehicle, in.byte() % 4, from, from + in.bytes(2) * 4u, stream);
        break;
      }
    }
    drive(world, in, *e, stream);
    if (auto* m = dynamic_cast<MissionExchange*>(e.get())) {
      const auto [done, total] = m->progress();
      check(total == 0 || done <= total);
    }
    if (auto* f = dynamic_cast<FtpExchange*>(e.get())) check(f->entries().size() <= 10'000);
  });
  return 0;
}
