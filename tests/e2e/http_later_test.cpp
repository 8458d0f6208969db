// The window's server on its own: an answer that is worked out elsewhere (an endpoint change, a
// reload, which wait for the router) holds no other request while it waits.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "e2e/free_ports.hpp"
#include "e2e/http_client.hpp"
#include "window/http_server.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
using namespace std::chrono_literals;

TEST(HttpWindow, AnAnswerWorkedOutElsewhereHoldsNoOtherRequest) {
  daemon::HttpConfig config;
  config.address = "127.0.0.1";
  config.port = free_tcp_port();
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  std::thread worker;  // where the slow answer is worked out: the test's blocking-work thread
  daemon::HttpServer server(
      config,
      daemon::HttpServer::Hooks{
          .handler =
              [&](const daemon::HttpRequest& r) {
                if (r.path != "/slow") return daemon::HttpResponse(200, "text/plain", "quick\n");
                daemon::HttpResponse later;
                later.later = [&started, released] {
                  started.set_value();
                  released.wait_for(10s);
                  return daemon::HttpResponse(201, "text/plain", "slow\n");
                };
                return later;
              },
          .find_websocket = [](const std::string&) { return nullptr; },
          .open_text = [](const daemon::HttpRequest&, std::function<void()>, int*, std::string*) { return nullptr; },
          .admit = [](const daemon::HttpRequest&) { return 0; },
          .run_later = [&](std::function<void()> job) { worker = std::thread(std::move(job)); },
          .tick = {}});

  auto slow = std::async(std::launch::async, [&] { return http_request(server.port(), "GET", "/slow"); });
  ASSERT_EQ(started.get_future().wait_for(10s), std::future_status::ready) << "the slow answer was asked for";
  const auto before = std::chrono::steady_clock::now();
  const HttpReply quick = http_request(server.port(), "GET", "/quick");
  EXPECT_EQ(quick.status, 200);
  EXPECT_EQ(quick.body, "quick\n");
  EXPECT_LT(std::chrono::steady_clock::now() - before, 2s) << "answered while the other waits";
  EXPECT_NE(slow.wait_for(0s), std::future_status::ready) << "the slow one still waits";
  release.set_value();
  const HttpReply answered = slow.get();
  EXPECT_EQ(answered.status, 201);
  EXPECT_EQ(answered.body, "slow\n");
  worker.join();
}
