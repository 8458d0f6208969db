// Signing per link and who may connect, end to end on loopback.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dialect/builtin.hpp"
#include "dialect/typed_message.hpp"
#include "e2e/peers.hpp"
#include "e2e/router_fixture.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/radio_status.hpp"
#include "mavswitch/msg/setup_signing.hpp"
#include "protocol/signing.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

namespace {

protocol::SigningKey key_of(uint8_t fill) {
  protocol::SigningKey k;
  k.fill(fill);
  return k;
}

Bytes signed_copy(const Bytes& frame, const protocol::SigningKey& key, uint8_t link_id, uint64_t timestamp) {
  const auto view = protocol::probe_frame(dialect::builtin::message_table(), frame.data(), frame.size()).frame;
  Bytes out(protocol::kMaxFrameLen);
  out.resize(protocol::sign_frame(view, key, link_id, timestamp, out));
  return out;
}

protocol::FrameView view(const Bytes& b) { return view_of(b); }

}  // namespace

TEST(Signing, AVerifyingLinkAcceptsOnlyValidFreshSignatures) {
  const auto key = key_of(0x11);
  auto policy = std::make_shared<routing::SigningPolicy>();
  policy->key = key;
  policy->sign = false;
  policy->unsigned_allowed.add(msg::RadioStatus::kId);
  routing::LinkPolicy secure;
  secure.signing = std::make_shared<routing::SignatureGate>(policy);
  auto gate = secure.signing;

  RouterThread rt;
  const uint16_t secure_port = free_udp_port(), plain_port = free_udp_port();
  rt.router.add_endpoint(udp_server(secure_port), secure);
  rt.router.add_endpoint(udp_server(plain_port));
  rt.start();
  UdpPeer vehicle, gcs;
  gcs.send_to(plain_port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(1) == 1; }));

  const uint64_t now = protocol::signing_timestamp_now();
  const Bytes good = signed_copy(heartbeat(1, 1, 1), key, 2, now);
  vehicle.send_to(secure_port, heartbeat(1, 1, 0));                          // unsigned
  vehicle.send(good);                                                        // valid
  vehicle.send(good);                                                        // replayed
  vehicle.send(signed_copy(heartbeat(1, 1, 2), key_of(0x22), 2, now + 10));  // wrong key
  Bytes tampered = signed_copy(heartbeat(1, 1, 3), key, 2, now + 20);
  tampered.back() ^= 0x01;  // signature byte (CRC intact)
  vehicle.send(tampered);
  vehicle.send(frame_of(msg::Heartbeat{}, 1, 1, 0, true));  // MAVLink 1
  vehicle.send(
      signed_copy(heartbeat(1, 1, 4), key, 2,
                  now - 2 * routing::SignatureGate::kNewStreamWindow));  // stale, other stream? same stream: replay
  vehicle.send(signed_copy(heartbeat(1, 1, 5), key, 3,
                           now - 2 * routing::SignatureGate::kNewStreamWindow));  // new stream, too old
  vehicle.send(frame_of(msg::RadioStatus{}, 1, 68));                              // unsigned, allowed
  vehicle.send(signed_copy(heartbeat(1, 1, 6), key, 2, now + 30));                // valid, newer

  ASSERT_TRUE(wait_until([&] { return rt.on_loop([&] { return rt.router.routing().stats().frames; }) == 1 + 10; }))
      << rt.on_loop([&] { return rt.router.routing().stats().frames; }) << " routed";
  ASSERT_TRUE(gcs.wait_frames(3));
  const auto& got = gcs.received().frames;
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], good) << "forwarded byte for byte, signature intact";
  EXPECT_EQ(view(got[1]).msgid(), msg::RadioStatus::kId);
  EXPECT_TRUE(protocol::signature_valid(key, view(got[2])));
  const auto c = rt.on_loop([&] { return gate->counters(); });
  EXPECT_EQ(c.accepted, 2u);
  EXPECT_EQ(c.accepted_unsigned, 1u);
  EXPECT_EQ(c.rejected_unsigned, 1u);
  EXPECT_EQ(c.rejected_bad_signature, 2u);
  EXPECT_EQ(c.rejected_replay, 3u);
  EXPECT_EQ(c.rejected_mavlink1, 1u);
}

