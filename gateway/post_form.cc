#include "gateway/post_form.h"

#include <boost/beast/core/string.hpp>

#include "common/text.h"

namespace strata::gateway {
namespace {

// A part's header section: a few lines (Content-Disposition, Content-Type).
constexpr std::size_t kMaxPartHeader = 8 * 1024;

std::string Unquoted(std::string_view s) {
  s = TrimBlanks(s);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
    s = s.substr(1, s.size() - 2);
  }
  return std::string(s);
}

Error NotAForm(std::string why) {
  return Error(ErrorCode::kInvalidArgument, "POST requires a multipart/form-data body: " + why);
}

struct PartHeaders {
  std::optional<std::string> name;
  std::optional<std::string> file_name;
  std::string content_type;
};

// The lines of a part's header section (without the blank line that ends it).
Result<PartHeaders> ParsePartHeaders(std::string_view section) {
  PartHeaders out;
  bool disposition = false;
  while (!section.empty()) {
    const auto eol = section.find("\r\n");
    std::string_view line = section.substr(0, eol);
    section = eol == std::string_view::npos ? std::string_view() : section.substr(eol + 2);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      return NotAForm("a part's header line has no ':'");
    }
    const std::string_view field = TrimBlanks(line.substr(0, colon));
    std::string_view value = TrimBlanks(line.substr(colon + 1));
    if (boost::beast::iequals(field, "content-type")) {
      out.content_type = std::string(value);
      continue;
    }
    if (!boost::beast::iequals(field, "content-disposition")) {
      continue;  // other part headers say nothing S3 reads
    }
    disposition = true;
    const auto semi = value.find(';');
    if (!boost::beast::iequals(TrimBlanks(value.substr(0, semi)), "form-data")) {
      return NotAForm("a part is not form-data");
    }
    value = semi == std::string_view::npos ? std::string_view() : value.substr(semi + 1);
    while (!value.empty()) {
      const auto next = value.find(';');
      const std::string_view param = TrimBlanks(value.substr(0, next));
      value = next == std::string_view::npos ? std::string_view() : value.substr(next + 1);
      const auto eq = param.find('=');
      if (eq == std::string_view::npos) {
        continue;
      }
      const std::string_view key = TrimBlanks(param.substr(0, eq));
      if (boost::beast::iequals(key, "name")) {
        out.name = Unquoted(param.substr(eq + 1));
      } else if (boost::beast::iequals(key, "filename")) {
        out.file_name = Unquoted(param.substr(eq + 1));
      }
    }
  }
  if (!disposition || !out.name || out.name->empty()) {
    return NotAForm("a part without a name");
  }
  return out;
}

}  // namespace

std::optional<std::string> FormBoundary(std::string_view content_type) {
  const auto semi = content_type.find(';');
  if (!boost::beast::iequals(TrimBlanks(content_type.substr(0, semi)), "multipart/form-data") ||
      semi == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view params = content_type.substr(semi + 1);
  while (!params.empty()) {
    const auto next = params.find(';');
    const std::string_view param = TrimBlanks(params.substr(0, next));
    params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
    const auto eq = param.find('=');
    if (eq != std::string_view::npos &&
        boost::beast::iequals(TrimBlanks(param.substr(0, eq)), "boundary")) {
      std::string boundary = Unquoted(param.substr(eq + 1));
      // RFC 2046: 1 to 70 characters, none of them a control character.
      if (boundary.empty() || boundary.size() > 70) {
        return std::nullopt;
      }
      for (char c : boundary) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          return std::nullopt;
        }
      }
      return boundary;
    }
  }
  return std::nullopt;
}

PostFormReader::PostFormReader(std::string boundary) : delimiter_("\r\n--" + boundary) {}

Result<PostFormReader::Event> PostFormReader::Next(std::string_view input, bool at_end) {
  switch (state_) {
    case State::kPreamble: {
      // The body opens with the first delimiter (its CRLF is optional there).
      const std::string_view first = std::string_view(delimiter_).substr(2);
      if (input.size() < first.size() + 2) {
        if (at_end) {
          return NotAForm("the body ends before its first boundary");
        }
        return Event{};
      }
      if (!input.starts_with(first) || input.substr(first.size(), 2) != "\r\n") {
        return NotAForm("the body does not open with its boundary");
      }
      state_ = State::kPartHeader;
      pre_data_ += first.size() + 2;
      Event step;
      step.consumed = first.size() + 2;
      return step;
    }
    case State::kPartHeader:
      return PartHeader(input, at_end);
    case State::kFieldValue:
      return FieldValue(input, at_end);
    case State::kFileData:
      return FileData(input, at_end);
    case State::kDone:
      break;
  }
  Event done;
  done.kind = Kind::kFileEnd;
  return done;
}

