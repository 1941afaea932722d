#include "gateway/tags.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "common/text.h"

namespace strata::gateway {
namespace {

// ASCII characters S3's tag pattern [\p{L}\p{Z}\p{N}_.:/=+\-@] admits besides letters
// and digits.
bool AllowedAscii(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view(" _.:/=+-@").find(c) != std::string_view::npos;
}

// The number of code points of `s` when it is valid UTF-8 whose characters the tag
// pattern admits; nullopt otherwise. Non-ASCII code points count as letters (all but the
// C1 controls), which is what the pattern admits in practice.
std::optional<std::size_t> TagChars(std::string_view s) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++chars) {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) {
      if (!AllowedAscii(static_cast<char>(lead))) {
        return std::nullopt;
      }
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((lead & 0xe0) == 0xc0) {
      len = 2;
      cp = lead & 0x1f;
    } else if ((lead & 0xf0) == 0xe0) {
      len = 3;
      cp = lead & 0x0f;
    } else if ((lead & 0xf8) == 0xf0) {
      len = 4;
      cp = lead & 0x07;
    } else {
      return std::nullopt;
    }
    if (i + len > s.size()) {
      return std::nullopt;
    }
    for (std::size_t j = 1; j < len; ++j) {
      const auto cont = static_cast<unsigned char>(s[i + j]);
      if ((cont & 0xc0) != 0x80) {
        return std::nullopt;
      }
      cp = (cp << 6) | (cont & 0x3f);
    }
    // Overlong forms, surrogates, beyond Unicode, C1 controls.
    constexpr std::uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLength[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp < 0xa0) {
      return std::nullopt;
    }
    i += len;
  }
  return chars;
}

Error InvalidTag(std::string message) { return Error(ErrorCode::kInvalidTag, std::move(message)); }

}  // namespace

Result<void> ValidateTags(const metadata::Tags& tags, TagOwner owner) {
  if (owner == TagOwner::kObject && tags.size() > kMaxObjectTags) {
    return Error(ErrorCode::kTooManyTags, "Object tags cannot be greater than 10");
  }
  if (owner == TagOwner::kBucket && tags.size() > kMaxBucketTags) {
    return Error(ErrorCode::kTooManyTags, "Bucket tag count cannot be greater than 50");
  }
  std::set<std::string_view> keys;
  for (const auto& [key, value] : tags) {
    auto key_chars = TagChars(key);
    if (!key_chars || *key_chars == 0) {
      return InvalidTag("The TagKey you have provided is invalid");
    }
    if (*key_chars > kMaxTagKeyChars) {
      return InvalidTag("The TagKey you have provided is too long, max 128");
    }
    auto value_chars = TagChars(value);
    if (!value_chars) {
      return InvalidTag("The TagValue you have provided is invalid");
    }
    if (*value_chars > kMaxTagValueChars) {
      return InvalidTag("The TagValue you have provided is too long, max 256");
    }
    if (key.starts_with("aws:")) {
      return InvalidTag("Your TagKey cannot be prefixed with aws:");
    }
    if (!keys.insert(key).second) {
      return InvalidTag("Cannot provide multiple Tags with the same key");
    }
  }
  return Ok();
}

Result<metadata::Tags> ParseTaggingHeader(std::string_view header) {
  const Error malformed(ErrorCode::kInvalidArgument,
                        "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL "
                        "query parameters without tag name duplicates.");
  metadata::Tags tags;
  std::set<std::string> keys;
  while (!header.empty()) {
    const auto amp = header.find('&');
    std::string_view item = header.substr(0, amp);
    header = amp == std::string_view::npos ? std::string_view() : header.substr(amp + 1);
    if (item.empty()) {
      continue;
    }
    const auto eq = item.find('=');
    std::string key;
    std::string value;
    if (!PercentDecode(item.substr(0, eq), key, true) ||
        (eq != std::string_view::npos && !PercentDecode(item.substr(eq + 1), value, true))) {
      return malformed;
    }
    if (!keys.insert(key).second) {
      return malformed;
    }
    tags.emplace_back(std::move(key), std::move(value));
  }
  STRATA_RETURN_IF_ERROR(ValidateTags(tags, TagOwner::kObject));
  return tags;
}

}  // namespace strata::gateway
