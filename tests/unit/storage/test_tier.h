// Test helper for storage/ unit tests: data files written through a LocalTier.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "storage/local/local_tier.h"

namespace strata::storage::testing {

// A promoted data file on `tier` holding `body` (appended in 256 KiB pieces, as the PUT
// path appends); returns its id, or "" after failing the test.
inline std::string Promoted(LocalTier& tier, std::string_view body) {
  constexpr std::size_t kPiece = 256 * 1024;
  auto file = tier.CreateTemp();
  EXPECT_TRUE(file.ok()) << file.error().message;
  if (!file.ok()) {
    return "";
  }
  for (std::size_t pos = 0; pos < body.size(); pos += kPiece) {
    EXPECT_TRUE((*file)->Append(body.substr(pos, kPiece)).ok());
  }
  EXPECT_TRUE(tier.Promote(**file).ok());
  return (*file)->id();
}

}  // namespace strata::storage::testing
