// mavlink-router's configuration format, read as is; errors name file, line and key.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/config.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
using namespace mavswitch::config;
namespace fs = std::filesystem;
using Kind = transport::EndpointSpec::Kind;

namespace {

class ConfigTest : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& text) { return scratch_.write(name, text); }
  std::string error_of(const std::string& text) {
    const auto p = write("bad.conf", text);
    try {
      Config c;
      load_config_file(p, c);
      finish_config(c);
    } catch (const config::ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  }
  mavswitch::test::ScratchDir scratch_{"mavswitch-config"};
  const fs::path& dir_ = scratch_.path();
};

// The shape of mavlink-router's examples/config.sample (its keys and values, our words).
constexpr const char* kMavlinkRouterSample = R"(# comment
[General]
TcpServerPort=5760
ReportStats=false
MavlinkDialect=auto

[UdpEndpoint alfa]
Mode = Eavesdropping
Address = 0.0.0.0
Port = 10000

[UartEndpoint bravo]
Device = /dev/tty0
Baud = 52000

[UdpEndpoint charlie]
Mode = Normal
Address = 127.0.0.1
Port = 11000

[TcpEndpoint delta]
Address = 127.0.0.1
Port = 25790
RetryTimeout=10
)";

}  // namespace

TEST_F(ConfigTest, MavlinkRouterSampleReadsAsIs) {
  Config c;
  load_config_file(write("main.conf", kMavlinkRouterSample), c);
  finish_config(c);
  ASSERT_EQ(c.endpoints.size(), 4u);
  EXPECT_EQ(c.general.tcp_server.spec.port, 5760);
  EXPECT_EQ(c.endpoints[0].spec.kind, Kind::kUdpServer);
  EXPECT_EQ(c.endpoints[0].spec.address, "0.0.0.0");
  EXPECT_EQ(c.endpoints[0].spec.port, 10000);
  EXPECT_EQ(c.endpoints[1].spec.kind, Kind::kSerial);
  EXPECT_EQ(c.endpoints[1].spec.device, "/dev/tty0");
  EXPECT_EQ(c.endpoints[1].spec.bauds, std::vector<uint32_t>{52000});
  EXPECT_EQ(c.endpoints[2].spec.kind, Kind::kUdpClient);
  EXPECT_EQ(c.endpoints[2].spec.port, 11000);
  EXPECT_EQ(c.endpoints[3].spec.kind, Kind::kTcpClient);
  EXPECT_EQ(c.endpoints[3].spec.retry_timeout, 10000);
  EXPECT_TRUE(c.warnings.empty()) << "MavlinkDialect = auto, the sample's, asks for nothing";
}

TEST_F(ConfigTest, KeysAndSectionsAreCaseInsensitiveAndListsParse) {
  Config c;
  load_config_file(write("m.conf", R"([general]
deduplicationperiod = 100
SNIFFERSYSID=253
workers = 3
[uartendpoint fc]
device=/dev/ttyACM0
BAUD = 57600, 115200 ,921600
flowcontrol = TRUE
AllowMsgIdOut = 0, 30,33
BlockSrcSysIn = 7
group = radios
[udpendpoint gcs]
mode = SERVER
address = [::1]
port = 14550
IdleTimeout = 5
MaxPeers = 8
UnknownMessages = drop
Coalesce = false
)"),
                   c);
  finish_config(c);
  EXPECT_EQ(c.general.dedup_period_ms, 100);
  EXPECT_EQ(c.general.sniffer_sysid, 253);
  EXPECT_EQ(c.general.workers, 3u);
  const auto& fc = c.endpoints[0];
  EXPECT_EQ(fc.spec.bauds, (std::vector<uint32_t>{57600, 115200, 921600}));
  EXPECT_TRUE(fc.spec.flow_control);
  EXPECT_TRUE(fc.policy.out.allow_msg.contains(30));
  EXPECT_FALSE(fc.policy.out.allow_msg.contains(31));
  EXPECT_TRUE(fc.policy.in.block_sys.contains(7));
  EXPECT_EQ(fc.group, "radios");
  const auto& gcs = c.endpoints[1];
  EXPECT_EQ(gcs.spec.address, "::1");
  EXPECT_EQ(gcs.spec.idle_timeout, 5000);
  EXPECT_EQ(gcs.spec.max_peers, 8u);
  EXPECT_TRUE(gcs.policy.drop_unknown_ids);
  EXPECT_FALSE(gcs.spec.coalesce);
  EXPECT_TRUE(fc.spec.coalesce) << "the default";
}

