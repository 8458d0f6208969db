#include "services/log_exchange.hpp"

#include "mavswitch/msg/log_data.hpp"
#include "mavswitch/msg/log_entry.hpp"
#include "mavswitch/msg/log_erase.hpp"
#include "mavswitch/msg/log_request_data.hpp"
#include "mavswitch/msg/log_request_end.hpp"
#include "mavswitch/msg/log_request_list.hpp"

namespace mavswitch::services {

std::unique_ptr<LogExchange> LogExchange::list(uint8_t system, uint8_t component, uint16_t first, uint16_t last,
                                               bool erase) {
  std::unique_ptr<LogExchange> e(new LogExchange(system, component));
  e->first_ = first, e->last_ = last, e->erase_ = erase;
  return e;
}

std::unique_ptr<LogExchange> LogExchange::read(uint8_t system, uint8_t component, uint16_t id, uint64_t from,
                                               uint64_t end, std::shared_ptr<ByteStream> into) {
  std::unique_ptr<LogExchange> e(new LogExchange(system, component));
  e->reading_ = true;
  e->id_ = id, e->start_ = from, e->end_ = end;
  e->into_ = std::make_unique<OrderedBytes>(std::move(into), from, kMaxAhead);
  e->into_->limit(end);
  return e;
}

// LOG_ENTRY and LOG_DATA name no target: the engine takes them from the component's link.
std::vector<Exchange::Listen> LogExchange::listens() const {
  if (reading_) return {{msg::LogData::kId, false}};
  return {{msg::LogEntry::kId, false}};
}

void LogExchange::start(Component& from) {
  if (reading_) return ask_data(from);
  if (erase_) {
    msg::LogErase m;
    m.target_system = system_, m.target_component = component_;
    from.send(m);
  }
  ask_list(from);
}

void LogExchange::ask_list(Component& from) {
  msg::LogRequestList m;
  m.target_system = system_, m.target_component = component_;
  m.start = first_, m.end = last_;
  from.send(m);
}

void LogExchange::ask_data(Component& from) {
  if (into_->stream().cancelled() || into_->stream().room() == 0) return;  // gone, or paused
  const uint64_t at = into_->at();
  const uint64_t until = std::min<uint64_t>(into_->gap_end().value_or(end_), end_);
  asked_end_ = std::min<uint64_t>(until, at + kWindow);
  msg::LogRequestData m;
  m.target_system = system_, m.target_component = component_;
  m.id = id_;
  m.ofs = static_cast<uint32_t>(at);
  m.count = static_cast<uint32_t>(asked_end_ - at);
  from.send(m);
}

Exchange::Step LogExchange::heard(const protocol::FrameView& frame, Component& from) {
  if (!reading_) {
    const auto e = msg::LogEntry::decode(frame.payload());
    count_ = e.num_logs;
    // Ids run up to last_log_num: one past it is not a log (ArduPilot answers it with an empty
    // entry), and asking only past it gets nothing more.
    const uint16_t newest = e.last_log_num > 0 ? e.last_log_num : 0xFFFF;
    bool fresh = false;
    if (e.num_logs > 0 && e.id >= first_ && e.id <= last_ && e.id <= newest)
      fresh = entries_.insert_or_assign(e.id, Entry{e.id, e.time_utc, e.size}).second;
    if (e.num_logs == 0 || first_ > newest) return Step::kDone;
    // All of them: as many as it has, or as many as the ids asked for can hold.
    const size_t wanted = std::min<size_t>(*count_, size_t(std::min(last_, newest)) - first_ + 1);
    if (entries_.size() >= wanted) return Step::kDone;
    return fresh ? Step::kProgress : Step::kIgnored;  // an entry said again is no progress
  }
  const auto d = msg::LogData::decode(frame.payload());
  if (d.id != id_) return Step::kIgnored;
  if (into_->stream().cancelled()) return end_read(from);
  const size_t count = std::min<size_t>(d.count, kDataMax);
  // Bytes it had are no progress: a component that says the same again and again spends the
  // tries (each silence asks again) instead of keeping the read alive for ever.
  const Step step =
      into_->put(d.ofs, {reinterpret_cast<const char*>(d.data.data()), count}) ? Step::kProgress : Step::kIgnored;
  // A short packet short of the size listed: the log ends there, or its writer has not yet
  // flushed the rest (ArduPilot lists a log being written at what it has buffered, and reads it
  // from its file). Asked again after a silence, it is the end once said kShortEnds times at the
  // same place; a log that grew meanwhile goes on.
  const uint64_t short_end = uint64_t(d.ofs) + count;
  if (count < kDataMax && short_end < end_ && short_end >= into_->at()) {
    short_ends_ = short_end == short_end_ ? short_ends_ + 1 : 1;
    short_end_ = short_end;
    if (short_ends_ < kShortEnds) return step;  // silent() asks again from there
    end_ = short_end;
    into_->limit(end_);
  }
  if (into_->at() >= end_) {
    complete_ = true;
    return end_read(from);
  }
  // The window's last: the next, or the gaps.
  if (step == Step::kProgress && uint64_t(d.ofs) + count >= asked_end_) ask_data(from);
  return step;
}

Exchange::Step LogExchange::end_read(Component& from) {
  msg::LogRequestEnd m;
  m.target_system = system_, m.target_component = component_;
  from.send(m);
  return Step::kDone;
}

bool LogExchange::silent(Component& from) {
  if (!reading_) {
    ask_list(from);
    return true;
  }
  if (into_->stream().cancelled()) return false;
  ask_data(from);
  return true;
}

bool LogExchange::paused() const { return reading_ && !into_->stream().cancelled() && into_->stream().room() == 0; }

std::pair<uint64_t, uint64_t> LogExchange::progress() const {
  if (reading_) return {into_->at() - start_, end_ - start_};
  return {entries_.size(), count_.value_or(0)};
}

}  // namespace mavswitch::services
