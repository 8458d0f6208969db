// The window's method check: a method is allowed only as a whole name of the list. Found by
// http_api_fuzz: "" and "PU" were taken as parts of "GET, PUT".
#include <gtest/gtest.h>

#include "window/http_api.hpp"

using mavswitch::window::HttpRequest;
using mavswitch::window::method_refused;

namespace {

HttpRequest with(const char* method) {
  HttpRequest r;
  r.method = method;
  return r;
}

TEST(MethodRefused, only_a_whole_name_of_the_list_is_allowed) {
  EXPECT_FALSE(method_refused(with("GET"), "GET, PUT"));
  EXPECT_FALSE(method_refused(with("PUT"), "GET, PUT"));
  EXPECT_FALSE(method_refused(with("POST"), "POST"));
  for (const char* method : {"", "PU", "T", "GE", "GET,", "HEAD", "OS", "put"}) {
    const auto refused = method_refused(with(method), "GET, PUT");
    ASSERT_TRUE(refused) << '"' << method << '"';
    EXPECT_EQ(refused->status, 405);
    EXPECT_NE(refused->body.find("GET, PUT"), std::string::npos) << refused->body;
  }
}

}  // namespace
