// The window's one way to read the router: what the router's thread gathers is posted back and
// used on the window's thread. Neither thread waits for the other (docs/ARCHITECTURE.md, "Across
// threads"): the window keeps serving its other clients while the router gathers, and the router
// renders nothing. A request answers from it with `gathered`, whose answer is written as every
// answer that comes later is (HttpResponse::awaits).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "base/fault.hpp"
#include "base/once.hpp"
#include "router/router.hpp"
#include "window/bell.hpp"
#include "window/http_server.hpp"

namespace mavswitch::window {

// `gather` runs on the router's thread, then `use` on the window's with what it gathered. Work
// a loop drops unrun as it stops is destroyed, and `use` never runs: a caller that must hear of
// that holds a guard in `use` (as `gathered` does).
template <class T, class Gather, class Use>
void gather(Router& router, std::shared_ptr<Bell> bell, Gather on_router, Use use) {
  router.event_loop().post([bell = std::move(bell), on_router = std::move(on_router), use = std::move(use)]() mutable {
    bell->post([value = std::make_shared<T>(on_router()), use = std::move(use)]() mutable { use(std::move(*value)); });
  });
}

// A request answered from what `on_router` gathers, rendered by `render` on the window's
// thread. What either throws is a fault (counted, logged once) and a 500.
template <class Gather, class Render>
HttpResponse gathered(Router& router, std::shared_ptr<Bell> bell, Gather on_router, Render render) {
  using T = std::invoke_result_t<Gather&>;
  HttpResponse r;
  r.awaits = [&router, bell = std::move(bell), on_router = std::move(on_router),
              render = std::move(render)](std::function<void(HttpResponse)> answer) mutable {
    // Dropped unanswered (a loop stopping): 503 rather than the client's timeout.
    auto once = std::make_shared<Once<HttpResponse>>(std::move(answer),
                                                     HttpResponse{503, "text/plain", "the router is stopping\n"});
    const auto failed = [once] {
      fault::caught("an HTTP request");
      (*once)({500, "text/plain", "the request failed inside the router (counted as a fault; see its log)\n"});
    };
    gather<std::optional<T>>(
        router, bell,
        [on_router = std::move(on_router), failed]() mutable -> std::optional<T> {
          try {
            return on_router();
          } catch (...) {
            failed();
            return std::nullopt;
          }
        },
        [once, render = std::move(render), failed](std::optional<T> value) mutable {
          if (!value) return;
          try {
            (*once)(render(*value));
          } catch (...) {
            failed();
          }
        });
  };
  return r;
}

}  // namespace mavswitch::window
