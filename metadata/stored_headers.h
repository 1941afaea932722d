// The request headers S3 stores with an object and returns on GET and HEAD: user metadata
// (x-amz-meta-*) and a few standard headers. A version record keeps them
// (ObjectRecord::user_metadata, ::headers); the gateway reads them off a PUT, and storage
// off the upstream's HEAD when it caches an object it did not write.
#pragma once

#include <array>
#include <string_view>

namespace strata::metadata {

inline constexpr std::string_view kMetaPrefix = "x-amz-meta-";
inline constexpr std::array<std::string_view, 5> kStoredHeaders = {
    "cache-control", "content-disposition", "content-encoding", "content-language", "expires"};

}  // namespace strata::metadata
