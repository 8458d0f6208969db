// The window's server on its own: an answer that is worked out elsewhere (an endpoint change, a
// reload, which wait for the router) holds no other request while it waits.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <thread>

#include "e2e/free_ports.hpp"
#include "e2e/http_client.hpp"
#include "window/http_server.hpp"

using namespace mavswitch;
using namespace mavswitch::test;
using namespace std::chrono_literals;

TEST(HttpWindow, AnAnswerWorkedOutElsewhereHoldsNoOtherRequest) {
  config::HttpConfig config;
  config.address = "127.0.0.1";
  config.port = free_tcp_port();
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  std::thread worker;  // where the slow answer is worked out: the test's blocking-work thread
  window::HttpServer server(
      config, window::HttpServer::Hooks{.handler =
                                            [&](const window::HttpRequest& r) {
                                              if (r.path != "/slow")
                                                return window::HttpResponse(200, "text/plain", "quick\n");
                                              window::HttpResponse later;
                                              later.awaits = [&worker, &started, released](auto answer) {
                                                worker = std::thread([&started, released, answer] {
                                                  started.set_value();
                                                  released.wait_for(10s);
                                                  answer(window::HttpResponse(201, "text/plain", "slow\n"));
                                                });
                                              };
                                              return later;
                                            },
                                        .find_websocket = [](const std::string&) { return nullptr; },
                                        .open_text = [](const window::HttpRequest&, std::function<void()>, int*,
                                                        std::string*) { return nullptr; },
                                        .admit = [](const window::HttpRequest&) { return 0; },
                                        .tick = {},
                                        .bell = {}});

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

// A file PUT streams to its handler: answered at its headers, its body written to the request's
// stream as it comes and the client held back while the reader is behind (a vehicle's MAVFTP
// write, here a reader that takes 16 KiB at a time with a pause between), so that a 4 MiB body
// never has more than the stream's 256 KiB (and a read's worth) waiting.
TEST(HttpWindow, AStreamedBodyIsHeldBackWhileItsReaderIsBehind) {
  config::HttpConfig config;
  config.address = "127.0.0.1";
  config.port = free_tcp_port();
  std::thread reader;
  std::atomic<size_t> most_waiting{0};
  std::string got;
  window::HttpServer server(
      config,
      window::HttpServer::Hooks{
          .handler =
              [&](const window::HttpRequest& r) {
                if (!r.body_stream) return window::HttpResponse(400, "text/plain", "not streamed\n");
                window::HttpResponse answer;
                answer.awaits = [&, body = r.body_stream, length = r.body_length](auto done) {
                  reader = std::thread([&, body, length, done] {
                    uint8_t chunk[16 * 1024];
                    bool last = false;
                    const auto deadline = std::chrono::steady_clock::now() + 30s;
                    while (!last && body->state() != ByteStream::State::kFailed &&
                           std::chrono::steady_clock::now() < deadline) {
                      most_waiting = std::max(most_waiting.load(), body->available());
                      got.append(reinterpret_cast<const char*>(chunk), body->take(chunk, sizeof chunk, &last));
                      std::this_thread::sleep_for(2ms);  // the vehicle's pace
                    }
                    done(window::HttpResponse(got.size() == length ? 200 : 500, "text/plain",
                                              std::to_string(got.size())));
                  });
                };
                return answer;
              },
          .find_websocket = [](const std::string&) { return nullptr; },
          .open_text = [](const window::HttpRequest&, std::function<void()>, int*, std::string*) { return nullptr; },
          .admit = [](const window::HttpRequest&) { return 0; },
          .tick = {},
          .bell = {}});

  std::string sent(4 * 1024 * 1024, '\0');
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>((i * 2654435761u) >> 13);
  const HttpReply reply = http_request(server.port(), "PUT", "/v1/vehicles/1/1/files/big.bin", sent, "", 60);
  if (reader.joinable()) reader.join();
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_TRUE(got == sent) << got.size() << " bytes of " << sent.size();
  std::cout << "[ figures  ] 4 MiB streamed; at most " << most_waiting.load() << " bytes waited for the reader\n";
  EXPECT_GT(most_waiting.load(), 128u * 1024) << "the reader was behind";
  EXPECT_LE(most_waiting.load(), window::HttpServer::kStreamedBodyBytes + 128 * 1024) << "and the client held back";
}
