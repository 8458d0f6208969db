#include "e2e/nats_identities.hpp"

#include <chrono>
#include <fstream>
#include <string_view>
#include <vector>

#include "support/test_support.hpp"

namespace mavswitch::test {

namespace {

using Bytes = std::vector<uint8_t>;

void write_text(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

// Writes `bytes` as digits of `bits` bits each from `alphabet`, the last one padded with zero
// bits, no '=' after: NKeys' base32 and JWTs' base64url both.
std::string digits(const std::string_view bytes, int bits, const char* alphabet) {
  std::string out;
  uint32_t pending = 0;
  int have = 0;
  for (const char c : bytes) {
    pending = pending << 8 | static_cast<uint8_t>(c);
    for (have += 8; have >= bits; have -= bits) out += alphabet[(pending >> (have - bits)) & ((1u << bits) - 1)];
  }
  if (have > 0) out += alphabet[(pending << (bits - have)) & ((1u << bits) - 1)];
  return out;
}

std::string base64url(std::string_view text) {
  return digits(text, 6, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
}

// NKeys are base32 of a prefix, the key and a CRC-16/XMODEM, little-endian.
std::string nkey_text(Bytes raw) {
  uint16_t crc = 0;
  for (const uint8_t b : raw) {
    crc ^= static_cast<uint16_t>(b << 8);
    for (int i = 0; i < 8; ++i) crc = static_cast<uint16_t>(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  raw.push_back(static_cast<uint8_t>(crc & 0xFF));
  raw.push_back(static_cast<uint8_t>(crc >> 8));
  return digits({reinterpret_cast<const char*>(raw.data()), raw.size()}, 5, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");
}

// A JWT of `claims` (JSON) signed by `signer`, as NATS' servers check them ("ed25519-nkey").
std::optional<std::string> jwt(const NKeyPair& signer, const std::string& claims, const std::filesystem::path& dir) {
  const std::string signed_part = base64url(R"({"typ":"JWT","alg":"ed25519-nkey"})") + "." + base64url(claims);
  const std::filesystem::path data = dir / "jwt.data", signature = dir / "jwt.sig";
  write_text(data, signed_part);
  std::string out;
  if (run_command("openssl pkeyutl -sign -rawin -inkey " + signer.pem + " -in " + data.string() + " -out " +
                      signature.string() + " 2>&1",
                  &out) != 0)
    return std::nullopt;
  const Bytes sig = read_bytes(signature);
  return signed_part + "." + base64url(std::string(sig.begin(), sig.end()));
}

std::string claims(const std::string& issuer, const std::string& subject, const std::string& name,
                   const std::string& nats) {
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return R"({"jti":")" + name + R"(","iat":)" + std::to_string(now) + R"(,"iss":")" + issuer + R"(","name":")" + name +
         R"(","sub":")" + subject + R"(","nats":)" + nats + "}";
}

constexpr const char* kAccount =
    R"({"type":"account","version":2,"limits":{"subs":-1,"data":-1,"payload":-1,"imports":-1,)"
    R"("exports":-1,"wildcards":true,"conn":-1,"leaf":-1}})";
constexpr const char* kUser = R"({"type":"user","version":2,"pub":{},"sub":{},"subs":-1,"data":-1,"payload":-1})";

std::string creds_text(const std::string& user_jwt, const std::string& seed) {
  return "-----BEGIN NATS USER JWT-----\n" + user_jwt + "\n------END NATS USER JWT------\n\n" +
         "-----BEGIN USER NKEY SEED-----\n" + seed + "\n------END USER NKEY SEED------\n";
}

}  // namespace

std::optional<Certificate> make_certificate(const std::filesystem::path& dir, const std::string& name) {
  Certificate c{(dir / (name + ".key")).string(), (dir / (name + ".pem")).string()};
  std::string out;
  if (run_command("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext "
                  "subjectAltName=IP:127.0.0.1 -keyout " +
                      c.key + " -out " + c.cert + " 2>&1",
                  &out) != 0)
    return std::nullopt;
  return c;
}

std::optional<NKeyPair> make_nkey(const std::filesystem::path& dir, const std::string& name, char kind) {
  const std::string pem = (dir / (name + ".pem")).string(), priv = (dir / (name + ".der")).string(),
                    pub = (dir / (name + ".pub.der")).string();
  std::string out;
  if (run_command("openssl genpkey -algorithm ed25519 -out " + pem + " && openssl pkey -in " + pem +
                      " -outform DER -out " + priv + " && openssl pkey -in " + pem + " -pubout -outform DER -out " +
                      pub + " 2>&1",
                  &out) != 0)
    return std::nullopt;
  const Bytes der_priv = read_bytes(priv), der_pub = read_bytes(pub);
  if (der_priv.size() != 48 || der_pub.size() != 44) return std::nullopt;
  // nkeys' prefix bytes: the kind's letter, and for a seed 'S' before it.
  const uint8_t prefix = kind == 'O' ? 14 << 3 : kind == 'A' ? 0 : 20 << 3;
  constexpr uint8_t kSeed = 18 << 3;
  Bytes seed{static_cast<uint8_t>(kSeed | prefix >> 5), static_cast<uint8_t>((prefix & 31) << 3)};
  seed.insert(seed.end(), der_priv.end() - 32, der_priv.end());
  Bytes key{prefix};
  key.insert(key.end(), der_pub.end() - 32, der_pub.end());
  return NKeyPair{pem, nkey_text(key), nkey_text(seed)};
}

std::optional<Decentralised> make_decentralised(const std::filesystem::path& dir) {
  const auto op = make_nkey(dir, "operator", 'O'), account = make_nkey(dir, "account", 'A'),
             stranger_account = make_nkey(dir, "stranger-account", 'A'), user = make_nkey(dir, "user", 'U'),
             stranger = make_nkey(dir, "stranger", 'U');
  if (!op || !account || !stranger_account || !user || !stranger) return std::nullopt;
  const auto op_jwt =
      jwt(*op, claims(op->public_key, op->public_key, "operator", R"({"type":"operator","version":2})"), dir);
  const auto account_jwt = jwt(*op, claims(op->public_key, account->public_key, "fleet", kAccount), dir);
  const auto user_jwt = jwt(*account, claims(account->public_key, user->public_key, "router", kUser), dir);
  const auto stranger_jwt =
      jwt(*stranger_account, claims(stranger_account->public_key, stranger->public_key, "stranger", kUser), dir);
  if (!op_jwt || !account_jwt || !user_jwt || !stranger_jwt) return std::nullopt;
  Decentralised d{(dir / "operator-mode.conf").string(), (dir / "router.creds").string(),
                  (dir / "stranger.creds").string()};
  write_text(dir / "operator.jwt", *op_jwt);
  write_text(d.server_conf, "operator: \"" + (dir / "operator.jwt").string() + "\"\nresolver: MEMORY\n" +
                                "resolver_preload: { " + account->public_key + ": \"" + *account_jwt + "\" }\n");
  write_text(d.creds, creds_text(*user_jwt, user->seed));
  write_text(d.stranger_creds, creds_text(*stranger_jwt, stranger->seed));
  return d;
}

}  // namespace mavswitch::test
