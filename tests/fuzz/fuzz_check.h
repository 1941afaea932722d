// What the harnesses assert besides "no crash": a property that fails prints the input's
// part it concerns and aborts, which libFuzzer reports as a crash and saves the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond, what)                                                                    \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      std::string_view fuzz_what_ = (what);                                                       \
      std::fprintf(stderr, "%s:%d: property failed: %s\n  on: %.*s\n", __FILE__, __LINE__, #cond, \
                   static_cast<int>(fuzz_what_.size()), fuzz_what_.data());                       \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)
