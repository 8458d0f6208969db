// Files over MAVFTP against ArduPilot SITL, through a TCP hop that loses 10% of frames each way:
// a file written, read back equal and by ArduPilot's CRC32, its directory listed, removed; the
// tool's ls, put and get; the errors a client meets.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "e2e/sitl_lossy_site.hpp"

namespace mavswitch::test {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

// ArduPilot's CRC32 of a file (AP_Filesystem::crc32): the reflected 0xEDB88320 polynomial from 0,
// without the final inversion zlib's has.
uint32_t ardupilot_crc32(const std::string& bytes) {
  uint32_t crc = 0;
  for (const char c : bytes) {
    crc ^= static_cast<uint8_t>(c);
    for (int k = 0; k < 8; ++k) crc = (crc & 1u) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
  }
  return crc;
}

std::string text_of_file(const std::filesystem::path& path) {
  const auto b = read_bytes(path);
  return {b.begin(), b.end()};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Sitl, AFileIsWrittenReadBackAndRemovedThroughALossyHop) {
  if (!SitlLossySite::available()) GTEST_SKIP() << SitlLossySite::kSkip;
  SitlLossySite site("files", 14, 0.10, 11);
  ASSERT_TRUE(site.heard()) << site.daemon->err();
  const uint16_t http = site.http;

  std::string bytes(48 * 1024, '\0');
  std::mt19937 random(5);
  for (char& c : bytes) c = static_cast<char>(random());
  const std::string path = "/v1/vehicles/1/1/files/mavswitch-test.bin";
  EXPECT_EQ(http_request(http, "PUT", path, bytes).status, 401) << "writing needs the token";
  auto start = std::chrono::steady_clock::now();
  const HttpReply put = http_request(http, "PUT", path, bytes, site.token, 60);
  const double put_s = seconds_since(start);
  ASSERT_EQ(put.status, 200) << put.body << site.daemon->err();
  EXPECT_EQ(Json::parse(put.body)["size"], bytes.size());

  start = std::chrono::steady_clock::now();
  const HttpReply got = http_request(http, "GET", path, "", "", 60);
  const double get_s = seconds_since(start);
  ASSERT_EQ(got.status, 200) << got.body.substr(0, 200);
  EXPECT_TRUE(got.body == bytes) << got.body.size() << " bytes back of " << bytes.size();
  const HttpReply crc = http_request(http, "GET", path + "?crc=1", "", "", 30);
  ASSERT_EQ(crc.status, 200) << crc.body;
  EXPECT_EQ(Json::parse(crc.body)["crc32"], ardupilot_crc32(bytes)) << crc.body;

  // A directory lists as JSON: ArduPilot's @SYS holds storage.bin, its parameter storage.
  const HttpReply sys = http_request(http, "GET", "/v1/vehicles/1/1/files/@SYS", "", "", 30);
  ASSERT_EQ(sys.status, 200) << sys.body;
  bool storage = false;
  const Json listing = Json::parse(sys.body);
  for (const Json& e : listing["entries"])
    storage = storage || (e["name"] == "storage.bin" && e["type"] == "file" && e["size"].get<uint64_t>() > 0);
  EXPECT_TRUE(storage) << sys.body;

  // The tool: the same file to disk and back under another name, then listed.
  const std::string tool = tool_path() + " files ", url = " --url " + site.url();
  const std::string token_file = " --token-file " + (site.scratch / "token").string();
  std::string out;
  ASSERT_EQ(run_command(tool + "get mavswitch-test.bin " + (site.scratch / "got.bin").string() + url + " 2>&1", &out),
            0)
      << out;
  EXPECT_TRUE(text_of_file(site.scratch / "got.bin") == bytes);
  ASSERT_EQ(run_command(tool + "put " + (site.scratch / "got.bin").string() + " mavswitch-copy.bin" + url + token_file +
                            " 2>&1",
                        &out),
            0)
      << out;
  EXPECT_EQ(Json::parse(
                http_request(http, "GET", "/v1/vehicles/1/1/files/mavswitch-copy.bin?crc=1", "", "", 30).body)["crc32"],
            ardupilot_crc32(bytes));
  ASSERT_EQ(run_command(tool + "ls @SYS" + url + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("storage.bin"), std::string::npos) << out;

  // Removed, it is gone; what is not there is a 404; without the token nothing is removed.
  EXPECT_EQ(http_request(http, "DELETE", path).status, 401);
  EXPECT_EQ(http_request(http, "DELETE", path, "", site.token, 30).status, 200);
  EXPECT_EQ(http_request(http, "DELETE", "/v1/vehicles/1/1/files/mavswitch-copy.bin", "", site.token, 30).status, 200);
  EXPECT_EQ(http_request(http, "GET", path, "", "", 30).status, 404);
  EXPECT_EQ(http_request(http, "GET", "/v1/vehicles/1/1/files/no/such/file.bin", "", "", 30).status, 404);
  EXPECT_EQ(http_request(http, "PATCH", path, "", site.token).status, 405);
  std::cout << "[ figures  ] through 10% loss each way (" << site.hop->dropped()
            << " frames lost): " << bytes.size() / 1024 << " KiB written in " << put_s << " s, read in " << get_s
            << " s\n";
}

}  // namespace
}  // namespace mavswitch::test
