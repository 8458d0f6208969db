#include "fabric/nats_credentials.hpp"

#include <nats/nats.h>

#include <stdexcept>

#include "base/file_read.hpp"
#include "fabric/nats_check.hpp"

namespace mavswitch::fabric {
namespace {

constexpr size_t kMaxKeyFile = 1 << 20;  // a .creds file, a seed, a certificate chain: a few KiB at most

// Every file through the same bounded reader: a FIFO or a device named by mistake is an error at
// start, never a hang.
std::string contents(const std::string& key, const std::string& path) {
  std::string error;
  auto text = read_regular_file(path, kMaxKeyFile, &error);
  if (!text) throw std::runtime_error(key + ": " + error);
  return std::move(*text);
}

}  // namespace

void set_credentials(natsOptions* options, const config::NatsSettings& settings) {
  if (!settings.user.empty())
    check(natsOptions_SetUserInfo(options, settings.user.c_str(), settings.password.c_str()), "User");
  if (!settings.token.empty()) check(natsOptions_SetToken(options, settings.token.c_str()), "Token");
  // libnats reads these two itself as it connects, and says so only once a server answers: they
  // are read here first, so a file that cannot be read is said now.
  if (!settings.credentials_file.empty()) {
    contents("CredentialsFile", settings.credentials_file);
    check(natsOptions_SetUserCredentialsFromFiles(options, settings.credentials_file.c_str(), nullptr),
          "CredentialsFile " + settings.credentials_file);
  }
  if (!settings.nkey_seed_file.empty()) {
    contents("NKeySeedFile", settings.nkey_seed_file);
    check(natsOptions_SetNKeyFromSeed(options, settings.nkey.c_str(), settings.nkey_seed_file.c_str()),
          "NKeySeedFile " + settings.nkey_seed_file);
  }
  // Certificates and keys go to libnats as text.
  if (!settings.ca_file.empty()) {
    check(natsOptions_SetSecure(options, true), "TLS");
    check(natsOptions_SetCATrustedCertificates(options, contents("CaFile", settings.ca_file).c_str()),
          "CaFile " + settings.ca_file);
  }
  if (!settings.certificate_file.empty()) {
    const std::string chain = contents("CertificateFile", settings.certificate_file);
    const std::string key = contents("KeyFile", settings.key_file);
    check(natsOptions_SetCertificatesChain(options, chain.c_str(), key.c_str()),
          "CertificateFile " + settings.certificate_file);
  }
}

}  // namespace mavswitch::fabric
