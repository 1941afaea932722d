// S3's tag rules (object tags and bucket tags) and the x-amz-tagging header. Pure logic;
// thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::gateway {

inline constexpr std::size_t kMaxObjectTags = 10;
inline constexpr std::size_t kMaxBucketTags = 50;
inline constexpr std::size_t kMaxTagKeyChars = 128;
inline constexpr std::size_t kMaxTagValueChars = 256;

enum class TagOwner { kObject, kBucket };

// Checks a tag set against S3's rules: at most 10 tags on an object, 50 on a bucket
// (kTooManyTags, which S3 answers 400 BadRequest); keys of 1..128 and values of 0..256
// characters (Unicode code points) of valid UTF-8 from S3's set (letters, digits, spaces
// and _ . : / = + - @), no key starting with "aws:", no key twice (kInvalidTag).
Result<void> ValidateTags(const metadata::Tags& tags, TagOwner owner);

// The x-amz-tagging header of PutObject, CreateMultipartUpload and CopyObject: URL-query
// encoded "k1=v1&k2=v2" ('+' is a space; "k" alone has an empty value). Empty: no tags.
// kInvalidArgument for bad percent-encoding or a repeated key (as S3), then the rules of
// ValidateTags for an object.
Result<metadata::Tags> ParseTaggingHeader(std::string_view header);

}  // namespace strata::gateway
