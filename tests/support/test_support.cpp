#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "dialect/builtin.hpp"

namespace mavswitch::test {

std::filesystem::path definitions_dir() { return MAVSWITCH_DEFINITIONS_DIR; }
std::filesystem::path captures_dir() {
  const std::filesystem::path dir = MAVSWITCH_CAPTURES_DIR;
  if (!std::filesystem::exists(dir / "GH-5.bin")) {
    throw std::runtime_error("the captures are not at " + dir.string() +
                             ": they come with node-mavlink; run `npm ci` in tests/interop (scripts/test.sh does)");
  }
  return dir;
}

std::filesystem::path shared_dir() {
  const std::filesystem::path dir = std::filesystem::path(MAVSWITCH_SOURCE_DIR) / ".." / "shared";
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? std::filesystem::canonical(dir, ec) : std::filesystem::path();
}

SmallDisk::SmallDisk(const std::filesystem::path& at, const char* size) : at_(at) {
  std::filesystem::create_directories(at_);
  mounted_ = ::mount("tmpfs", at_.c_str(), "tmpfs", 0, (std::string("size=") + size).c_str()) == 0;
}

SmallDisk::~SmallDisk() {
  if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
}

void SmallDisk::fill(const std::filesystem::path& file, uint64_t leave) {
  const uint64_t free = std::filesystem::space(at_).available;
  std::ofstream(file, std::ios::binary) << std::string(free > leave ? free - leave : 0, 'x');
}

std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<ParsedFrame> parse_all(const std::vector<uint8_t>& data, const std::vector<size_t>& chunk_sizes,
                                   protocol::ParserStats* stats) {
  protocol::FrameParser parser(dialect::builtin::message_table());
  std::vector<ParsedFrame> frames;
  auto sink = [&](const protocol::FrameView& f) {
    frames.push_back({std::vector<uint8_t>(f.bytes().begin(), f.bytes().end()), f.verified()});
  };
  size_t pos = 0;
  size_t k = 0;
  while (pos < data.size()) {
    size_t n = chunk_sizes.empty() ? data.size() : chunk_sizes[k++ % chunk_sizes.size()];
    n = std::min(n, data.size() - pos);
    parser.feed({data.data() + pos, n}, sink);
    pos += n;
  }
  parser.finish(sink);
  if (stats) *stats = parser.stats();
  return frames;
}

namespace {

// Outside a test (a bench program on the tests' support) there is no test's name.
std::string test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info != nullptr ? info->name() : "outside-a-test";
}

}  // namespace

ScratchDir::ScratchDir(const std::string& prefix)
    : path_(std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-" + test_name())) {
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path ScratchDir::write(const std::string& name, const std::string& text) const {
  const auto p = path_ / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::string found_program(const std::string& name) {
  std::string out;
  return run_command("command -v " + name, &out) == 0 && !out.empty() ? out.substr(0, out.find('\n')) : "";
}

int run_command(const std::string& command, std::string* out) {
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
    if (out) out->append(buf, n);
  }
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace mavswitch::test
