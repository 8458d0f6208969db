// The log protocol's reads against an in-process vehicle that answers as ArduPilot's file backend
// does for the log it is writing: LOG_DATA reads only what it has flushed to its file, a short
// read ends its answer, and the rest comes once it flushes. A short answer short of the size the
// read asked for is asked again; the same short end three times is the log's end.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <string>

#include "base/byte_stream.hpp"
#include "e2e/router_fixture.hpp"
#include "library/component.hpp"
#include "library/transactions.hpp"
#include "mavswitch/msg/log_data.hpp"
#include "mavswitch/msg/log_entry.hpp"
#include "mavswitch/msg/log_request_data.hpp"
#include "mavswitch/msg/log_request_list.hpp"
#include "services/log_exchange.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
using namespace std::chrono_literals;
using services::LogExchange;

namespace {

constexpr uint16_t kLog = 1;

// Log kLog's bytes; `flushed` of them readable now, `flush` more after each short answer.
class WritingVehicle {
 public:
  WritingVehicle(Router& router, std::string log, size_t flushed, size_t flush)
      : component_(router, 1, 1), log_(std::move(log)), flushed_(flushed), flush_(flush) {
    component_.start_heartbeat(2, 3, 200ms);  // the routes know it
    asks_ = component_.subscribe<msg::LogRequestData>(
        [this](const msg::LogRequestData& m, const protocol::FrameView&) { answer(m.ofs, m.count); },
        {.addressed_to_me = true});
  }
  int short_answers() const { return short_answers_; }  // the router's thread
  int requests() const { return requests_; }            // the router's thread
  // A broken (or hostile) vehicle: every request answered with the log's first packet again.
  void get_stuck() { stuck_ = true; }
  // Another: it has three logs, but every list request gets the first one's entry, three times.
  void list_the_first_only() {
    lists_ = component_.subscribe<msg::LogRequestList>(
        [this](const msg::LogRequestList&, const protocol::FrameView&) {
          ++requests_;
          msg::LogEntry e;
          e.id = kLog, e.num_logs = 3, e.last_log_num = 3, e.size = static_cast<uint32_t>(log_.size());
          for (int i = 0; i < 3; ++i) component_.send(e);
        },
        {.addressed_to_me = true});
  }

 private:
  void answer(uint32_t ofs, uint32_t count) {
    ++requests_;
    if (stuck_ && requests_ > 1) ofs = 0, count = LogExchange::kDataMax;
    for (uint64_t at = ofs; at < uint64_t(ofs) + count; at += LogExchange::kDataMax) {
      msg::LogData d;
      d.id = kLog;
      d.ofs = static_cast<uint32_t>(at);
      const size_t readable = at < flushed_ ? flushed_ - at : 0;
      d.count = static_cast<uint8_t>(std::min<uint64_t>({LogExchange::kDataMax, readable, uint64_t(ofs) + count - at}));
      std::copy_n(log_.begin() + std::ptrdiff_t(at), d.count, d.data.begin());
      component_.send(d);
      if (d.count < LogExchange::kDataMax && at + d.count < uint64_t(ofs) + count) {  // a short read ends it
        ++short_answers_;
        flushed_ = std::min(log_.size(), flushed_ + flush_);
        return;
      }
    }
  }
  Component component_;
  Subscription asks_, lists_;
  const std::string log_;
  size_t flushed_, flush_;
  int short_answers_ = 0;
  int requests_ = 0;
  bool stuck_ = false;
};

struct LogSite {
  LogSite(std::string bytes, size_t flushed, size_t flush) : log(std::move(bytes)) {
    rt.start_with_udp_server();
    own = std::make_unique<Component>(rt.router, 254, 190);
    vehicle = std::make_unique<WritingVehicle>(rt.router, this->log, flushed, flush);
    EXPECT_TRUE(wait_until([&] { return rt.on_loop([&] { return rt.router.routing().routes().knows(1, 1); }); }));
  }
  ~LogSite() {
    vehicle.reset();
    own.reset();
  }
  struct Read {
    Transactions::End end;
    bool complete;
    std::string bytes;
  };
  // Log kLog's first `size` bytes, as the window reads them (its listed size).
  Read read(uint64_t size, std::chrono::seconds deadline = 60s) {
    auto stream = std::make_shared<ByteStream>(1 << 20);
    // Shared with the callback: a read that outlives the deadline still has them.
    auto ended = std::make_shared<std::promise<std::pair<Transactions::End, bool>>>();
    rt.router.event_loop().post([this, size, stream, ended] {
      own->transactions().run<LogExchange>(nullptr, 1, 1, "log", LogExchange::read(1, 1, kLog, 0, size, stream),
                                           [stream, ended](Transactions::End end, const LogExchange& e) {
                                             stream->finish(e.complete());
                                             ended->set_value({end, e.complete()});
                                           });
    });
    auto f = ended->get_future();
    if (f.wait_for(deadline) != std::future_status::ready) {
      ADD_FAILURE() << "the read did not end within " << deadline.count() << " s";
      return {Transactions::End::kNoAnswer, false, {}};
    }
    const auto [end, complete] = f.get();
    std::string bytes(stream->available(), '\0');
    bool last = false;
    bytes.resize(stream->take(reinterpret_cast<uint8_t*>(bytes.data()), bytes.size(), &last));
    return {end, complete, bytes};
  }
  // The list of logs, as the window asks for it: how it ended and the entries it got.
  std::pair<Transactions::End, size_t> list(std::chrono::seconds deadline) {
    auto ended = std::make_shared<std::promise<std::pair<Transactions::End, size_t>>>();
    rt.router.event_loop().post([this, ended] {
      own->transactions().run<LogExchange>(nullptr, 1, 1, "log", LogExchange::list(1, 1),
                                           [ended](Transactions::End end, const LogExchange& e) {
                                             ended->set_value({end, e.entries().size()});
                                           });
    });
    auto f = ended->get_future();
    if (f.wait_for(deadline) != std::future_status::ready) {
      ADD_FAILURE() << "the list did not end within " << deadline.count() << " s";
      return {Transactions::End::kDone, 0};
    }
    return f.get();
  }
  RouterThread rt;
  std::string log;
  std::unique_ptr<Component> own;
  std::unique_ptr<WritingVehicle> vehicle;
};

std::string log_of(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 + i / 251);
  return s;
}

}  // namespace

