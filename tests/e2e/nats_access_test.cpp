// Who may join the fleet fabric, against a real nats-server on loopback: TLS with the server's
// certificate checked, and the router's (mutual TLS); an NKey user; a .creds file's user under an
// operator; a user and password; a token. Whatever is refused is one error line, retried, and the
// router routes on.
#include <gtest/gtest.h>

#include "e2e/nats_identities.hpp"
#include "e2e/nats_site.hpp"
#include "mavswitch/msg/attitude.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

// TLS: routers that check the server's certificate against CaFile read and write through it
// (libnats' TLS, driven by the router's loop like a plain connection); a router that cannot
// check it is refused, one error line, and retries.
TEST_F(Fabric, OverTlsTheServersCertificateIsChecked) {
  if (found_program("openssl").empty()) GTEST_SKIP() << "openssl (Debian's openssl package) not installed";
  const auto server = make_certificate(scratch_.path(), "server");
  ASSERT_TRUE(server.has_value());
  NatsCluster cluster(1, {"--tls", "--tlscert", server->cert, "--tlskey", server->key});
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const std::string url = "tls://" + cluster.url(0).substr(std::string("nats://").size());
  Site a(scratch_, "a", "Url = " + url + "\nCaFile = " + server->cert + "\n");
  Site b(scratch_, "b", "Url = " + url + "\nCaFile = " + server->cert + "\n");
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err() << cluster.log(0);
  for (uint32_t i = 0; i < 100; ++i) a.send(attitude(1, 1, i, static_cast<uint8_t>(i)));
  EXPECT_TRUE(wait_until([&] { return b.heard(1, msg::Attitude::kId) == 100; })) << b.heard(1, msg::Attitude::kId);
  Site unchecked(scratch_, "unchecked", "Url = " + url + "\n");  // the system's CAs do not know it
  ASSERT_TRUE(wait_until([&] { return unchecked.router->err().find("cannot connect") != std::string::npos; }))
      << unchecked.router->err();
  EXPECT_EQ(unchecked.router->err().find("connected to"), std::string::npos) << unchecked.router->err();
  EXPECT_TRUE(unchecked.router->running());
  EXPECT_NE(unchecked.router->err().find("certificate"), std::string::npos) << "says why" << unchecked.router->err();
}

// Mutual TLS: the server asks for a client certificate and checks it against its CA; a router
// with CertificateFile and KeyFile gets in, one without is refused.
TEST_F(Fabric, WithMutualTlsTheRouterShowsItsCertificate) {
  if (found_program("openssl").empty()) GTEST_SKIP() << "openssl (Debian's openssl package) not installed";
  const auto server = make_certificate(scratch_.path(), "server"), client = make_certificate(scratch_.path(), "client");
  ASSERT_TRUE(server.has_value() && client.has_value());
  NatsCluster cluster(1,
                      {"--tlsverify", "--tlscert", server->cert, "--tlskey", server->key, "--tlscacert", client->cert});
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const std::string url = "tls://" + cluster.url(0).substr(std::string("nats://").size());
  const std::string keys = "Url = " + url + "\nCaFile = " + server->cert + "\nCertificateFile = " + client->cert +
                           "\nKeyFile = " + client->key + "\n";
  Site a(scratch_, "a", keys);
  Site b(scratch_, "b", keys);
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err() << cluster.log(0);
  Site anonymous(scratch_, "anonymous", "Url = " + url + "\nCaFile = " + server->cert + "\n");
  ASSERT_TRUE(wait_until([&] { return anonymous.router->err().find("cannot connect") != std::string::npos; }))
      << anonymous.router->err() << cluster.log(0);
  EXPECT_EQ(anonymous.router->err().find("connected to"), std::string::npos) << anonymous.router->err();
  EXPECT_NE(anonymous.router->err().find("the server hung up while the router signed in"), std::string::npos)
      << anonymous.router->err();
  EXPECT_TRUE(anonymous.router->running());
}

// NKey: the server knows the user by its public key; the router proves it holds the seed.
TEST_F(Fabric, AnNKeyUserSignsIn) {
  if (found_program("openssl").empty()) GTEST_SKIP() << "openssl (Debian's openssl package) not installed";
  const auto key = make_nkey(scratch_.path(), "user", 'U');
  ASSERT_TRUE(key.has_value());
  const std::string& user = key->public_key;
  const std::string& seed = key->seed;
  ASSERT_TRUE(user.starts_with("U") && seed.starts_with("SU")) << user << " " << seed;
  const std::string conf =
      scratch_.write("nkey-server.conf", "authorization { users = [ { nkey: \"" + user + "\" } ] }\n").string();
  NatsCluster cluster(1, {"-c", conf});
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const std::string seed_file = scratch_.write("user.nk", seed + "\n").string();
  Site a(scratch_, "a", "Url = " + cluster.url(0) + "\nNKey = " + user + "\nNKeySeedFile = " + seed_file + "\n");
  Site b(scratch_, "b", "Url = " + cluster.url(0) + "\nNKey = " + user + "\nNKeySeedFile = " + seed_file + "\n");
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err() << cluster.log(0);
  // Another key's seed for the same user: refused.
  const auto other = make_nkey(scratch_.path(), "other", 'U');
  ASSERT_TRUE(other.has_value());
  const std::string wrong_file = scratch_.write("other.nk", other->seed + "\n").string();
  Site wrong(scratch_, "wrong",
             "Url = " + cluster.url(0) + "\nNKey = " + user + "\nNKeySeedFile = " + wrong_file + "\n");
  EXPECT_TRUE(wait_until([&] { return wrong.router->err().find("cannot connect") != std::string::npos; }))
      << wrong.router->err();
  EXPECT_NE(wrong.router->err().find("Authorization"), std::string::npos) << wrong.router->err();
}

