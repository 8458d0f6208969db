// The routing decision under a sequence of events chosen by the input: links with filters,
// groups and the unknown-id policy come and go, components are pinned, routes expire, and
// frames from any source, to any target, of any of a few message kinds are routed. Every
// decision is checked against the rules that must hold whatever happened before it.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "dialect/builtin.hpp"
#include "protocol/encoder.hpp"
#include "protocol/parser.hpp"
#include "routing/routing.hpp"

using namespace mavswitch;
using routing::LinkId;
using routing::Verdict;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// Reads the input a byte at a time; zeros once it runs out.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() noexcept { return pos_ < size_ ? data_[pos_++] : 0; }
  bool done() const noexcept { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Few values, so that sources, targets and filters meet often.
uint8_t small_id(Input& in) { return static_cast<uint8_t>(in.byte() % 5); }

// Message kinds that exercise each rule: broadcast, targeted, the reboot rule, the key that
// must never be forwarded, an id no dialect knows.
constexpr std::array<uint32_t, 6> kMsgIds = {0 /*HEARTBEAT*/,       76 /*COMMAND_LONG*/,       2 /*SYSTEM_TIME*/,
                                             256 /*SETUP_SIGNING*/, 21 /*PARAM_REQUEST_LIST*/, 40000};

std::shared_ptr<const routing::LinkPolicy> make_policy(Input& in, routing::Routing& r) {
  auto p = std::make_shared<routing::LinkPolicy>();
  const uint8_t shape = in.byte();
  if (shape & 1) p->in.block_msg.add(kMsgIds[in.byte() % kMsgIds.size()]);
  if (shape & 2) p->out.allow_sys.add(small_id(in));
  if (shape & 4) p->out.block_comp.add(small_id(in));
  if (shape & 8) p->in.allow_comp.add(small_id(in));
  if (shape & 16) p->group = r.group_index(shape & 32 ? "a" : "b");
  p->drop_unknown_ids = (shape & 64) != 0;
  return p;
}

struct Link {
  LinkId id;
  std::shared_ptr<const routing::LinkPolicy> policy;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  const protocol::MessageTable& table = dialect::builtin::message_table();
  routing::Routing r;
  const uint8_t setup = in.byte();
  if (setup & 1) r.set_dedup_period(1 + setup % 50);
  if (setup & 2) r.set_sniffer_sysid(small_id(in));
  r.set_route_timeout(setup & 4 ? 0 : 1 + in.byte());
  std::vector<Link> links;
  routing::Millis now = 1;

  for (int steps = 0; steps < 4096 && !in.done(); ++steps) {
    const uint8_t op = in.byte();
    now += op >> 5;
    switch (op % 8) {
      case 0:
        if (links.size() < 16) {
          auto policy = make_policy(in, r);
          links.push_back({r.add_link(policy), policy});
        }
        break;
      case 1:
        if (!links.empty()) {
          const size_t k = in.byte() % links.size();
          r.remove_link(links[k].id);
          check(!r.active(links[k].id));
          links.erase(links.begin() + static_cast<std::ptrdiff_t>(k));
        }
        break;
      case 2: r.expire(now); break;
      case 3:
        if (!links.empty()) r.pin(links[in.byte() % links.size()].id, small_id(in), small_id(in), now);
        break;
      default: {
        if (links.empty()) break;
        const Link& from = links[in.byte() % links.size()];
        protocol::FrameHeader h;
        h.sysid = small_id(in);
        h.compid = small_id(in);
        h.seq = in.byte();
        h.msgid = kMsgIds[in.byte() % kMsgIds.size()];
        std::array<uint8_t, 255> payload{};
        const size_t len = 1 + in.byte() % 40;
        for (size_t i = 0; i < len; ++i) payload[i] = in.byte();
        const protocol::MessageInfo* info = table.find(h.msgid);
        if (info && info->target_system_offset >= 0) {  // targets among the few ids in use
          payload[static_cast<size_t>(info->target_system_offset)] = small_id(in);
          if (info->target_component_offset >= 0)
            payload[static_cast<size_t>(info->target_component_offset)] = small_id(in);
        }
        uint8_t bytes[protocol::kMaxFrameLen];
        const size_t n = protocol::encode_v2(h, {payload.data(), info ? std::max<size_t>(len, info->max_len) : len},
                                             info ? info->crc_extra : 0, bytes);
        const protocol::Probe probe = protocol::probe_frame(table, bytes, n);
        // An unknown id cannot be checked: the parser hands it on unverified, as the router does.
        const protocol::FrameView f =
            probe.status == protocol::Probe::Status::kFrame
                ? probe.frame
                : protocol::FrameView(bytes, static_cast<uint16_t>(n), h.msgid, protocol::FrameView::kV2, nullptr);
        std::vector<LinkId> to;
        const Verdict v = r.route(from.id, f, now, [&](LinkId l) {
          check(l != from.id);                      // never back where it came from
          for (LinkId seen : to) check(seen != l);  // at most once per link
          check(r.active(l));                       // only to a link that exists
          const routing::LinkPolicy& p = r.policy(l);
          check(p.out.pass(f.msgid(), f.sysid(), f.compid()));  // its out-filter agrees
          check(f.verified() || !p.drop_unknown_ids);           // its unknown-id policy too
          to.push_back(l);
        });
        check((v == Verdict::kDelivered) == !to.empty());
        if (f.msgid() == 256) check(to.empty());  // SETUP_SIGNING stays here
        if (!from.policy->in.pass(f.msgid(), f.sysid(), f.compid())) check(to.empty());
        if (!f.verified() && from.policy->drop_unknown_ids) check(to.empty());
        break;
      }
    }
  }
  return 0;
}