// Listed at 2,000 bytes, 700 on file: each short answer is asked again, and the log grows into
// its listed size (the CI failure of b53af82: a body 66,960 bytes long for a log listed at 77,824).
TEST(LogReads, ALogStillBeingWrittenIsReadToItsListedSize) {
  LogSite site(log_of(2000), 700, 500);
  const auto got = site.read(2000);
  EXPECT_EQ(got.end, Transactions::End::kDone);
  EXPECT_TRUE(got.complete);
  EXPECT_EQ(got.bytes.size(), site.log.size());
  EXPECT_TRUE(got.bytes == site.log) << "the vehicle's bytes, in order";
  EXPECT_GE(site.rt.on_loop([&] { return site.vehicle->short_answers(); }), 3) << "700, 1,200 and 1,700: short";
}

// A log shorter than asked for, for good: the same short end three times is its end.
TEST(LogReads, TheSameShortEndThreeTimesIsTheLogsEnd) {
  LogSite site(log_of(2000), 700, 0);
  const auto got = site.read(2000);
  EXPECT_EQ(got.end, Transactions::End::kDone);
  EXPECT_TRUE(got.complete);
  EXPECT_EQ(got.bytes.size(), 700u);
  EXPECT_TRUE(got.bytes == site.log.substr(0, 700)) << "the vehicle's bytes, in order";
  EXPECT_EQ(site.rt.on_loop([&] { return site.vehicle->short_answers(); }), LogExchange::kShortEnds);
}

// A vehicle that answers every request after the first with the log's first packet again: bytes
// the read has are no progress, so its tries run out (each silence asks again) and the read ends
// without an answer, with what came in order; it is not kept alive for ever.
TEST(LogReads, AVehicleSayingTheSameAgainAndAgainSpendsTheTries) {
  LogSite site(log_of(200'000), 200'000, 0);
  site.rt.on_loop([&] {
    site.vehicle->get_stuck();
    return 0;
  });
  const auto started = std::chrono::steady_clock::now();
  const auto got = site.read(200'000, 30s);
  EXPECT_EQ(got.end, Transactions::End::kNoAnswer);
  EXPECT_FALSE(got.complete);
  EXPECT_EQ(got.bytes.size(), size_t{LogExchange::kWindow}) << "the first window, in order";
  EXPECT_TRUE(got.bytes == site.log.substr(0, LogExchange::kWindow));
  EXPECT_LE(site.rt.on_loop([&] { return site.vehicle->requests(); }), LogExchange::kTries + 2);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s) << "its tries, 500 ms each";
}

// A vehicle that says its first log's entry three times at every list request and never the
// other two: an entry said again is no progress, so the silences spend the tries and the list
// ends without an answer, holding the one entry (before, each repeat started the tries again).
TEST(LogLists, AnEntrySaidAgainAndAgainSpendsTheTries) {
  LogSite site(log_of(1000), 1000, 0);
  site.rt.on_loop([&] {
    site.vehicle->list_the_first_only();
    return 0;
  });
  const auto started = std::chrono::steady_clock::now();
  const auto [end, entries] = site.list(30s);
  EXPECT_EQ(end, Transactions::End::kNoAnswer);
  EXPECT_EQ(entries, 1u);
  EXPECT_LE(site.rt.on_loop([&] { return site.vehicle->requests(); }), LogExchange::kTries + 2);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s) << "its tries, 500 ms each";
}