// Decentralised sign-in: the server trusts an operator; the .creds file holds a user's JWT,
// signed by an account the operator signed, and the user's seed. A user of an account the
// operator never signed is refused.
TEST_F(Fabric, ACredentialsFileUserSignsIn) {
  if (found_program("openssl").empty()) GTEST_SKIP() << "openssl (Debian's openssl package) not installed";
  const auto ids = make_decentralised(scratch_.path());
  ASSERT_TRUE(ids.has_value()) << "openssl could not make or sign the keys";
  NatsCluster cluster(1, {"-c", ids->server_conf});
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site a(scratch_, "a", "Url = " + cluster.url(0) + "\nCredentialsFile = " + ids->creds + "\n");
  Site b(scratch_, "b", "Url = " + cluster.url(0) + "\nCredentialsFile = " + ids->creds + "\n");
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err() << cluster.log(0);
  Site stranger(scratch_, "stranger", "Url = " + cluster.url(0) + "\nCredentialsFile = " + ids->stranger_creds + "\n");
  EXPECT_TRUE(wait_until([&] { return stranger.router->err().find("cannot connect") != std::string::npos; }))
      << stranger.router->err();
  EXPECT_NE(stranger.router->err().find("Authorization"), std::string::npos) << stranger.router->err();
  EXPECT_EQ(stranger.router->err().find("connected to"), std::string::npos) << stranger.router->err();
  EXPECT_TRUE(stranger.router->running());
}

TEST_F(Fabric, BadCredentialsAreOneErrorLineAndRetried) {
  NatsCluster cluster(1, {"--user", "mav", "--pass", "right-password"});
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site wrong(scratch_, "wrong", "Url = " + cluster.url(0) + "\nUser = mav\nPassword = wrong\n");
  ASSERT_TRUE(wait_until([&] { return wrong.router->err().find("nats fabric:") != std::string::npos; }))
      << wrong.router->err();
  EXPECT_NE(wrong.router->err().find("Authorization"), std::string::npos) << wrong.router->err();
  // Retried in the background without a line each time (the server saw three tries), and the
  // rest of the router routes on: a second local peer hears the first one.
  ASSERT_TRUE(wait_until(
      [&] {
        const std::string& log = cluster.log(0);
        size_t tries = 0;
        for (size_t at = 0; (at = log.find("authentication error", at)) != std::string::npos; ++at) ++tries;
        return tries >= 3;
      },
      10000ms))
      << cluster.log(0);
  UdpPeer other;
  ASSERT_TRUE(wait_until([&] {
    other.send_to(wrong.port, heartbeat(7, 1));
    wrong.send(heartbeat(8, 1));
    return wrong.heard(7, msg::Heartbeat::kId) > 0;
  })) << wrong.router->err();
  const std::string& err = wrong.router->err();
  size_t lines = 0;
  for (size_t at = 0; (at = err.find("nats fabric:", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 1u) << "one line, not one per try: " << err;
  EXPECT_TRUE(wrong.router->running());
  Site right(scratch_, "right", "Url = " + cluster.url(0) + "\nUser = mav\nPassword = right-password\n");
  EXPECT_TRUE(wait_until([&] { return right.router->err().find("connected to") != std::string::npos; }))
      << right.router->err();
  // A credentials file that cannot be read: said at once, naming the key and the file (libnats
  // would say it only once a server answers), and the router routes without the fabric.
  const std::string missing = (scratch_.path() / "missing.creds").string();
  Site no_file(scratch_, "no-file", "Url = " + cluster.url(0) + "\nCredentialsFile = " + missing + "\n");
  EXPECT_TRUE(wait_until([&] { return no_file.router->err().find("routing on without it") != std::string::npos; }))
      << no_file.router->err();
  EXPECT_NE(no_file.router->err().find("CredentialsFile: " + missing), std::string::npos) << no_file.router->err();
  EXPECT_TRUE(no_file.router->running());
  // A token, right and wrong.
  NatsCluster by_token(1, {"--auth", "s3cret-token"});
  ASSERT_TRUE(by_token.ready()) << by_token.log(0);
  Site token(scratch_, "token", "Url = " + by_token.url(0) + "\nToken = s3cret-token\n");
  Site bad_token(scratch_, "bad-token", "Url = " + by_token.url(0) + "\nToken = guess\n");
  EXPECT_TRUE(wait_until([&] { return token.router->err().find("connected to") != std::string::npos; }))
      << token.router->err();
  EXPECT_TRUE(wait_until([&] { return bad_token.router->err().find("Authorization") != std::string::npos; }))
      << bad_token.router->err();
}