TEST_F(ConfigTest, DebugLogLevelTakesTraceAsMavlinkRoutersSampleDoes) {
  Config c;
  load_config_file(write("t.conf", "[General]\nDebugLogLevel = trace\n"), c);
  EXPECT_EQ(c.general.log_level, log::Level::kTrace);
}

TEST_F(ConfigTest, VehicleDataIsOnUnlessHttpSaysOtherwise) {
  Config c;
  EXPECT_TRUE(c.http.vehicle_data);
  load_config_file(write("v.conf", "[Http]\nVehicleData = false\n"), c);
  EXPECT_FALSE(c.http.vehicle_data);
  EXPECT_NE(error_of("[Http]\nVehicleData = maybe\n").find("bad.conf:2"), std::string::npos);
}

TEST_F(ConfigTest, MapTilesIsATileServersUrlWithItsPlaces) {
  Config c;
  EXPECT_TRUE(c.http.map_tiles.empty());
  load_config_file(write("m.conf", "[Http]\nMapTiles = https://tile.openstreetmap.org/{z}/{x}/{y}.png\n"), c);
  EXPECT_EQ(c.http.map_tiles, "https://tile.openstreetmap.org/{z}/{x}/{y}.png");
  for (const char* bad : {"tiles/{z}/{x}/{y}.png", "https://t.example/{z}/{x}.png",
                          "https://t.example/{z}/{x}/{y}.png'; script-src *", "javascript:{z}{x}{y}"})
    EXPECT_NE(error_of(std::string("[Http]\nMapTiles = ") + bad + "\n").find("bad.conf:2"), std::string::npos) << bad;
}

TEST_F(ConfigTest, OneWorkerUnlessWorkersSaysOtherwise) {
  Config c;
  EXPECT_EQ(c.general.workers, 1u);
  load_config_file(write("w.conf", "[General]\nWorkers = 0\n"), c);
  EXPECT_EQ(c.general.workers, 0u) << "0: one per core";
}

TEST_F(ConfigTest, UdpClientPortsDefaultFrom14550Up) {
  Config c;
  load_config_file(
      write("m.conf",
            "[UdpEndpoint a]\nMode=Normal\nAddress=127.0.0.1\n[UdpEndpoint b]\nMode=Normal\nAddress=127.0.0.1\n"),
      c);
  finish_config(c);
  EXPECT_EQ(c.endpoints[0].spec.port, 14550);
  EXPECT_EQ(c.endpoints[1].spec.port, 14551);
}