Result<PostFormReader::Event> PostFormReader::PartHeader(std::string_view input, bool at_end) {
  // The limits are on positions, not on what has arrived, so that any split of the body
  // into reads gives the same answer.
  const auto end = input.find("\r\n\r\n");
  if ((end == std::string_view::npos && input.size() >= kMaxPartHeader + 4) ||
      (end != std::string_view::npos && end > kMaxPartHeader)) {
    return NotAForm("a part's header is too long");
  }
  if (end == std::string_view::npos) {
    if (at_end) {
      return NotAForm("the body ends inside a part's header");
    }
    return Event{};
  }
  auto parsed = ParsePartHeaders(input.substr(0, end));
  if (!parsed.ok()) {
    return std::move(parsed).error();
  }
  PartHeaders& headers = *parsed;
  Event e;
  e.consumed = end + 4;
  if (*headers.name == "file") {
    state_ = State::kFileData;
    e.kind = Kind::kFileStart;
    e.file_name = headers.file_name.value_or("");
    e.content_type = std::move(headers.content_type);
    return e;
  }
  pre_data_ += e.consumed;
  if (pre_data_ > kMaxPreData) {
    return Error(ErrorCode::kMaxPostPreDataLengthExceeded,
                 "Your POST request fields preceding the upload file were too large.");
  }
  if (++fields_ > kMaxFormFields) {
    return NotAForm("too many fields");
  }
  field_name_ = std::move(*headers.name);
  state_ = State::kFieldValue;
  return e;
}

Result<PostFormReader::Event> PostFormReader::FieldValue(std::string_view input, bool at_end) {
  const auto pos = input.find(delimiter_);
  const std::size_t room = kMaxPreData - std::min(pre_data_, kMaxPreData);
  if (pos == std::string_view::npos || input.size() < pos + delimiter_.size() + 2) {
    if (pos == std::string_view::npos && input.size() > room + delimiter_.size()) {
      return Error(ErrorCode::kMaxPostPreDataLengthExceeded,
                   "Your POST request fields preceding the upload file were too large.");
    }
    if (at_end) {
      return Error(ErrorCode::kIncorrectNumberOfFilesInPostRequest,
                   "POST requires exactly one file upload per request.");
    }
    return Event{};
  }
  if (pos > room) {
    return Error(ErrorCode::kMaxPostPreDataLengthExceeded,
                 "Your POST request fields preceding the upload file were too large.");
  }
  const std::string_view after = input.substr(pos + delimiter_.size(), 2);
  if (after == "--") {
    // The form ends without a file.
    return Error(ErrorCode::kIncorrectNumberOfFilesInPostRequest,
                 "POST requires exactly one file upload per request.");
  }
  if (after != "\r\n") {
    return NotAForm("a boundary is not followed by a line end");
  }
  Event e;
  e.kind = Kind::kField;
  e.name = std::move(field_name_);
  e.value = std::string(input.substr(0, pos));
  e.consumed = pos + delimiter_.size() + 2;
  pre_data_ += e.consumed;
  state_ = State::kPartHeader;
  return e;
}

Result<PostFormReader::Event> PostFormReader::FileData(std::string_view input, bool at_end) {
  const auto pos = input.find(delimiter_);
  Event e;
  if (pos == 0) {
    // S3 reads nothing after the file: the rest of the body is the caller's to drain.
    state_ = State::kDone;
    e.kind = Kind::kFileEnd;
    e.consumed = delimiter_.size();
    return e;
  }
  std::size_t safe = pos;
  if (pos == std::string_view::npos) {
    // The tail might be the start of the delimiter: it waits for more input.
    safe = input.size() >= delimiter_.size() ? input.size() - (delimiter_.size() - 1) : 0;
    if (safe == 0) {
      if (at_end) {
        return Error(ErrorCode::kIncompleteBody, "the body ends inside the file");
      }
      return e;
    }
  }
  e.kind = Kind::kFileData;
  e.data = input.substr(0, safe);
  e.consumed = safe;
  return e;
}

}  // namespace strata::gateway
