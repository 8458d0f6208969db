// How the window answers a request later without waiting (HttpResponse::awaits, its one way):
//  - `gathered`: what the router knows, gathered on the router's thread and posted back to be
//    rendered on the window's (neither thread waits for the other: docs/ARCHITECTURE.md, "Across
//    threads"); `gather` is the same for the window's own use (its history, each second);
//  - `worked_out`: a change that must wait for the router, on the blocking-work thread.
// Each answers 500 when its work throws (a fault: counted, logged once) and 503 when a loop
// that stops drops the work unrun, rather than leave the client waiting for its timeout.
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

// A request's one answer (base/once.hpp): 503 when dropped unanswered.
inline std::shared_ptr<Once<HttpResponse>> once_answer(std::function<void(HttpResponse)> answer) {
  return std::make_shared<Once<HttpResponse>>(std::move(answer),
                                              HttpResponse{503, "text/plain", "the router is stopping\n"});
}

// Inside a catch: what threw is a fault, and the client gets a 500 that names no internals.
inline void answer_fault(Once<HttpResponse>& once) {
  fault::caught("an HTTP request");
  once({500, "text/plain", "the request failed inside the router (counted as a fault; see its log)\n"});
}

// A request answered from what `on_router` gathers, rendered by `render` on the window's thread.
template <class Gather, class Render>
HttpResponse gathered(Router& router, std::shared_ptr<Bell> bell, Gather on_router, Render render) {
  using T = std::invoke_result_t<Gather&>;
  HttpResponse r;
  r.awaits = [&router, bell = std::move(bell), on_router = std::move(on_router),
              render = std::move(render)](std::function<void(HttpResponse)> answer) mutable {
    auto once = once_answer(std::move(answer));
    const auto failed = [once] { answer_fault(*once); };
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

// Runs a job on the blocking-work thread, once (OperatorWindow::run_later); one it drops is
// destroyed unrun.
using RunLater = std::function<void(std::function<void()> job)>;

// A request answered by `work` (an HttpResponse) on the blocking-work thread: a change that
// waits for the router.
template <class Work>
HttpResponse worked_out(const RunLater& run_later, Work work) {
  HttpResponse r;
  r.awaits = [run_later, work = std::move(work)](std::function<void(HttpResponse)> answer) mutable {
    run_later([once = once_answer(std::move(answer)), work = std::move(work)]() mutable {
      try {
        (*once)(work());
      } catch (...) {
        answer_fault(*once);
      }
    });
  };
  return r;
}

}  // namespace mavswitch::window
