// Onboard logs against ArduPilot SITL (logging from boot, LOG_DISARMED 1), through a TCP hop that
// loses 10% of frames each way: listed, one downloaded by the log protocol and compared with
// the file ArduPilot writes and with the same file read by MAVFTP, a Range of it, the tool's
// download.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "e2e/sitl_lossy_site.hpp"

namespace mavswitch::test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

std::string bytes_of(const std::filesystem::path& path) {
  const auto b = read_bytes(path);
  return {b.begin(), b.end()};
}

TEST(Sitl, AnOnboardLogComesTheSameByTheLogProtocolAndByMavftp) {
  if (!SitlLossySite::available()) GTEST_SKIP() << SitlLossySite::kSkip;
  SitlLossySite site("logs", 16, 0.10, 3, "LOG_DISARMED 1\n");
  ASSERT_TRUE(site.heard()) << site.daemon->err();
  const uint16_t http = site.http;

  // ArduPilot starts its log at boot: listed once it has some bytes.
  Json log;
  ASSERT_TRUE(wait_until(
      [&] {
        const HttpReply r = http_request(http, "GET", "/v1/vehicles/1/1/logs", "", "", 30);
        if (r.status != 200) return false;
        const Json logs = Json::parse(r.body)["logs"];
        if (logs.empty() || logs.back()["size"].get<uint64_t>() < 60'000) return false;
        log = logs.back();
        return true;
      },
      60'000ms))
      << log;
  const uint64_t id = log["id"];
  uint64_t size = log["size"];
  const auto start = std::chrono::steady_clock::now();
  const HttpReply got = http_request(http, "GET", "/v1/vehicles/1/1/logs/" + std::to_string(id), "", "", 120);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(got.status, 200) << got.body.substr(0, 200);
  // The log is still written: the download has its size when asked for, at least the listed one.
  ASSERT_GE(got.body.size(), size);
  size = got.body.size();
  // What ArduPilot wrote to its file (it only grows) begins with the same bytes.
  const std::string name = fmt::format("{:08}.BIN", id);
  const std::string file = bytes_of(site.scratch / "run" / "logs" / name);
  ASSERT_GE(file.size(), size);
  EXPECT_TRUE(file.compare(0, size, got.body) == 0) << "the log protocol's bytes are the file's";

  // The same log by MAVFTP (found in SITL's folder after /APM/LOGS), its first `size` bytes the
  // same; and as the file it is.
  const HttpReply ftp =
      http_request(http, "GET", "/v1/vehicles/1/1/logs/" + std::to_string(id) + "?via=mavftp", "", "", 120);
  ASSERT_EQ(ftp.status, 200) << ftp.body.substr(0, 200);
  ASSERT_GE(ftp.body.size(), size);
  EXPECT_TRUE(ftp.body.compare(0, size, got.body) == 0) << "MAVFTP's bytes are the log protocol's";
  const HttpReply crc = http_request(http, "GET", "/v1/vehicles/1/1/files/logs/" + name + "?crc=1", "", "", 60);
  EXPECT_EQ(crc.status, 200) << crc.body;
  EXPECT_EQ(http_request(http, "GET", "/v1/vehicles/1/1/logs/" + std::to_string(id) + "?via=carrier-pigeon").status,
            400);
  EXPECT_EQ(http_request(http, "GET", "/v1/vehicles/1/1/logs/60000?via=mavftp", "", "", 60).status, 404);

  // A Range of it: 206, that part only.
  const std::string part = raw_exchange(http,
                                        "GET /v1/vehicles/1/1/logs/" + std::to_string(id) +
                                            " HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=1000-50999\r\n"
                                            "Connection: close\r\n\r\n",
                                        60);
  EXPECT_EQ(part.rfind("HTTP/1.1 206", 0), 0u) << part.substr(0, 200);
  EXPECT_NE(part.find("content-range: bytes 1000-50999/"), std::string::npos) << part.substr(0, 400);
  const size_t body = part.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos);
  const std::string part_body = part.substr(body + 4);
  size_t differs = 0;
  while (differs < part_body.size() && differs < 50'000 && part_body[differs] == got.body[1000 + differs]) ++differs;
  EXPECT_TRUE(part_body == got.body.substr(1000, 50'000))
      << "the part's bytes: " << part_body.size() << " came, the first " << differs << " the log's";
  EXPECT_NE(
      raw_exchange(http, "GET /v1/vehicles/1/1/logs/" + std::to_string(id) +
                             " HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=999999999-\r\nConnection: close\r\n\r\n")
          .find("HTTP/1.1 416"),
      std::string::npos);
  EXPECT_EQ(http_request(http, "GET", "/v1/vehicles/1/1/logs/60000", "", "", 30).status, 404);
  EXPECT_EQ(http_request(http, "DELETE", "/v1/vehicles/1/1/logs").status, 401) << "erasing needs the token";

  // The tool: the list, and the log to a file.
  const std::string url = " --url " + site.url();
  std::string out;
  ASSERT_EQ(run_command(tool_path() + " logs onboard" + url + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find(std::to_string(id)), std::string::npos) << out;
  ASSERT_EQ(run_command(tool_path() + " logs download " + std::to_string(id) + " " +
                            (site.scratch / "got.bin").string() + url + " 2>&1",
                        &out),
            0)
      << out;
  EXPECT_GE(bytes_of(site.scratch / "got.bin").size(), size);
  std::cout << "[ figures  ] log " << id << ": " << size << " bytes through 10% loss each way in " << seconds << " s ("
            << static_cast<double>(size) / seconds / 1024 << " KiB/s; " << site.hop->dropped() << " frames lost)\n";
}

}  // namespace
}  // namespace mavswitch::test
