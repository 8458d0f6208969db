#include "services/mission_exchange.hpp"

#include <cmath>

#include "mavswitch/msg/mission_ack.hpp"
#include "mavswitch/msg/mission_clear_all.hpp"
#include "mavswitch/msg/mission_count.hpp"
#include "mavswitch/msg/mission_item.hpp"
#include "mavswitch/msg/mission_item_int.hpp"
#include "mavswitch/msg/mission_request.hpp"
#include "mavswitch/msg/mission_request_int.hpp"
#include "mavswitch/msg/mission_request_list.hpp"

namespace mavswitch::services {

FrameScale frame_scale(uint8_t frame) noexcept {
  switch (frame) {
    case 0:
    case 3:
    case 5:
    case 6:
    case 10:
    case 11: return FrameScale::kGlobal;  // GLOBAL*, *_INT, TERRAIN
    case 1:
    case 4:
    case 7:
    case 8:
    case 9:
    case 20:
    case 21: return FrameScale::kLocal;  // LOCAL_*, BODY_*
    default: return FrameScale::kNone;
  }
}

namespace {

// MISSION_ITEM's float x and y as MISSION_ITEM_INT's integers.
int32_t to_int(float v, uint8_t frame) {
  const double scale = frame_scale(frame) == FrameScale::kGlobal  ? 1e7
                       : frame_scale(frame) == FrameScale::kLocal ? 1e4
                                                                  : 1;
  const double scaled = std::round(double(v) * scale);
  return std::isfinite(scaled) ? static_cast<int32_t>(std::clamp(scaled, -2147483648.0, 2147483647.0)) : 0;
}

}  // namespace

std::vector<Exchange::Listen> MissionExchange::listens() const {
  switch (mode_) {
    case Mode::kRead:
      return {{msg::MissionCount::kId, true},
              {msg::MissionItemInt::kId, true},
              {msg::MissionItem::kId, true},
              {msg::MissionAck::kId, true}};
    case Mode::kWrite:
      return {{msg::MissionRequestInt::kId, true}, {msg::MissionRequest::kId, true}, {msg::MissionAck::kId, true}};
    case Mode::kClear: return {{msg::MissionAck::kId, true}};
  }
  return {};
}

void MissionExchange::start(Component& from) {
  if (mode_ == Mode::kRead) items_.clear();
  if (mode_ == Mode::kWrite) count_ = items_.size();
  silent(from);
}

bool MissionExchange::silent(Component& from) {
  switch (mode_) {
    case Mode::kRead: ask(from); break;
    case Mode::kWrite:
      if (last_asked_) {
        send_item(from, *last_asked_);  // it may not have come
        resent_ = true;
        resent_last_ = *last_asked_ + 1u == items_.size();
      } else {
        msg::MissionCount m;
        m.target_system = system_, m.target_component = component_;
        m.count = static_cast<uint16_t>(items_.size());
        m.mission_type = type_;
        from.send(m);
      }
      break;
    case Mode::kClear: {
      msg::MissionClearAll m;
      m.target_system = system_, m.target_component = component_;
      m.mission_type = type_;
      from.send(m);
      break;
    }
  }
  return true;
}

Exchange::Step MissionExchange::heard(const protocol::FrameView& frame, Component& from) {
  if (frame.msgid() == msg::MissionAck::kId) {
    const auto ack = msg::MissionAck::decode(frame.payload());
    if (ack.mission_type != type_) return Step::kIgnored;
    // A read ends with our ack; theirs there is a refusal (a type it does not have, say).
    if (mode_ == Mode::kWrite && !last_asked_ && ack.type == kAccepted && !items_.empty()) return Step::kIgnored;
    // An item sent again after a silence and refused as out of order: the vehicle had it, and
    // its request for the next was lost. The next is sent rather than waiting for the vehicle
    // to ask again (ArduPilot: a second later); one it did not want is refused the same way.
    // Not progress: only the vehicle's own request for an item is (a vehicle that left the
    // transfer refuses every item, and the tries run out).
    if (mode_ == Mode::kWrite && ack.type == kInvalidSequence) {
      if (!resent_ || !last_asked_ || *last_asked_ + 1u >= items_.size()) return Step::kIgnored;
      resent_ = false;
      last_asked_ = *last_asked_ + 1u;
      send_item(from, *last_asked_);
      return Step::kIgnored;
    }
    // The last item sent again after a silence, and refused: the vehicle had taken it and its
    // ACCEPTED was lost, or it gave up. Which, it does not say: the write starts again (twice at
    // most), so that what is answered is what the vehicle holds.
    if (mode_ == Mode::kWrite && ack.type != kAccepted && resent_last_ && restarts_ < kRestarts) {
      ++restarts_;
      last_asked_.reset();
      resent_ = resent_last_ = false;
      silent(from);  // MISSION_COUNT again
      return Step::kProgress;
    }
    result_ = ack.type;
    return Step::kDone;
  }
  return mode_ == Mode::kRead ? read(frame, from) : write(frame, from);
}

Exchange::Step MissionExchange::read(const protocol::FrameView& frame, Component& from) {
  if (frame.msgid() == msg::MissionCount::kId) {
    const auto c = msg::MissionCount::decode(frame.payload());
    if (c.mission_type != type_ || counted_) return Step::kIgnored;
    counted_ = true;
    count_ = c.count;
    if (count_ == 0) {
      acknowledge(from, kAccepted);
      return Step::kDone;
    }
    ask(from);
    return Step::kProgress;
  }
  if (!counted_) return Step::kIgnored;
  MissionItem item;
  uint16_t seq = 0;
  uint8_t type = 0;
  if (frame.msgid() == msg::MissionItemInt::kId) {
    const auto m = msg::MissionItemInt::decode(frame.payload());
    seq = m.seq, type = m.mission_type;
    item = {m.command, m.frame, m.current != 0, m.autocontinue != 0, {m.param1, m.param2, m.param3, m.param4}, m.x,
            m.y,       m.z};
  } else {
    const auto m = msg::MissionItem::decode(frame.payload());
    seq = m.seq, type = m.mission_type;
    item = {m.command,
            m.frame,
            m.current != 0,
            m.autocontinue != 0,
            {m.param1, m.param2, m.param3, m.param4},
            to_int(m.x, m.frame),
            to_int(m.y, m.frame),
            m.z};
  }
  if (type != type_ || seq != items_.size()) return Step::kIgnored;  // not the one asked for: a copy
  items_.push_back(item);
  done_ = items_.size();
  if (items_.size() == count_) {
    acknowledge(from, kAccepted);
    result_ = kAccepted;
    return Step::kDone;
  }
  ask(from);
  return Step::kProgress;
}

Exchange::Step MissionExchange::write(const protocol::FrameView& frame, Component& from) {
  uint16_t seq = 0;
  uint8_t type = 0;
  if (frame.msgid() == msg::MissionRequestInt::kId) {
    const auto r = msg::MissionRequestInt::decode(frame.payload());
    seq = r.seq, type = r.mission_type;
  } else {
    const auto r = msg::MissionRequest::decode(frame.payload());
    seq = r.seq, type = r.mission_type;
  }
  if (type != type_ || seq >= items_.size()) return Step::kIgnored;
  last_asked_ = seq;
  resent_ = false;
  // An item asked again is answered, but only one not asked before is progress: a vehicle that
  // asks for the same item for ever spends the tries instead of keeping the transfer alive.
  const bool fresh = seq >= done_;
  done_ = std::max<uint64_t>(done_, seq + 1u);
  send_item(from, seq);
  return fresh ? Step::kProgress : Step::kIgnored;
}

void MissionExchange::ask(Component& from) {
  if (!counted_) {
    msg::MissionRequestList m;
    m.target_system = system_, m.target_component = component_;
    m.mission_type = type_;
    from.send(m);
    return;
  }
  msg::MissionRequestInt m;
  m.target_system = system_, m.target_component = component_;
  m.seq = static_cast<uint16_t>(items_.size());
  m.mission_type = type_;
  from.send(m);
}

void MissionExchange::send_item(Component& from, uint16_t seq) {
  const MissionItem& i = items_[seq];
  msg::MissionItemInt m;
  m.target_system = system_, m.target_component = component_;
  m.seq = seq;
  m.frame = i.frame;
  m.command = i.command;
  m.current = i.current ? 1 : 0;
  m.autocontinue = i.autocontinue ? 1 : 0;
  m.param1 = i.params[0], m.param2 = i.params[1], m.param3 = i.params[2], m.param4 = i.params[3];
  m.x = i.x, m.y = i.y, m.z = i.z;
  m.mission_type = type_;
  from.send(m);
}

void MissionExchange::acknowledge(Component& from, uint8_t result) {
  msg::MissionAck m;
  m.target_system = system_, m.target_component = component_;
  m.type = result;
  m.mission_type = type_;
  from.send(m);
}

}  // namespace mavswitch::services
