// Signature checks on arbitrary frames; signing then verifying on whatever parses.
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "dialect/builtin.hpp"
#include "protocol/parser.hpp"
#include "protocol/signing.hpp"
#include "routing/signing_policy.hpp"

using namespace mavswitch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto policy = [] {
    auto p = std::make_shared<routing::SigningPolicy>();
    p->key.fill(0x5C);
    p->unsigned_allowed.add(109);
    return p;
  }();
  static routing::SignatureGate gate(policy);
  protocol::FrameParser parser(dialect::builtin::message_table());
  auto sink = [&](const protocol::FrameView& f) {
    gate.check(f, protocol::signing_timestamp_now());
    uint8_t out[protocol::kMaxFrameLen];
    const size_t n = protocol::sign_frame(f, policy->key, 1, 12345, out);
    if (n == 0) return;
    const auto signed_view = protocol::probe_frame(dialect::builtin::message_table(), out, n);
    if (signed_view.status != protocol::Probe::Status::kFrame) std::abort();  // re-signing kept the checksum right
    if (!protocol::signature_valid(policy->key, signed_view.frame)) std::abort();
    protocol::SigningKey other = policy->key;
    other[0] ^= 1;
    if (protocol::signature_valid(other, signed_view.frame)) std::abort();
  };
  parser.feed({data, size}, sink);
  parser.finish(sink);
  return 0;
}
