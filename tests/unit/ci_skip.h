// A test that needs what the machine may lack (io_uring, a second file system): locally it
// skips, with CI=true in the environment (.ci/run sets it) it fails, since CI's machine is
// set up to have it and a skip there would hide a broken setup as a green run.
//
//   STRATA_SKIP_OR_FAIL_IN_CI("io_uring is unavailable here");
//   STRATA_SKIP_OR_FAIL_IN_CI("cannot create " << dir << ": " << ec.message());
//
// Like GTEST_SKIP, it returns from the current function (a test body or SetUp).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace strata::test_env {

// CI=true (or 1, yes; any case).
inline bool InCi() {
  const char* v = std::getenv("CI");
  if (v == nullptr) {
    return false;
  }
  std::string_view s(v);
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::string value;
  for (char c : s) {
    value.push_back(lower(c));
  }
  return value == "true" || value == "1" || value == "yes";
}

}  // namespace strata::test_env

#define STRATA_SKIP_OR_FAIL_IN_CI(reason)                                                    \
  do {                                                                                       \
    if (::strata::test_env::InCi()) {                                                        \
      GTEST_FAIL() << reason                                                                 \
                   << " (CI=true: a missing requirement fails the test instead of skipping " \
                      "it; CI's machine must provide it)";                                   \
    } else {                                                                                 \
      GTEST_SKIP() << reason << " (with CI=true this fails)";                                \
    }                                                                                        \
  } while (false)
