// The command line as mavlink-routerd parses it: each -e / -p takes one value (repeat the flag
// for more), positional endpoints may stand anywhere, a mistake is one line and exit status 2,
// and mavlink-routerd's environment variables name the configuration too.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "daemon/cli.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
using namespace mavswitch::daemon;
using Kind = transport::EndpointSpec::Kind;

namespace {

struct Parsed {
  std::optional<CommandLine> line;
  int exit_code = 0;
  std::string err;
};

Parsed parse(std::initializer_list<const char*> args) {
  std::vector<std::string> words{"mavswitchd"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  Parsed p;
  testing::internal::CaptureStderr();
  p.line = parse_command_line(static_cast<int>(argv.size()), argv.data(), &p.exit_code);
  p.err = testing::internal::GetCapturedStderr();
  return p;
}

// "kind address:port" (or "serial device") for each endpoint, in order.
std::vector<std::string> endpoints(const Parsed& p) {
  std::vector<std::string> out;
  for (const auto& e : p.line->config.endpoints) {
    const auto& s = e.spec;
    out.push_back(std::string(transport::kind_name(s)) + " " +
                  (s.kind == Kind::kSerial ? s.device : s.address + ":" + std::to_string(s.port)));
  }
  return out;
}

}  // namespace

TEST(CommandLine, AClientFlagTakesOneValueAndPositionalsMayFollowIt) {
  const Parsed serial = parse({"-e", "127.0.0.1:24550", "/dev/ttyS1:921600"});
  ASSERT_TRUE(serial.line) << serial.err;
  EXPECT_EQ(endpoints(serial), (std::vector<std::string>{"serial /dev/ttyS1", "udp-client 127.0.0.1:24550"}));
  EXPECT_EQ(serial.line->config.endpoints[0].spec.bauds, (std::vector<uint32_t>{921600}));

  const Parsed server = parse({"-e", "127.0.0.1:24550", "127.0.0.1:24551"});
  ASSERT_TRUE(server.line) << server.err;
  EXPECT_EQ(endpoints(server), (std::vector<std::string>{"udp-server 127.0.0.1:24551", "udp-client 127.0.0.1:24550"}))
      << "a client and a server, as mavlink-routerd makes them";
}

TEST(CommandLine, RepeatedFlagsMakeOneEndpointEach) {
  const Parsed p =
      parse({"-e", "127.0.0.1:14551", "-e", "127.0.0.1:14550", "/dev/ttyS1:1500000", "-p", "10.0.0.5:5760"});
  ASSERT_TRUE(p.line) << p.err;
  EXPECT_EQ(endpoints(p), (std::vector<std::string>{"serial /dev/ttyS1", "udp-client 127.0.0.1:14551",
                                                    "udp-client 127.0.0.1:14550", "tcp-client 10.0.0.5:5760"}));
}

// The log, the page and /metrics show these names: each says what the endpoint is.
TEST(CommandLine, EndpointsAreNamedForWhatTheyAre) {
  const Parsed p =
      parse({"-e", "127.0.0.1:14550", "0.0.0.0:14551", "127.0.0.1:14552", "/dev/ttyACM0:57600", "-p", "10.0.0.5:5760"});
  ASSERT_TRUE(p.line) << p.err;
  std::vector<std::string> names;
  for (const auto& e : p.line->config.endpoints) names.push_back(e.spec.name);
  EXPECT_EQ(names, (std::vector<std::string>{"udp-server:14551", "udp-server:127.0.0.1:14552", "serial:ttyACM0",
                                             "udp-client:127.0.0.1:14550", "tcp-client:10.0.0.5:5760"}));
}

TEST(CommandLine, AMistakeIsOneLineAndExitStatusTwo) {
  for (const auto& args : {std::vector<const char*>{"--workers", "many"}, std::vector<const char*>{"--no-such-flag"},
                           std::vector<const char*>{"-e"}, std::vector<const char*>{"-e", "127.0.0.1:99999"}}) {
    std::string words;
    for (const char* a : args) words += std::string(a) + " ";
    SCOPED_TRACE(words);
    Parsed p;
    switch (args.size()) {
      case 1: p = parse({args[0]}); break;
      default: p = parse({args[0], args[1]}); break;
    }
    EXPECT_FALSE(p.line);
    EXPECT_EQ(p.exit_code, 2);
    EXPECT_EQ(p.err.rfind("mavswitchd: ", 0), 0u) << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
  }
}

// -c "" (an unset variable in a unit file, say) is a mistake, not "no file": the defaults would
// listen on 0.0.0.0:5760 unasked.
TEST(CommandLine, AnEmptyConfigurationPathIsAMistake) {
  for (const char* flag : {"-c", "-d"}) {
    const Parsed p = parse({flag, ""});
    EXPECT_FALSE(p.line) << flag;
    EXPECT_EQ(p.exit_code, 2) << flag;
    EXPECT_EQ(p.err, std::string("mavswitchd: ") + flag + ": an empty path (see --help)\n");
  }
}

TEST(CommandLine, MavlinkRouterdsEnvironmentNamesTheConfiguration) {
  test::ScratchDir dir("mavswitch-cli");
  const auto conf = dir.write("main.conf", "[General]\nTcpServerPort = 6000\n");
  ASSERT_EQ(setenv("MAVLINK_ROUTERD_CONF_FILE", conf.c_str(), 1), 0);
  const Parsed p = parse({});
  unsetenv("MAVLINK_ROUTERD_CONF_FILE");
  ASSERT_TRUE(p.line) << p.err;
  EXPECT_EQ(p.line->config.general.tcp_server.spec.port, 6000);
  // A conf directory that is not there: a warning, and the file is read (mavlink-router goes on).
  ASSERT_EQ(setenv("MAVLINK_ROUTERD_CONF_FILE", conf.c_str(), 1), 0);
  ASSERT_EQ(setenv("MAVLINK_ROUTERD_CONF_DIR", (dir.path() / "config.d").c_str(), 1), 0);
  const Parsed without_dir = parse({});
  unsetenv("MAVLINK_ROUTERD_CONF_FILE");
  unsetenv("MAVLINK_ROUTERD_CONF_DIR");
  ASSERT_TRUE(without_dir.line) << without_dir.err;
  EXPECT_EQ(without_dir.line->config.general.tcp_server.spec.port, 6000);
  ASSERT_EQ(without_dir.line->config.warnings.size(), 1u);
}
