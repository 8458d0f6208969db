#include "api/subscriber_index.hpp"

#include <algorithm>

namespace mavswitch::api_detail {

SubscriberIndex SubscriberIndex::with(std::shared_ptr<Subscriber> s) const {
  SubscriberIndex next = *this;
  next.buckets_[key_of(s->filter)].push_back(std::move(s));
  ++next.count_;
  return next;
}

SubscriberIndex SubscriberIndex::without(uint64_t id) const {
  SubscriberIndex next = *this;
  for (auto it = next.buckets_.begin(); it != next.buckets_.end();) {
    auto& list = it->second;
    const size_t before = list.size();
    std::erase_if(list, [&](const auto& s) { return s->id == id; });
    next.count_ -= before - list.size();
    it = list.empty() ? next.buckets_.erase(it) : std::next(it);
  }
  return next;
}

std::shared_ptr<Subscriber> SubscriberIndex::find(uint64_t id) const {
  for (const auto& [key, list] : buckets_) {
    for (const auto& s : list) {
      if (s->id == id) return s;
    }
  }
  return nullptr;
}

}  // namespace mavswitch::api_detail
