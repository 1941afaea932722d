// A POST Object form body (gateway/post_form.h) as it streams in: the first byte sets the
// size of the reads (1 to 256 bytes), the rest is the body of boundary "xYz".
//
// Properties: the reader never hands out more than it was given nor consumes past it;
// the file's bytes never exceed the body's; and the outcome (the fields, the file's
// bytes, or the error's code) is the same whatever the reads' size: read in one piece,
// the same body gives the same answer.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/post_form.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using strata::gateway::PostFormReader;

struct Outcome {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string file;
  bool ended = false;
  std::optional<strata::ErrorCode> error;
  bool operator==(const Outcome&) const = default;
};

Outcome Read(std::string_view body, std::size_t chunk) {
  PostFormReader reader("xYz");
  Outcome out;
  std::string buffer;
  std::size_t offset = 0;
  for (;;) {
    const bool at_end = offset == body.size();
    auto e = reader.Next(buffer, at_end);
    if (!e.ok()) {
      out.error = e.error().code;
      return out;
    }
    FUZZ_CHECK(e->consumed <= buffer.size(), body);
    if (e->kind == PostFormReader::Kind::kFileData) {
      FUZZ_CHECK(!e->data.empty() && e->data.size() <= e->consumed, body);
      FUZZ_CHECK(e->data.data() == buffer.data(), body);
      out.file += std::string(e->data);
      FUZZ_CHECK(out.file.size() <= body.size(), body);
    } else if (e->kind == PostFormReader::Kind::kField) {
      out.fields.emplace_back(e->name, e->value);
    } else if (e->kind == PostFormReader::Kind::kFileEnd) {
      out.ended = true;
      return out;
    } else if (e->kind == PostFormReader::Kind::kNeedMore && e->consumed == 0) {
      FUZZ_CHECK(!at_end, body);  // at the end the reader decides
      buffer.append(body.substr(offset, chunk));
      offset = std::min(body.size(), offset + chunk);
      continue;
    }
    buffer.erase(0, e->consumed);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  const std::size_t chunk = 1 + data[0];
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome streamed = Read(body, chunk);
  const Outcome whole = Read(body, body.size() + 1);
  FUZZ_CHECK(streamed == whole, body);
  return 0;
}
