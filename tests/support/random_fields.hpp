// Fills a typed message with random values through its visit(): used by the round-trip tests
// and the interop encoder. Sparse mode leaves most fields zero, for long v2 zero-truncation.
#pragma once

#include <array>
#include <random>
#include <string_view>
#include <type_traits>

namespace mavswitch::test {

struct RandomFields {
  std::mt19937_64& rng;
  bool sparse = false;

  template <class T>
  T one() {
    if (sparse && rng() % 3 != 0) return T{};
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
    } else if constexpr (std::is_same_v<T, char>) {
      return static_cast<char>('!' + rng() % 94);  // printable, so strings compare as text
    } else {
      return static_cast<T>(rng());
    }
  }
  template <class T>
  void operator()(std::string_view, T& v) {
    v = one<T>();
  }
  template <class T, size_t N>
  void operator()(std::string_view, std::array<T, N>& a) {
    for (auto& v : a) v = one<T>();
    if constexpr (std::is_same_v<T, char>) {  // strings usually end early
      for (auto i = static_cast<size_t>(rng() % (N + 1)); i < N; ++i) a[i] = 0;
    }
  }
};

}  // namespace mavswitch::test
