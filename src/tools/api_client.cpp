#include "tools/api_client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

namespace mavswitch::tools {
namespace {

struct Where {
  std::string host;
  int port = 80;
  bool tls = false;
};

bool parse_url(const std::string& url, Where* w, std::string* error) {
  std::string rest = url;
  if (rest.rfind("https://", 0) == 0) {
    w->tls = true;
    w->port = 443;
    rest = rest.substr(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest = rest.substr(7);
  }
  rest = rest.substr(0, rest.find('/'));
  size_t colon = rest.rfind(':');
  if (!rest.empty() && rest[0] == '[') {  // [::1]:8080
    const size_t close = rest.find(']');
    if (close == std::string::npos) {
      *error = url + ": an IPv6 address ends with ']'";
      return false;
    }
    w->host = rest.substr(1, close - 1);
    colon = rest.find(':', close);
  } else {
    w->host = rest.substr(0, colon);
  }
  if (colon != std::string::npos) w->port = std::atoi(rest.c_str() + colon + 1);
  if (w->host.empty() || w->port <= 0 || w->port > 65535) {
    *error = url + ": not a URL as http://HOST:PORT";
    return false;
  }
  return true;
}

}  // namespace

ApiReply api_call(const ApiTarget& target, const std::string& method, const std::string& path,
                  const std::string& body) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  ApiReply reply;
  Where w;
  if (!parse_url(target.url, &w, &reply.error)) return reply;
  const bool v6 = w.host.find(':') != std::string::npos;
  const std::string url =
      fmt::format("{}://{}:{}{}", w.tls ? "https" : "http", v6 ? "[" + w.host + "]" : w.host, w.port, path);
  const std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    reply.error = "libcurl could not start a request";
    return reply;
  }
  curl_slist* headers = nullptr;
  const std::string bearer = "Authorization: Bearer " + target.token;
  if (!target.token.empty()) headers = curl_slist_append(headers, bearer.c_str());
  headers = curl_slist_append(headers, "Expect:");  // the body goes with the request, not after a 100
  const std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(headers, curl_slist_free_all);
  CURL* c = curl.get();
  char error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5'000L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, target.timeout_ms);
  // Always verified: a token must not go to whoever answers.
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(c, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2);
  if (!target.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, target.ca_file.c_str());
  if (!body.empty() || method == "POST" || method == "PUT") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(
      c, CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t n, void* out) {
        static_cast<std::string*>(out)->append(data, size * n);
        return size * n;
      });
  if (const CURLcode code = curl_easy_perform(c); code != CURLE_OK) {
    reply.error =
        "cannot reach the router at " + target.url + ": " + (error[0] != 0 ? error : curl_easy_strerror(code));
    reply.body.clear();
    return reply;
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  reply.status = static_cast<int>(status);
  return reply;
}

bool read_token(const std::string& file, std::string* token, std::string* error) {
  std::string path = file;
  if (path.empty()) {
    const char* env = std::getenv("MAVSWITCH_TOKEN_FILE");
    if (env == nullptr) return true;
    path = env;
  }
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot read the token file";
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  *token = text.str();
  while (!token->empty() && (token->back() == '\n' || token->back() == '\r' || token->back() == ' ')) token->pop_back();
  return true;
}

}  // namespace mavswitch::tools
