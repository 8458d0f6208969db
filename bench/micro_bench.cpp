// Microbenchmarks of the per-message work beside the system calls.
//   build/bench/micro_bench [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dialect/builtin.hpp"
#include "library/frame_queues.hpp"
#include "library/subscriber_index.hpp"
#include "protocol/encoder.hpp"
#include "protocol/parser.hpp"
#include "router/frame_handover.hpp"
#include "routing/routing.hpp"
#include "routing/sequence_tracker.hpp"
#include "transport/output_queue.hpp"

using namespace mavswitch;

namespace {

// Frames of the telemetry mix from four vehicles (systems first_sys..first_sys+3).
std::vector<std::vector<uint8_t>> mix_frames(uint8_t first_sys = 1) {
  constexpr uint32_t kMix[16] = {30, 33, 30, 74, 30, 33, 30, 1, 30, 33, 30, 74, 30, 33, 30, 0};
  std::vector<std::vector<uint8_t>> frames;
  for (uint8_t v = first_sys; v < first_sys + 4; ++v) {
    for (uint32_t id : kMix) {
      const auto* info = dialect::builtin::message_table().find(id);
      uint8_t payload[64];
      std::fill(std::begin(payload), std::end(payload), uint8_t{0x33});
      std::vector<uint8_t> f(protocol::kMaxFrameLen);
      f.resize(
          protocol::encode_v2({.sysid = v, .compid = 1, .msgid = id}, {payload, info->max_len}, info->crc_extra, f));
      frames.push_back(std::move(f));
    }
  }
  return frames;
}

std::vector<protocol::FrameView> views(const std::vector<std::vector<uint8_t>>& frames) {
  std::vector<protocol::FrameView> out;
  for (const auto& f : frames)
    out.push_back(protocol::probe_frame(dialect::builtin::message_table(), f.data(), f.size()).frame);
  return out;
}

// The route decision per frame: learn, target lookup, destinations. Arguments: vehicle links
// and GCS links (1, 1: S1; 4, 5: S3, where a vehicle's frame goes to 5 GCS and 3 vehicles),
// and how many made-up component ids of each vehicle's system another peer (on a link of its
// own) has sent from beforehand: the real components' decisions should not notice.
void BM_RouteDecision(benchmark::State& state) {
  const auto frames = mix_frames();
  const auto v = views(frames);
  const auto vehicle_links = static_cast<uint32_t>(state.range(0));
  routing::Routing r;
  for (int64_t i = 0; i < state.range(0) + state.range(1); ++i) r.add_link(routing::LinkPolicy{});
  if (state.range(2) > 0) {
    const routing::LinkId sprayer = r.add_link(routing::LinkPolicy{});
    const auto* info = dialect::builtin::message_table().find(0);
    const uint8_t payload[9] = {};
    for (uint8_t sys = 1; sys <= 4; ++sys) {
      for (int64_t c = 0; c < state.range(2); ++c) {
        std::vector<uint8_t> f(protocol::kMaxFrameLen);
        f.resize(protocol::encode_v2({.sysid = sys, .compid = static_cast<uint8_t>(2 + c), .msgid = 0}, payload,
                                     info->crc_extra, f));
        r.route(sprayer, protocol::probe_frame(dialect::builtin::message_table(), f.data(), f.size()).frame, 1000,
                [](routing::LinkId) {});
      }
    }
  }
  // Which link each frame comes in on, worked out before timing: the loop times the decision,
  // not the harness (a division per iteration would cost several ns).
  std::vector<routing::LinkId> from(v.size());
  for (size_t k = 0; k < v.size(); ++k) from[k] = (v[k].sysid() - 1u) % vehicle_links;
  const size_t mask = v.size() - 1;  // 64 frames: a power of two
  uint64_t delivered = 0;
  size_t i = 0;
  for (auto _ : state) {
    const size_t k = i++ & mask;
    r.route(from[k], v[k], 1000, [&](routing::LinkId) { ++delivered; });
  }
  benchmark::DoNotOptimize(delivered);
  state.counters["deliveries/frame"] = static_cast<double>(delivered) / static_cast<double>(state.iterations());
}

// The same decisions made by several threads at once on one shared Routing, each with its own
// context and its own vehicles' links, as the I/O workers do (S3 topology, 4 vehicles of its
// own per thread, 5 shared GCS links). Time advances, so routes are refreshed as in real
// traffic. Items per second is the total over the threads: the shared core should scale.
void BM_RouteDecisionShared(benchmark::State& state) {
  static routing::Routing* shared = [] {
    auto* r = new routing::Routing;
    for (int i = 0; i < 5 + 4 * 8; ++i) r->add_link(routing::LinkPolicy{});
    for (int t = 1; t < 8; ++t) r->add_context();
    return r;
  }();
  routing::RoutingContext& ctx = shared->context(static_cast<size_t>(state.thread_index()));
  const auto first_sys = static_cast<uint8_t>(1 + 10 * state.thread_index());
  const auto frames = mix_frames(first_sys);
  const auto v = views(frames);
  const uint32_t first_link = 5 + 4 * static_cast<uint32_t>(state.thread_index());
  uint64_t delivered = 0;
  size_t i = 0;
  for (auto _ : state) {
    const auto& f = v[i % v.size()];
    shared->route(ctx, first_link + (f.sysid() - first_sys), f, static_cast<routing::Millis>(i / 4096),
                  [&](routing::LinkId) { ++delivered; });
    ++i;
  }
  benchmark::DoNotOptimize(delivered);
  state.SetItemsProcessed(state.iterations());
  state.counters["deliveries/frame"] = benchmark::Counter(
      static_cast<double>(delivered) / static_cast<double>(state.iterations()), benchmark::Counter::kAvgThreads);
}

// The distribution of single decisions (the PX4 lesson: mean and max), one call timed at a
// time. Argument 0: S3's steady state (9 links, a vehicle's frame to the 8 others); 1: the
// first frame of a (system, component) never heard before, which learns a route (the only
// decision that may allocate), cycling through all 65,025 of them (a fresh Routing each
// cycle, made untimed). Each sample is the time between two clock reads around the call, and
// the same pair is read around nothing just before it ("harness"): a sample far above the
// harness's own tail is the code, one the harness shares is the machine (an interrupt or a
// preemption). Counters in ns: p50, p99, p99.99 and max of each, and how many samples took
// over 10 us.
void BM_RouteDecisionTail(benchmark::State& state) {
  const bool learning = state.range(0) == 1;
  std::vector<std::vector<uint8_t>> frames = learning ? std::vector<std::vector<uint8_t>>{} : mix_frames();
  if (learning) {
    const auto* info = dialect::builtin::message_table().find(0);
    const uint8_t payload[9] = {};
    for (int sys = 1; sys <= 255; ++sys) {
      for (int comp = 1; comp <= 255; ++comp) {
        std::vector<uint8_t> f(protocol::kMaxFrameLen);
        f.resize(
            protocol::encode_v2({.sysid = static_cast<uint8_t>(sys), .compid = static_cast<uint8_t>(comp), .msgid = 0},
                                payload, info->crc_extra, f));
        frames.push_back(std::move(f));
      }
    }
  }
  const auto v = views(frames);
  auto fresh = [] {
    auto r = std::make_unique<routing::Routing>();
    for (int i = 0; i < 9; ++i) r->add_link(routing::LinkPolicy{});
    return r;
  };
  auto r = fresh();
  std::vector<uint32_t> decision, harness;
  decision.reserve(static_cast<size_t>(state.max_iterations));
  harness.reserve(static_cast<size_t>(state.max_iterations));
  auto now = [] {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  };
  uint64_t delivered = 0;
  size_t i = 0;
  for (auto _ : state) {
    if (learning && i == v.size()) {
      r = fresh();
      i = 0;
    }
    const auto& f = v[i];
    const routing::LinkId from = learning ? static_cast<routing::LinkId>(i % 4) : (f.sysid() - 1u) % 4;
    i = learning ? i + 1 : (i + 1) % v.size();
    const int64_t t0 = now();
    const int64_t t1 = now();
    r->route(from, f, 1000, [&](routing::LinkId) { ++delivered; });
    const int64_t t2 = now();
    harness.push_back(static_cast<uint32_t>(t1 - t0));
    decision.push_back(static_cast<uint32_t>(t2 - t1));
  }
  benchmark::DoNotOptimize(delivered);
  if (!learning && decision.size() > 1000) {  // after warm-up (routes learned)
    decision.erase(decision.begin(), decision.begin() + 1000);
    harness.erase(harness.begin(), harness.begin() + 1000);
  }
  auto report = [&](std::vector<uint32_t>& samples, const std::string& name) {
    if (samples.empty()) return;
    std::sort(samples.begin(), samples.end());
    auto at = [&](double q) {
      return static_cast<double>(samples[static_cast<size_t>(q * static_cast<double>(samples.size() - 1))]);
    };
    state.counters[name + "_p50"] = at(0.5);
    state.counters[name + "_p99"] = at(0.99);
    state.counters[name + "_p99.99"] = at(0.9999);
    state.counters[name + "_max"] = static_cast<double>(samples.back());
    state.counters[name + "_over_10us"] =
        static_cast<double>(samples.end() - std::upper_bound(samples.begin(), samples.end(), 10'000u));
  };
  report(decision, "decision");
  report(harness, "harness");
}

// Matching a frame against N subscribers that want other messages: must be flat in N.
void BM_SubscriberMatch(benchmark::State& state) {
  library_detail::SubscriberIndex index;
  for (int64_t s = 0; s < state.range(0); ++s) {
    auto sub = std::make_shared<library_detail::Subscriber>();
    sub->id = static_cast<uint64_t>(s + 1);
    sub->filter.message_id = static_cast<uint32_t>(1000 + s);
    index = index.with(sub);
  }
  auto wanted = std::make_shared<library_detail::Subscriber>();
  wanted->id = 99999;
  wanted->filter.message_id = 30;
  index = index.with(wanted);
  uint64_t matched = 0;
  for (auto _ : state) {
    index.for_each_candidate(1, 30, [&](library_detail::Subscriber&) { ++matched; });
    benchmark::DoNotOptimize(matched);
  }
}

// The whole decision for a frame that an in-process component subscribes to: the route
// decision (S1 topology: a vehicle link and a component's link) and, for the delivery to the
// component, the match against its N subscribers (one wants ATTITUDE, the rest other ids).
void BM_RouteAndMatch(benchmark::State& state) {
  const auto frames = mix_frames();
  const auto v = views(frames);
  routing::Routing r;
  r.add_link(routing::LinkPolicy{});  // the vehicle
  r.add_link(routing::LinkPolicy{});  // the component
  library_detail::SubscriberIndex index;
  for (int64_t s = 0; s < state.range(0); ++s) {
    auto sub = std::make_shared<library_detail::Subscriber>();
    sub->id = static_cast<uint64_t>(s + 1);
    sub->filter.message_id = s == 0 ? 30u : static_cast<uint32_t>(1000 + s);
    index = index.with(sub);
  }
  const size_t mask = v.size() - 1;
  uint64_t matched = 0;
  size_t i = 0;
  for (auto _ : state) {
    const auto& f = v[i++ & mask];
    r.route(0, f, 1000, [&](routing::LinkId) {
      index.for_each_candidate(f.sysid(), f.msgid(), [&](library_detail::Subscriber&) { ++matched; });
    });
  }
  benchmark::DoNotOptimize(matched);
  state.counters["matches/frame"] = static_cast<double>(matched) / static_cast<double>(state.iterations());
}

// The cross-worker queue: a worker pushes the frames it routed to another worker's links and
// publishes once per batch (here 32, a loop iteration's worth); the other drains what is
// published. Items per second: frames carried from one thread to the other.
void BM_FrameHandover(benchmark::State& state) {
  const auto frames = mix_frames();
  const auto v = views(frames);
  FrameHandover ring;
  std::atomic<bool> run{true};
  std::atomic<uint64_t> drained{0};
  std::thread consumer([&] {
    uint64_t n = 0, bytes = 0;
    while (run.load(std::memory_order_relaxed)) {
      const uint64_t before = n;
      ring.drain([&](routing::LinkId, const protocol::FrameView& f) { ++n, bytes += f.size(); });
      if (n == before) std::this_thread::yield();  // a worker with nothing waits for the ring
    }
    ring.drain([&](routing::LinkId, const protocol::FrameView&) { ++n; });
    benchmark::DoNotOptimize(bytes);
    drained = n;
  });
  uint64_t pushed = 0;
  size_t i = 0;
  for (auto _ : state) {
    const auto& f = v[i++ & (v.size() - 1)];
    while (!ring.push(1, f, f.bytes())) ring.publish();  // full: let the consumer catch up
    if ((++pushed & 31) == 0) ring.publish();
  }
  ring.publish();
  run = false;
  consumer.join();
  if (drained != pushed) state.SkipWithError("frames lost in the ring");
  state.SetItemsProcessed(static_cast<int64_t>(pushed));
}

// Frames between threads: one producer, one consumer (a queued subscription).
void BM_FrameQueue(benchmark::State& state) {
  FrameQueue q(4096);
  const std::vector<uint8_t> frame(39, 0xAB);
  std::atomic<bool> run{true};
  std::thread consumer([&] {
    OwnedFrame f;
    while (run.load(std::memory_order_relaxed)) {
      while (q.pop(f)) {
      }
    }
  });
  for (auto _ : state) {
    while (!q.push(frame)) {
    }
  }
  run = false;
  consumer.join();
  state.SetItemsProcessed(state.iterations());
}

// Frames from two sender threads to the router thread (a library's send() path): each put
// takes the handover's lock; the consumer takes whole batches.
void BM_HandoverTwoProducers(benchmark::State& state) {
  Handover<protocol::FrameBatch> q;
  const std::vector<uint8_t> frame(39, 0xCD);
  const auto put = [&] {
    return q.put([&](protocol::FrameBatch& waiting) {
      if (waiting.size() >= 4096) return false;
      waiting.add(frame);
      return true;
    });
  };
  std::atomic<bool> run{true};
  std::thread other([&] {
    while (run.load(std::memory_order_relaxed)) put();
  });
  protocol::FrameBatch taken;
  for (auto _ : state) {
    while (!put()) q.take(taken);
  }
  run = false;
  other.join();
  state.SetItemsProcessed(state.iterations());
}

// Everything a TCP-to-TCP relay does in user space for one read (S2: a burst of 20 frames of
// one vehicle's mix, as at 20k msg/s): find and check the frames, count their sequence
// numbers, route them, and queue them for the GCS's write. No system calls. Argument 1: the
// caches are made cold between bursts (by walking 4 MiB, excluded from the time), as the
// millisecond between bursts and the kernel's work in it leave them in the router.
void BM_StreamPipeline(benchmark::State& state) {
  const bool cold = state.range(0) != 0;
  const auto frames = mix_frames();
  std::vector<uint8_t> burst;
  for (size_t k = 0; k < 20; ++k) burst.insert(burst.end(), frames[k].begin(), frames[k].end());
  protocol::FrameParser parser(dialect::builtin::message_table());
  routing::Routing r;
  r.add_link(routing::LinkPolicy{});  // the vehicle
  r.add_link(routing::LinkPolicy{});  // the GCS
  routing::SequenceTracker sequences;
  transport::StreamQueue queue(1u << 20);
  std::vector<uint8_t> evict(4u << 20, 1);
  uint64_t sink_sum = 0;
  auto deliver_frame = [&](const protocol::FrameView& f) {
    sequences.record(f.sysid(), f.compid(), f.seq());
    r.route(0, f, 1000, [&](routing::LinkId) { queue.push(f.bytes()); });
  };
  for (auto _ : state) {
    if (cold) {
      for (size_t k = 0; k < evict.size(); k += 64) evict[k] = static_cast<uint8_t>(evict[k] + 1);
      benchmark::ClobberMemory();
    }
    timespec a{}, b{};
    clock_gettime(CLOCK_MONOTONIC, &a);
    parser.feed(burst, deliver_frame);
    parser.flush(deliver_frame);
    clock_gettime(CLOCK_MONOTONIC, &b);
    sink_sum += queue.size();
    queue.clear();
    state.SetIterationTime(static_cast<double>(b.tv_sec - a.tv_sec) +
                           static_cast<double>(b.tv_nsec - a.tv_nsec) * 1e-9);
  }
  benchmark::DoNotOptimize(sink_sum);
  if (parser.stats().crc_failures != 0) state.SkipWithError("CRC failures in clean frames");
  state.SetItemsProcessed(state.iterations() * 20);
  state.counters["ns/frame"] = benchmark::Counter(static_cast<double>(state.iterations() * 20),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_RouteDecision)->Args({1, 1, 0})->Args({4, 5, 0})->Args({1, 1, 254});
BENCHMARK(BM_RouteDecisionShared)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_RouteDecisionTail)->Arg(0)->Iterations(2'000'000)->Arg(1)->Iterations(2'000'000);
BENCHMARK(BM_SubscriberMatch)->Arg(1)->Arg(100)->Arg(1000);
BENCHMARK(BM_RouteAndMatch)->Arg(1)->Arg(100);
BENCHMARK(BM_StreamPipeline)->Arg(0)->Arg(1)->UseManualTime();
BENCHMARK(BM_FrameHandover)->UseRealTime();
BENCHMARK(BM_FrameQueue);
BENCHMARK(BM_HandoverTwoProducers);
BENCHMARK_MAIN();
