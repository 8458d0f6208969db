#include "window/operator_window.hpp"

#include <filesystem>

#include "base/blocking_work.hpp"
#include "base/log.hpp"
#include "config/key_file.hpp"

namespace mavswitch::window {
namespace {

// The status page's files: installed beside the program (PREFIX/share/mavswitch/www, which
// holds for any prefix and for an unpacked package), or in the source tree the program was
// built from.
std::string find_page_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "mavswitch" / "www";
    if (std::filesystem::exists(installed / "index.html", ec)) return installed.string();
  }
  if (std::filesystem::exists(std::filesystem::path(MAVSWITCH_SOURCE_PAGE_DIR) / "index.html", ec))
    return MAVSWITCH_SOURCE_PAGE_DIR;
  return "";
}

bool loopback(const std::string& address) {
  return address.rfind("127.", 0) == 0 || address == "::1" || address == "localhost";
}

}  // namespace

OperatorWindow::OperatorWindow(Router& router, config::HttpConfig http, std::function<config::Config()> read_config)
    : router_(router), http_(std::move(http)), control_(router, std::move(read_config)) {}

OperatorWindow::~OperatorWindow() { stop(); }

void OperatorWindow::stop() {
  {
    std::lock_guard lock(mutex_);
    quitting_ = true;  // no job queued from here on
  }
  server_.reset();  // no request in flight from here on
  std::unique_lock lock(mutex_);
  settled_.wait(lock, [this] { return jobs_ == 0; });
}

void OperatorWindow::run_later(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    if (quitting_) return;
    ++jobs_;
  }
  blocking_work::run([this, job = std::move(job)] {
    bool quitting = false;
    {
      std::lock_guard lock(mutex_);
      quitting = quitting_;
    }
    if (!quitting) job();  // else its session is gone with the server
    std::lock_guard lock(mutex_);
    --jobs_;
    settled_.notify_all();
  });
}

void OperatorWindow::start() {
  if (http_.port == 0) return;  // Port = 0: off
  HttpApi::Options options;
  options.metrics_per_link = http_.metrics_per_link;
  options.map_tiles = http_.map_tiles;
  options.page_dir = find_page_dir();
  if (options.page_dir.empty())
    log::warning("http: the status page's files are not installed: / answers 404");
  else
    log::debug("http: the status page from {}", options.page_dir);
  const bool beyond_loopback = !loopback(http_.address);
  options.loopback_listener = !beyond_loopback;
  if (!http_.token_file.empty()) {
    std::string token, error;
    constexpr size_t kMaxToken = 4096;
    if (!config::read_private_file(http_.token_file, "a token file", kMaxToken, &token, &error)) {
      log::error("[Http] TokenFile: {}; the HTTP server stays off", error);
      return;
    }
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
    if (token.size() < 16) {
      log::error("[Http] TokenFile: {}: a token of at least 16 characters; the HTTP server stays off",
                 http_.token_file);
      return;
    }
    options.token = std::move(token);
    options.token_for_reads = beyond_loopback;
  } else if (beyond_loopback) {
    log::warning(
        "[Http] listens on {} without a TokenFile: anyone who can reach it reads the router's state (changes stay "
        "refused). Set TokenFile, or listen on 127.0.0.1",
        http_.address);
  }
  options.more_metrics = more_metrics_;
  options.run_later = [this](std::function<void()> job) { run_later(std::move(job)); };
  options.vehicles = vehicles_;
  options.rates = rates_;
  options.data = data_;
  options.program = program_;
  options.own_components = own_components_;
  api_ = std::make_unique<HttpApi>(router_, control_, std::move(options));
  const WebSocketDoors& doors = control_.websockets();
  try {
    server_ = std::make_unique<HttpServer>(
        http_, HttpServer::Hooks{
                   .handler = [this](const HttpRequest& r) { return api_->handle(r); },
                   .find_websocket = [&doors](const std::string& path) { return doors.at(path); },
                   .open_text = [this](const HttpRequest& r, std::function<void()> wake, int* status,
                                       std::string* why) { return api_->open_text(r, std::move(wake), status, why); },
                   .admit = [this](const HttpRequest& r) { return api_->admits_websocket(r); },
                   .tick = [this] { api_->tick(); },
                   .bell = api_->bell(),
               });
    log::info("http: listening on {}", server_->url());
    for (const auto& [name, path] : doors.paths())
      log::info("websocket {}: MAVLink at {}{}", name, server_->websocket_url(), path);
  } catch (const std::runtime_error& e) {
    log::error("{}: http: {}; routing on without it", http_.source, e.what());
  }
}

void OperatorWindow::request_reload() {
  {
    std::lock_guard lock(mutex_);
    if (quitting_ || reload_queued_) return;
    reload_queued_ = true;
  }
  run_later([this] { reload(); });
}

void OperatorWindow::reload() {
  MAVSWITCH_ASSERT_BLOCKING_WORK("OperatorWindow::reload");
  bool quitting = false;
  {
    std::lock_guard lock(mutex_);
    reload_queued_ = false;
    quitting = quitting_;
  }
  if (!quitting) {
    log::info("reloading the configuration (SIGHUP)");
    try {
      control_.reload();
    } catch (const std::exception& e) {
      log::error("reload: {}", e.what());
    }
  }
}

}  // namespace mavswitch::window
