// A request's one answer, shared by whoever may give it (work on another thread, the boundary
// that catches what that work throws): whichever comes first answers, the others find it
// answered. Dropped unanswered (a loop that stops destroys its work unrun), it gives
// `if_dropped` itself rather than leave the client waiting for its timeout.
#pragma once

#include <functional>
#include <utility>

namespace mavswitch {

template <class Answer>
class Once {
 public:
  Once(std::function<void(Answer)> answer, Answer if_dropped)
      : answer_(std::move(answer)), if_dropped_(std::move(if_dropped)) {}
  Once(const Once&) = delete;
  Once& operator=(const Once&) = delete;
  ~Once() {
    if (answer_) answer_(std::move(if_dropped_));
  }
  void operator()(Answer a) {
    if (!answer_) return;
    auto answer = std::move(answer_);
    answer_ = nullptr;
    answer(std::move(a));
  }

 private:
  std::function<void(Answer)> answer_;
  Answer if_dropped_;
};

}  // namespace mavswitch
