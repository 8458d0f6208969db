#pragma once

// Identities made in a test with openssl: self-signed TLS certificates, NKeys (ed25519 keys as
// NATS writes them) and, for decentralised sign-in, an operator, an account and a user with
// their JWTs, as NATS' nsc tool would make them (Debian has no nsc).

#include <filesystem>
#include <optional>
#include <string>

namespace mavswitch::test {

struct Certificate {
  std::string key, cert;  // PEM files
};

// A self-signed certificate for 127.0.0.1 (its own CA). Empty when openssl cannot.
std::optional<Certificate> make_certificate(const std::filesystem::path& dir, const std::string& name);

struct NKeyPair {
  std::string pem;         // the private key's file, for openssl to sign with
  std::string public_key;  // "U...", "A...", "O..."
  std::string seed;        // "SU...", "SA...", "SO..."
};

// kind: 'U' user, 'A' account, 'O' operator. Empty when openssl cannot make the key.
std::optional<NKeyPair> make_nkey(const std::filesystem::path& dir, const std::string& name, char kind);

struct Decentralised {
  std::string server_conf;     // trusts the operator and preloads its one account
  std::string creds;           // a user of that account: JWT and seed, a .creds file
  std::string stranger_creds;  // a user of an account the operator never signed
};

// Made under `dir`; empty when openssl cannot.
std::optional<Decentralised> make_decentralised(const std::filesystem::path& dir);

}  // namespace mavswitch::test
