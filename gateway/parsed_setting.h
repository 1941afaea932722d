// A bucket setting the record keeps as text (a policy's JSON, a CORS document), parsed
// once per thread and change of the text, so that the request path pays a lookup and,
// while the record comes from metadata's record cache, a pointer comparison (the text is
// shared, common/shared_text.h), not a parse. Private to gateway/ (bucket_access.cc,
// bucket_cors.cc).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/ids.h"
#include "common/log.h"
#include "common/shared_text.h"

namespace strata::gateway {

// Bounds a thread's cache of one setting; past it the map starts over (a few parses,
// then warm again).
inline constexpr std::size_t kMaxParsedSettings = 4096;

// The parsed `text` of `bucket`'s setting (`what`, for the log), or nullptr when the text
// is empty. `parse(text, bucket)` returns a Result<T>; a text that does not parse (one
// written by a later build: every write checked it) is logged once and gives nullptr.
template <class T, class Parse>
std::shared_ptr<const T> ParsedSetting(const BucketName& bucket, const SharedText& text,
                                       std::string_view what, Parse&& parse) {
  struct Entry {
    SharedText text;
    std::shared_ptr<const T> value;  // null: the text did not parse
  };
  if (text.empty()) {
    return nullptr;
  }
  thread_local std::unordered_map<std::string, Entry> cache;
  auto it = cache.find(bucket.str());
  if (it != cache.end() && it->second.text.SharesWith(text)) {
    return it->second.value;
  }
  if (it != cache.end() && it->second.text.view() == text.view()) {
    it->second.text = text;  // the same text read again: the next request compares pointers
    return it->second.value;
  }
  if (it == cache.end() && cache.size() >= kMaxParsedSettings) {
    cache.clear();
  }
  auto parsed = parse(text.str(), bucket.view());
  std::shared_ptr<const T> value;
  if (parsed.ok()) {
    value = std::make_shared<const T>(std::move(parsed).value());
  } else {
    spdlog::error("bucket {}: its stored {} does not parse ({}); it allows nothing", bucket.str(),
                  what, parsed.error().message);
  }
  cache[bucket.str()] = Entry{text, value};
  return value;
}

}  // namespace strata::gateway
