#include "config/key_file.hpp"

#include <openssl/evp.h>
#include <sys/stat.h>

#include <cctype>
#include <cstring>

#include "base/file_read.hpp"

namespace mavswitch::config {

bool read_private_file(const std::string& path, const char* what, size_t max, std::string* out, std::string* error) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    *error = path + ": " + what + " must not be readable by group or others (chmod 600 " + path + ")";
    return false;
  }
  const auto bytes = read_regular_file(path, max, error);
  if (!bytes) return false;
  *out = *bytes;
  return true;
}

bool read_key_file(const std::string& path, protocol::SigningKey* key, std::string* error) {
  constexpr size_t kMaxKeyFile = 4096;  // a key is 32 bytes, 64 in hex, 44 in base64
  std::string raw;
  if (!read_private_file(path, "a signing key", kMaxKeyFile, &raw, error)) return false;
  if (raw.size() == key->size()) {  // 32 raw bytes (not text that happens to be 32 long? text keys are 44 or 64)
    std::memcpy(key->data(), raw.data(), key->size());
    return true;
  }
  std::string text;
  for (char c : raw) {
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  }
  if (text.size() == 64 && text.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos) {
    for (size_t i = 0; i < 32; ++i) (*key)[i] = static_cast<uint8_t>(std::stoi(text.substr(2 * i, 2), nullptr, 16));
    return true;
  }
  if (text.size() == 44) {  // base64 of 32 bytes: 43 characters and one '='
    unsigned char decoded[33];
    const int n = EVP_DecodeBlock(decoded, reinterpret_cast<const unsigned char*>(text.data()), 44);
    if (n == 33 && text[43] == '=') {
      std::memcpy(key->data(), decoded, 32);
      return true;
    }
  }
  *error = path + ": not a 32-byte key (64 hex digits, base64, or 32 raw bytes)";
  return false;
}

}  // namespace mavswitch::config
