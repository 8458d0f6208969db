#include "library/subscriber_index.hpp"

#include <algorithm>
#include <bit>

namespace mavswitch::library_detail {

SubscriberIndex SubscriberIndex::built_from(std::vector<std::shared_ptr<Subscriber>> all) {
  SubscriberIndex next;
  next.all_ = std::move(all);
  if (next.all_.empty()) return next;
  std::vector<std::shared_ptr<Subscriber>> by_key = next.all_;
  std::stable_sort(by_key.begin(), by_key.end(),
                   [](const auto& a, const auto& b) { return key_of(a->filter) < key_of(b->filter); });
  const size_t capacity = std::bit_ceil(2 * by_key.size());
  next.table_.assign(capacity, Bucket{});
  next.shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
  for (size_t i = 0; i < by_key.size();) {
    const uint64_t key = key_of(by_key[i]->filter);
    size_t end = i;
    while (end < by_key.size() && key_of(by_key[end]->filter) == key) next.ordered_.push_back(by_key[end++].get());
    size_t slot = next.slot_of(key);
    while (next.table_[slot].key != kEmpty) slot = (slot + 1) & (capacity - 1);
    next.table_[slot] = {key, static_cast<uint32_t>(i), static_cast<uint32_t>(end)};
    next.kinds_ |= 1u << kind_of(key);
    const uint32_t msgid = static_cast<uint32_t>(key & 0xFFFFFFFFu);
    if (msgid != kAllMessages) next.ids_[(msgid >> 6) & (kIdWords - 1)] |= uint64_t{1} << (msgid & 63);
    i = end;
  }
  return next;
}

SubscriberIndex SubscriberIndex::with(std::shared_ptr<Subscriber> s) const {
  auto all = all_;
  all.push_back(std::move(s));
  return built_from(std::move(all));
}

SubscriberIndex SubscriberIndex::without(uint64_t id) const {
  auto all = all_;
  std::erase_if(all, [&](const auto& s) { return s->id == id; });
  return built_from(std::move(all));
}

std::shared_ptr<Subscriber> SubscriberIndex::find(uint64_t id) const {
  for (const auto& s : all_) {
    if (s->id == id) return s;
  }
  return nullptr;
}

}  // namespace mavswitch::library_detail
