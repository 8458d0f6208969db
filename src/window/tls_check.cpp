#include "window/tls_check.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <memory>
#include <stdexcept>

#include "base/file_read.hpp"

namespace mavswitch::window {
namespace {

constexpr size_t kMaxPem = 1 << 20;  // a certificate chain and its key are a few KiB

std::string tls_error(const std::string& fallback) {
  std::string text;
  for (unsigned long e; (e = ERR_get_error()) != 0;) {
    char line[256];
    ERR_error_string_n(e, line, sizeof line);
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text.empty() ? fallback : text;
}

}  // namespace

void check_certificate(const std::string& pem) {
  std::string error;
  const auto text = read_regular_file(pem, kMaxPem, &error);
  if (!text) throw std::runtime_error("Certificate: " + error);
  const auto fail = [&] {
    return std::runtime_error("Certificate: " + pem + ": " + tls_error("no certificate and key in it"));
  };
  const std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_mem_buf(text->data(), int(text->size())), BIO_free);
  const std::unique_ptr<X509, decltype(&X509_free)> leaf(
      in ? PEM_read_bio_X509_AUX(in.get(), nullptr, nullptr, nullptr) : nullptr, X509_free);
  if (!leaf) throw fail();
  ERR_clear_error();
  BIO_reset(in.get());
  const std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  if (!key || X509_check_private_key(leaf.get(), key.get()) != 1) throw fail();
}

}  // namespace mavswitch::window