TEST(Signing, ASigningLinkSignsWhatLeavesOnIt) {
  const auto key = key_of(0x33);
  auto policy = std::make_shared<routing::SigningPolicy>();
  policy->key = key;
  policy->verify = false;
  policy->link_id = 7;
  routing::LinkPolicy signing;
  signing.signing = std::make_shared<routing::SignatureGate>(policy);

  RouterThread rt;
  UdpPeer gcs;
  const uint16_t port = free_udp_port();
  rt.router.add_endpoint(udp_server(port));
  rt.router.add_endpoint(udp_client(gcs.port()), signing);
  rt.start();
  ASSERT_TRUE(wait_until([&] { return rt.link_count(1) == 1; }));
  UdpPeer vehicle;
  const Bytes already_signed = signed_copy(heartbeat(1, 1, 9), key_of(0x99), 1, 5);
  vehicle.send_to(port, heartbeat(1, 1, 0));
  vehicle.send(already_signed);  // someone else's signature: replaced with ours
  vehicle.send(frame_of(msg::Heartbeat{}, 1, 1, 0, true));
  ASSERT_TRUE(gcs.wait_frames(3));
  const auto& got = gcs.received().frames;
  uint64_t last = 0;
  for (size_t i = 0; i < 2; ++i) {
    const auto f = view(got[i]);
    ASSERT_TRUE(f.is_signed());
    EXPECT_TRUE(protocol::signature_valid(key, f));
    EXPECT_EQ(protocol::signature_link_id(f), 7);
    EXPECT_GT(protocol::signature_timestamp(f), last) << "our clock only goes forward";
    last = protocol::signature_timestamp(f);
  }
  EXPECT_FALSE(view(got[2]).is_v2()) << "MAVLink 1 cannot be signed: sent as it is";
}

TEST(Signing, SetupSigningIsNeverForwarded) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  UdpPeer gcs, vehicle;
  gcs.send_to(port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  vehicle.send_to(port, heartbeat(1, 1));
  ASSERT_TRUE(gcs.wait_frames(1));
  msg::SetupSigning setup;
  setup.target_system = 1;
  setup.target_component = 1;
  setup.secret_key.fill(0x5A);
  gcs.send(frame_of(setup, 255, 190));
  gcs.send(command_long(255, 190, 1, 1));
  // The command sent after it arrives; the SETUP_SIGNING before it never does.
  ASSERT_TRUE(wait_until([&] { return vehicle.received().count_msgid(msg::CommandLong::kId) == 1; }));
  EXPECT_EQ(vehicle.received().count_msgid(msg::SetupSigning::kId), 0u);
  EXPECT_EQ(rt.on_loop([&] { return rt.router.routing().stats().setup_signing_dropped; }), 1u);
}

TEST(Admission, ListenersRefusePeersOutsideAllowFrom) {
  std::string error;
  RouterThread rt;
  const uint16_t closed_udp = free_udp_port(), open_udp = free_udp_port(), closed_tcp = free_tcp_port();
  auto closed = udp_server(closed_udp);
  closed.allow_from = {*transport::AddressRange::parse("10.0.0.0/8", &error)};
  auto open = udp_server(open_udp);
  open.allow_from = {*transport::AddressRange::parse("127.0.0.0/8", &error),
                     *transport::AddressRange::parse("::1", &error)};
  auto tcp = tcp_server(closed_tcp);
  tcp.allow_from = {*transport::AddressRange::parse("192.168.0.0/16", &error)};
  rt.router.add_endpoint(closed);
  rt.router.add_endpoint(open);
  rt.router.add_endpoint(tcp);
  rt.start();
  UdpPeer outsider, insider;
  for (int i = 0; i < 5; ++i) outsider.send_to(closed_udp, heartbeat(9, 1));
  insider.send_to(open_udp, heartbeat(8, 1));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(1) == 1; }));
  TcpPeer refused(closed_tcp);
  ASSERT_TRUE(wait_until([&] { return refused.closed_by_peer(); })) << "the TCP server hangs up on it";
  EXPECT_TRUE(wait_until([&] { return rt.router.endpoint_refused(0) == 5u; }));
  EXPECT_EQ(rt.link_count(0), 0u);
  EXPECT_EQ(rt.link_count(2), 0u);
  EXPECT_EQ(rt.router.endpoint_refused(2), 1u);
}

// Once a UDP server listens, no other socket may bind its address, even one asking for
// SO_REUSEADDR: were the server's sockets to ask for it too, Linux would let a socket of any
// user share the port and take its datagrams (the most recently bound wins them). With one
// worker and with several.
TEST(Admission, NoOtherSocketCanShareAUdpServersPort) {
  for (const unsigned workers : {1u, 3u}) {
    RouterOptions options;
    options.workers = workers;
    RouterThread rt(options);
    const uint16_t port = free_udp_port();
    rt.router.add_endpoint(udp_server(port));
    rt.start();
    const int intruder = ::socket(AF_INET, SOCK_DGRAM, 0);
    const int one = 1;
    ::setsockopt(intruder, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a = loopback(port);
    EXPECT_NE(::bind(intruder, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << workers << " workers";
    ::close(intruder);
  }
}