// The first configuration README.md shows users (its indented block under "A first
// configuration") reads as it is written: a serial flight controller, a UDP client, a UDP server.
TEST_F(ConfigTest, TheReadmeExampleReadsAsItSays) {
  std::ifstream readme(fs::path(MAVSWITCH_SOURCE_DIR) / "README.md");
  ASSERT_TRUE(readme);
  std::string line, example;
  bool in_section = false;
  while (std::getline(readme, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## A first configuration";
    if (in_section && line.rfind("    ", 0) == 0) example += line.substr(4) + "\n";
    if (in_section && line.empty() && !example.empty()) example += "\n";
  }
  ASSERT_NE(example.find("[General]"), std::string::npos) << "README.md has no example configuration";
  Config c;
  load_config_file(write("readme.conf", example), c);
  finish_config(c);
  EXPECT_EQ(c.general.tcp_server.spec.port, 5760);
  ASSERT_EQ(c.endpoints.size(), 3u);
  EXPECT_EQ(c.endpoints[0].spec.kind, Kind::kSerial);
  EXPECT_EQ(c.endpoints[0].spec.bauds, (std::vector<uint32_t>{57600, 115200}));
  EXPECT_EQ(c.endpoints[1].spec.kind, Kind::kUdpClient);
  EXPECT_EQ(c.endpoints[1].spec.port, 14550);
  EXPECT_EQ(c.endpoints[2].spec.kind, Kind::kUdpServer);
}

TEST_F(ConfigTest, ErrorsNameFileLineAndKey) {
  const std::string file = (dir_ / "bad.conf").string();
  EXPECT_EQ(error_of("[UartEndpoint fc]\nDevice=/dev/x\nBaud = fast\n"),
            file + ":3: Baud: 'fast' is not a whole number from 50 to 20000000");
  EXPECT_EQ(error_of("[General]\nTcpServerPort=5760\nColour=blue\n"), file + ":3: Colour: unknown key in [General]");
  EXPECT_EQ(error_of("[TcpEndpoint t]\nAddress=1.2.3.4\nPort=99999\n"),
            file + ":3: Port: '99999' is not a whole number from 0 to 65535");
  EXPECT_EQ(error_of("[UdpEndpoint u]\nMode=sideways\n"), file + ":2: Mode: 'sideways' must be normal or server");
  EXPECT_EQ(error_of("[UdpEndpoint u]\nFlowControl=true\n"), file + ":2: FlowControl: unknown key in this section");
  EXPECT_EQ(error_of("[SerialThing x]\n"),
            file +
                ":1: [SerialThing x]: unknown section type (General, Http, UartEndpoint, "
                "UdpEndpoint, TcpEndpoint, TcpServerEndpoint, WebSocketEndpoint, NatsEndpoint)");
  EXPECT_EQ(error_of("Port=1\n"), file + ":1: Port: key outside of any section");
  EXPECT_EQ(error_of("[UdpEndpoint]\n"),
            file + ":1: [UdpEndpoint]: this section needs a name, as [UdpEndpoint my-name]");
  EXPECT_EQ(error_of("[General]\nReportStats = maybe\n"),
            file + ":2: ReportStats: 'maybe' is not a boolean (true/false, 1/0)");
  EXPECT_EQ(error_of("[General]\nWorkers = many\n"), file + ":2: Workers: 'many' is not a whole number from 0 to 1024");
  EXPECT_EQ(error_of("[General]\nPeerPlacement = even\n"), file + ":2: PeerPlacement: unknown key in [General]");
  EXPECT_NE(error_of("[UdpEndpoint u]\nMode=Server\nAddress=0.0.0.0\n").find("Port is required in server mode"),
            std::string::npos);
  EXPECT_NE(error_of("[UartEndpoint fc]\nBaud=57600\n").find("Device is required"), std::string::npos);
  EXPECT_EQ(error_of("[UdpEndpoint u]\nAddress=127.0.0.1\nPort=14550\n"),
            file + ":1: Mode: required (Normal, a client, or Server) in [UdpEndpoint u]")
      << "as mavlink-router: a UDP endpoint says which it is";
  for (const char* address : {"999.1.1.1", "localhost"}) {
    EXPECT_EQ(error_of(std::string("[UdpEndpoint u]\nMode=Server\nAddress=") + address + "\nPort=14550\n"),
              file + ":3: Address: '" + address +
                  "' is not a numeric address; a server listens on one of this machine's (0.0.0.0 or :: for all "
                  "of them)");
  }
  EXPECT_EQ(error_of("[TcpServerEndpoint t]\nPort=5790\nAddress=ground.example\n").substr(0, file.size() + 12),
            file + ":3: Address:");
}

// What used to be taken quietly, or quietly changed, is a mistake named where it was written.
TEST_F(ConfigTest, ValuesThatCannotBeMeantAreErrors) {
  const std::string file = (dir_ / "bad.conf").string();
  const std::string udp = "[UdpEndpoint u]\nAddress=127.0.0.1\n";
  EXPECT_EQ(error_of(std::string("[General]\nLog = /var/lo\0g\n", 26)),
            file + ":2: a NUL byte in the line (a value would be cut at it)");
  for (const char* mode : {"Normal", "Server"}) {
    EXPECT_EQ(error_of(udp + "Mode=" + mode + "\nPort=0\n"), file + ":4: Port: 0 is not a port (1 to 65535)") << mode;
  }
  EXPECT_EQ(error_of("[TcpEndpoint t]\nAddress=127.0.0.1\nPort=0\n"), file + ":3: Port: 0 is not a port (1 to 65535)");
  EXPECT_EQ(error_of(udp + "Mode=Normal\nPort=1\nport = 2\n"),
            file + ":5: port: given twice in this section (first on line 4)");
  EXPECT_EQ(error_of("[General foo]\n"), file + ":1: [General foo]: [General] takes no name");
  EXPECT_EQ(error_of(udp + "Mode=Server\nPort=1\nMaxPeers=0\n"),
            file + ":5: MaxPeers: '0' is not a whole number from 1 to 100000");
  EXPECT_EQ(error_of("[General]\nStatsInterval=0\n"),
            file + ":2: StatsInterval: '0' is not a whole number from 1 to 86400");
  EXPECT_EQ(error_of("[General]\nTelemetryLogMaxSize=1\n"),
            file + ":2: TelemetryLogMaxSize: '1' is below the smallest log file, 65536 bytes (0: never rotate)");
  const std::string long_value(10'000'000, 'x');
  const std::string err = error_of("[General]\nReportStats = " + long_value + "\n");
  EXPECT_LT(err.size(), file.size() + 200) << "a long value is quoted in part";
  EXPECT_NE(err.find("(10000000 characters)"), std::string::npos) << err.substr(0, 300);
  const std::string key_err = error_of("[General]\n" + long_value + " = 1\n");
  EXPECT_LT(key_err.size(), file.size() + 200) << "a long key is shown in part";
  EXPECT_NE(key_err.find("(10000000 characters)"), std::string::npos) << key_err.substr(0, 300);
  EXPECT_EQ(error_of("[UartEndpoint s]\nDevice = /dev/ttyS0\nBaud = 57600,1\n"),
            file + ":3: Baud: '1' is not a whole number from 50 to 20000000");
  EXPECT_EQ(error_of(udp + "Mode=Server\nPort=1\nIdleTimeout=0\n"),
            file + ":5: IdleTimeout: '0' is not a whole number from 1 to 86400");
}

// A conf directory that is not there is a warning, as in mavlink-router (its default often is
// not there); a .conf in it that is not a regular file (a FIFO) is said and skipped, never read.
TEST_F(ConfigTest, AMissingConfDirAndANonRegularConfAreSaid) {
  Config missing;
  load_config_dir(dir_ / "no-such.d", missing);
  ASSERT_EQ(missing.warnings.size(), 1u);
  EXPECT_NE(missing.warnings[0].find("no such configuration directory"), std::string::npos) << missing.warnings[0];
  fs::create_directories(dir_ / "fifo.d");
  ASSERT_EQ(::mkfifo((dir_ / "fifo.d" / "main.conf").c_str(), 0600), 0);
  Config fifo;
  load_config_dir(dir_ / "fifo.d", fifo);
  ASSERT_EQ(fifo.warnings.size(), 1u);
  EXPECT_EQ(fifo.warnings[0], (dir_ / "fifo.d" / "main.conf").string() + ": not a regular file: skipped");
  write("a-file", "");
  EXPECT_THROW(load_config_dir(dir_ / "a-file", fifo), ConfigError) << "a file where the directory should be";
}

TEST_F(ConfigTest, ConfDirIsReadInNameOrderAndLaterFilesOverride) {
  fs::create_directories(dir_ / "config.d");
  write("config.d/20-override.conf", "[UdpEndpoint gcs]\nPort = 14600\n");
  write("config.d/10-base.conf",
        "[UdpEndpoint gcs]\nMode=Normal\nAddress=127.0.0.1\nPort=14550\n[General]\nReportStats=true\n");
  write("config.d/ignored.txt", "garbage that is not read");
  Config c;
  load_config_dir(dir_ / "config.d", c);
  finish_config(c);
  ASSERT_EQ(c.endpoints.size(), 1u);
  EXPECT_EQ(c.endpoints[0].spec.port, 14600);
  EXPECT_TRUE(c.general.report_stats);
}

// Log alone asks for the flight log, as in mavlink-router; MavlinkDialect picks its format and
// the writer's identity is configurable.
TEST_F(ConfigTest, LogAloneAsksForTheFlightLog) {
  Config c;
  load_config_file(write("m.conf",
                         "[General]\nLog = /var/log/flight\nMavlinkDialect = ardupilotmega\n"
                         "LogWriterSystemId = 9\nLogWriterComponentId = 200\n"),
                   c);
  finish_config(c);
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(c.general.log_dir, "/var/log/flight");
  EXPECT_EQ(c.general.flight_log_format, FlightLogFormat::kDataflash);
  EXPECT_EQ(c.general.log_writer_system, 9);
  EXPECT_EQ(c.general.log_writer_component, 200);
  EXPECT_NE(error_of("[General]\nLogWriterSystemId = 0\n").find("bad.conf:2: LogWriterSystemId:"), std::string::npos);
}

TEST_F(ConfigTest, SigningKeysAndAllowFrom) {
  const std::string hex(64, 'a');
  const auto hex_key = write("hex.key", hex + "\n");
  const auto b64_key = write("b64.key", "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqo=\n");
  fs::permissions(hex_key, fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(b64_key, fs::perms::owner_read | fs::perms::owner_write);
  Config c;
  load_config_file(
      write("m.conf",
            "[UdpEndpoint radio]\nMode=Server\nAddress=0.0.0.0\nPort=14550\nSigningKeyFile=" + hex_key.string() +
                "\nSigning=verify\nSigningLinkId=4\nAllowUnsignedMsgIds=109, 0\n"
                "AllowFrom = 192.168.1.0/24, fd00::/8\n[TcpServerEndpoint gcs]\nPort=5790\nMaxClients=3\n"
                "SigningKeyFile=" +
                b64_key.string() + "\n"),
      c);
  finish_config(c);
  const auto& radio = c.endpoints[0];
  ASSERT_TRUE(radio.signing);
  EXPECT_EQ(radio.signing->key[0], 0xAA);
  EXPECT_TRUE(radio.signing->verify);
  EXPECT_FALSE(radio.signing->sign);
  EXPECT_EQ(radio.signing->link_id, 4);
  EXPECT_TRUE(radio.signing->unsigned_allowed.contains(109));
  ASSERT_EQ(radio.spec.allow_from.size(), 2u);
  const auto& gcs = c.endpoints[1];
  EXPECT_EQ(gcs.spec.kind, transport::EndpointSpec::Kind::kTcpServer);
  EXPECT_EQ(gcs.spec.max_peers, 3u);
  EXPECT_EQ(gcs.signing->key[31], 0xAA) << "base64 of 32 bytes of 0xAA";
  EXPECT_TRUE(gcs.signing->verify && gcs.signing->sign);
}

TEST_F(ConfigTest, AKeyOthersCanReadIsRefused) {
  const auto key = write("open.key", std::string(64, 'b'));
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  const std::string err =
      error_of("[UdpEndpoint u]\nMode=Server\nAddress=127.0.0.1\nPort=1\nSigningKeyFile=" + key.string() + "\n");
  EXPECT_NE(err.find(":5: SigningKeyFile: " + key.string() +
                     ": a signing key must not be readable by group or others (chmod 600"),
            std::string::npos)
      << err;
}

TEST_F(ConfigTest, SecurityKeyErrors) {
  EXPECT_NE(error_of("[UdpEndpoint u]\nMode=Server\nAddress=127.0.0.1\nPort=1\nAllowFrom=10.0.0.0/33\n")
                .find(":5: AllowFrom: '10.0.0.0/33': bad prefix length"),
            std::string::npos);
  EXPECT_NE(error_of("[UdpEndpoint u]\nMode=Server\nAddress=127.0.0.1\nPort=1\nSigning=verify\n")
                .find("signing keys need SigningKeyFile"),
            std::string::npos);
  EXPECT_NE(error_of("[UdpEndpoint u]\nMode=Normal\nAddress=127.0.0.1\nAllowFrom=10.0.0.1\n")
                .find("AllowFrom applies to listening endpoints"),
            std::string::npos);
  const auto short_key = write("short.key", "abcd");
  fs::permissions(short_key, fs::perms::owner_read);
  EXPECT_NE(
      error_of("[UdpEndpoint u]\nMode=Server\nAddress=127.0.0.1\nPort=1\nSigningKeyFile=" + short_key.string() + "\n")
          .find("not a 32-byte key"),
      std::string::npos);
}

// The [General] TCP server takes every [TcpServerEndpoint] key, prefixed TcpServer; its default
// cap holds a ground server's hundred clients (eviction is for floods).
TEST_F(ConfigTest, TheGeneralTcpServerTakesTheKeysOfATcpServerEndpoint) {
  Config c;
  load_config_file(write("main.conf",
                         "[General]\nTcpServerPort = 5770\nTcpServerMaxClients = 200\nTcpServerAddress = 127.0.0.1\n"
                         "TcpServerAllowFrom = 127.0.0.0/8\nTcpServerBlockMsgIdOut = 30\n"),
                   c);
  finish_config(c);
  const EndpointConfig& s = c.general.tcp_server;
  EXPECT_EQ(s.spec.kind, Kind::kTcpServer);
  EXPECT_EQ(s.spec.port, 5770);
  EXPECT_EQ(s.spec.max_peers, 200u);
  EXPECT_EQ(s.spec.address, "127.0.0.1");
  EXPECT_EQ(s.spec.allow_from.size(), 1u);
  EXPECT_FALSE(s.policy.out.pass(30, 1, 1));
  EXPECT_TRUE(s.policy.out.pass(0, 1, 1));

  Config d;
  finish_config(d);
  EXPECT_GE(d.general.tcp_server.spec.max_peers, 1000u) << "a hundred clients are not a flood";
  EXPECT_EQ(d.general.tcp_server.spec.port, 5760);

  const std::string bad = error_of("[General]\nTcpServerMaxClients = 0\n");
  EXPECT_NE(bad.find("bad.conf:2: TcpServerMaxClients:"), std::string::npos) << bad;
  const std::string unknown = error_of("[General]\nTcpServerColour = blue\n");
  EXPECT_NE(unknown.find("bad.conf:2: TcpServerColour: unknown key"), std::string::npos) << unknown;
  const std::string named = error_of("[General]\nTcpServerPort = 5770\nTcpServerAddress = localhost\n");
  EXPECT_NE(named.find("bad.conf:3: Address: 'localhost' is not a numeric address"), std::string::npos) << named;
}

// MavlinkDialect chooses the flight log's format, as in mavlink-router: no warning for any value.
TEST_F(ConfigTest, MavlinkDialectChoosesTheFlightLogFormatQuietly) {
  const std::pair<const char*, FlightLogFormat> values[] = {{"auto", FlightLogFormat::kAuto},
                                                            {"common", FlightLogFormat::kUlog},
                                                            {"ardupilotmega", FlightLogFormat::kDataflash}};
  for (const auto& [value, format] : values) {
    Config c;
    load_config_file(write("a.conf", std::string("[General]\nMavlinkDialect = ") + value + "\n"), c);
    finish_config(c);
    EXPECT_TRUE(c.warnings.empty()) << value;
    EXPECT_EQ(c.general.flight_log_format, format) << value;
  }
  EXPECT_NE(error_of("[General]\nMavlinkDialect = px5\n").find("bad.conf:2: MavlinkDialect:"), std::string::npos);
}

TEST_F(ConfigTest, StrictIsABoolean) {
  Config c;
  load_config_file(write("s.conf", "[General]\nStrict = true\n"), c);
  EXPECT_TRUE(c.general.strict);
  EXPECT_NE(error_of("[General]\nStrict = maybe\n").find("bad.conf:2: Strict:"), std::string::npos);
}

TEST_F(ConfigTest, ShapingKeys) {
  Config c;
  load_config_file(write("shape.conf", R"([General]
FailoverTimeout = 800
FailbackDelay = 3000
GroupDeduplicationWindow = 200
[UdpEndpoint radio]
Mode = server
Port = 14560
RateLimitOut = ATTITUDE:10, GLOBAL_POSITION_INT:5, 253:0.5, *:2
RateLimitIn = *:20
MaxRate = 57600baud
MaxDelay = 300
Group = radios
Priority = 2
[UartEndpoint fc]
Device = /dev/ttyS1
MaxRate = off
[TcpEndpoint cloud]
Address = 127.0.0.1
Port = 5760
MaxRate = 64kbps
)"),
                   c);
  EXPECT_EQ(c.general.failover.timeout, 800);
  EXPECT_EQ(c.general.failover.failback, 3000);
  EXPECT_EQ(c.general.failover.dedup_window, 200);
  const auto& radio = c.endpoints.at(0);
  ASSERT_EQ(radio.spec.rate_out.named.size(), 3u);
  EXPECT_EQ(radio.spec.rate_out.named[0].msgid, 30u);  // ATTITUDE
  EXPECT_EQ(radio.spec.rate_out.named[0].per_second, 10);
  EXPECT_EQ(radio.spec.rate_out.named[1].msgid, 33u);  // GLOBAL_POSITION_INT
  EXPECT_EQ(radio.spec.rate_out.named[2].per_second, 0.5);
  EXPECT_EQ(radio.spec.rate_out.others, 2);
  EXPECT_EQ(radio.spec.rate_in.others, 20);
  EXPECT_EQ(radio.spec.max_rate, 5760);
  EXPECT_EQ(radio.spec.max_delay, 300);
  EXPECT_EQ(radio.policy.priority, 2);
  EXPECT_EQ(c.endpoints.at(1).spec.max_rate, 0) << "off: not even the baud rate";
  EXPECT_EQ(c.endpoints.at(2).spec.max_rate, 8000);
}

TEST_F(ConfigTest, ShapingKeysSayWhatIsWrong) {
  const std::string file = (dir_ / "bad.conf").string();
  EXPECT_EQ(error_of("[UdpEndpoint a]\nMode = server\nPort = 1\nRateLimitOut = ATITUDE:10\n"),
            file +
                ":4: RateLimitOut: 'ATITUDE' is not a message of the ardupilotmega dialect (give a name from it, "
                "or a message id)");
  EXPECT_EQ(error_of("[UdpEndpoint a]\nMode = server\nPort = 1\nRateLimitIn = ATTITUDE\n"),
            file + ":4: RateLimitIn: 'ATTITUDE' is not MESSAGE:RATE (ATTITUDE:10, *:2)");
  EXPECT_EQ(error_of("[UdpEndpoint a]\nMode = server\nPort = 1\nRateLimitIn = *:-1\n"),
            file + ":4: RateLimitIn: '-1' is not a rate above 0 (messages a second)");
  EXPECT_EQ(error_of("[UdpEndpoint a]\nMode = server\nPort = 1\nMaxRate = 57600\n"),
            file + ":4: MaxRate: '57600' needs a unit: baud, bps, kbps, Mbps, B/s, kB/s or MB/s (or off)");
  EXPECT_EQ(error_of("[General]\nFailoverTimeout = soon\n"),
            file + ":2: FailoverTimeout: 'soon' is not a whole number from 10 to 3600000");
}

TEST_F(ConfigTest, NatsEndpointKeys) {
  Config c;
  load_config_file(write("fabric.conf",
                         "[NatsEndpoint fleet]\nUrl = nats://a:4222, tls://b:4222\nUser = mav\nPassword = pw\n"
                         "Prefix = fleet.mav\nSubscribe = from.255.>, from.*.*.HEARTBEAT\nQueueSize = 100000\n"
                         "AllowMsgIdOut = 0,76\nRateLimitOut = ATTITUDE:2\n"),
                   c);
  finish_config(c);
  ASSERT_EQ(c.endpoints.size(), 1u);
  EXPECT_EQ(c.endpoints[0].spec.kind, transport::EndpointSpec::Kind::kMade) << "made by fabric/, not transport";
  EXPECT_FALSE(c.endpoints[0].spec.rate_out.empty()) << "shaped as any link";
  const NatsSettings& n = c.endpoints[0].nats;
  EXPECT_EQ(n.urls, (std::vector<std::string>{"nats://a:4222", "tls://b:4222"}));
  EXPECT_EQ(n.user, "mav");
  EXPECT_EQ(n.prefix, "fleet.mav");
  EXPECT_EQ(n.subscribe, (std::vector<std::string>{"from.255.>", "from.*.*.HEARTBEAT"}));
  EXPECT_EQ(n.queue_bytes, 100000u);
  const std::string file = (dir_ / "bad.conf").string();
  EXPECT_EQ(error_of("[NatsEndpoint f]\nUrl = http://x:1\n"),
            file + ":2: Url: 'http://x:1' is not a NATS server URL (nats://HOST:PORT or tls://HOST:PORT)");
  EXPECT_EQ(error_of("[NatsEndpoint f]\nUrl = nats://x:1\nPrefix = a..b\n"),
            file + ":3: Prefix: 'a..b' is not a subject prefix (as fleet.mavlink)");
  EXPECT_EQ(error_of("[NatsEndpoint f]\nUrl = nats://x:1\nSubscribe = from.>.x\n"),
            file + ":3: Subscribe: 'from.>.x' is not a subject after the prefix (as from.> or from.255.>)");
  EXPECT_EQ(error_of("[NatsEndpoint f]\nUrl = nats://x:1\nMode = Server\n"),
            file + ":3: Mode: unknown key in this section");
  EXPECT_NE(error_of("[NatsEndpoint f]\nUser = x\n").find("Url is required"), std::string::npos);
}

// Vehicle names a vehicle's router; Vehicles lists a ground router's vehicles with their ids.
TEST_F(ConfigTest, NatsVehicleKeys) {
  Config c;
  load_config_file(write("fleet.conf",
                         "[NatsEndpoint fleet]\nUrl = nats://a:4222\nVehicles = v1:11, v2, boat-*\n"
                         "[NatsEndpoint boat]\nUrl = nats://a:4222\nVehicle = boat-7\n"),
                   c);
  finish_config(c);
  ASSERT_EQ(c.endpoints.size(), 2u);
  const auto& vehicles = c.endpoints[0].nats.vehicles;
  ASSERT_EQ(vehicles.size(), 3u);
  EXPECT_EQ(vehicles[0].name, "v1");
  EXPECT_EQ(vehicles[0].system, 11);
  EXPECT_EQ(vehicles[1].system, 0) << "the first free id";
  EXPECT_EQ(vehicles[2].name, "boat-*");
  EXPECT_EQ(c.endpoints[1].nats.vehicle, "boat-7");
  const std::string file = (dir_ / "bad.conf").string();
  const std::string nats = "[NatsEndpoint f]\nUrl = nats://x:1\n";
  EXPECT_EQ(error_of(nats + "Vehicle = v.1\n"),
            file + ":3: Vehicle: 'v.1' is not a vehicle name (letters, digits, '-', '_')");
  EXPECT_EQ(error_of(nats + "Vehicle = boat-*\n"),
            file + ":3: Vehicle: 'boat-*' is not a vehicle name (letters, digits, '-', '_')");
  EXPECT_EQ(error_of(nats + "Vehicle = from\n"),
            file + ":3: Vehicle: 'from' is a word of the fabric's subjects, not a vehicle name");
  EXPECT_EQ(error_of(nats + "Vehicles = v1:11, v2:11\n"),
            file + ":3: Vehicles: system id 11 is given to both v1 and v2");
  EXPECT_EQ(error_of(nats + "Vehicles = v1, v1\n"), file + ":3: Vehicles: vehicle 'v1' is listed twice");
  EXPECT_EQ(error_of(nats + "Vehicles = boat-*:3\n"),
            file + ":3: Vehicles: 'boat-*:3': a pattern takes the first free system ids, not one (boat-* without ':')");
  EXPECT_EQ(error_of(nats + "Vehicles = v1:0\n"), file + ":3: Vehicles: '0' is not a whole number from 1 to 255");
  EXPECT_NE(error_of(nats + "Vehicle = a\nVehicles = b\n").find(": Vehicle and Vehicles together"), std::string::npos);
}

// MessageRates: on by default, off for the router or for one endpoint.
TEST_F(ConfigTest, MessageRatesKeys) {
  Config c;
  load_config_file(write("rates.conf",
                         "[General]\nMessageRates = false\n[UdpEndpoint radio]\nMode = Normal\nAddress = 127.0.0.1\n"
                         "Port = 14550\nMessageRates = off\n[UdpEndpoint gcs]\nMode = Normal\nAddress = 127.0.0.1\n"
                         "Port = 14551\n"),
                   c);
  finish_config(c);
  EXPECT_FALSE(c.general.message_rates);
  ASSERT_EQ(c.endpoints.size(), 2u);
  EXPECT_FALSE(c.endpoints[0].spec.message_rates);
  EXPECT_TRUE(c.endpoints[1].spec.message_rates) << "on unless said";
  EXPECT_TRUE(GeneralConfig{}.message_rates);
  const std::string file = (dir_ / "bad.conf").string();
  EXPECT_EQ(error_of("[General]\nMessageRates = maybe\n"),
            file + ":2: MessageRates: 'maybe' is not a boolean (true/false, 1/0)");
}
