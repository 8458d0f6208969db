// Well-formed UTF-8, as RFC 3629 defines it: no overlong forms, no surrogates, nothing past
// U+10FFFF. What a peer sends is shown as it is where it is such text (a STATUSTEXT in any
// language) and escaped where it is not (log lines, JSON), so that no reader chokes on it.
#pragma once

#include <cstddef>
#include <string_view>

namespace mavswitch::utf8 {

// The length of the well-formed sequence at text[i] (1 to 4), or 0 when none starts there.
inline size_t sequence_length(std::string_view text, size_t i) noexcept {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char u = at(0);
  if (u < 0x80) return 1;
  const size_t n = u >= 0xc2 && u <= 0xdf ? 2 : u >= 0xe0 && u <= 0xef ? 3 : u >= 0xf0 && u <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  // The second byte's range narrows for the first bytes that could start an overlong form, a
  // surrogate, or a code point past U+10FFFF.
  const unsigned char low = u == 0xe0 ? 0xa0 : u == 0xf0 ? 0x90 : 0x80;
  const unsigned char high = u == 0xed ? 0x9f : u == 0xf4 ? 0x8f : 0xbf;
  if (at(1) < low || at(1) > high) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((at(k) & 0xc0) != 0x80) return 0;
  return n;
}

}  // namespace mavswitch::utf8
