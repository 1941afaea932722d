// The multipart/form-data body of a browser's POST Object upload (RFC 7578), read as it
// streams: the form's fields one by one, then the file's bytes in the spans the caller's
// buffer holds, never the whole file in memory. Pure logic; one reader per request.
//
// The caller keeps a buffer of the body's bytes not yet consumed, and calls Next with it
// after each read; Next says how many bytes it consumed and what it found. File bytes are
// handed out as views into the caller's buffer (valid until the caller moves or refills
// it), up to the last bytes that might begin the closing boundary, which wait for more
// input. S3's rules: the fields before the file are limited in size (kMaxPreData), the
// file is the part named "file", and what comes after it is ignored.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"

namespace strata::gateway {

// S3's limit on the form fields before the file (MaxPostPreDataLengthExceededError).
inline constexpr std::size_t kMaxPreData = 20 * 1024;
// At most this many fields before the file.
inline constexpr std::size_t kMaxFormFields = 100;

// The boundary of `content_type` ("multipart/form-data; boundary=..."; quoted or not), or
// nullopt when it is another type or has no usable boundary (1 to 70 characters).
std::optional<std::string> FormBoundary(std::string_view content_type);

class PostFormReader {
 public:
  explicit PostFormReader(std::string boundary);

  enum class Kind {
    // Nothing more to report from this input: drop `consumed` bytes (the form's framing
    // may have been read), call again, and read more first when nothing was consumed.
    kNeedMore,
    kField,      // a field before the file: name and value
    kFileStart,  // the file's part begins: file_name, content_type
    kFileData,   // a run of the file's bytes: data (a view into the input)
    kFileEnd,    // the file is complete; nothing after it is read
  };
  struct Event {
    Kind kind = Kind::kNeedMore;
    std::size_t consumed = 0;  // input bytes used, to drop from the caller's buffer
    std::string name;          // kField
    std::string value;         // kField
    std::string file_name;     // kFileStart: the part's filename, as sent
    std::string content_type;  // kFileStart: the part's Content-Type, or empty
    std::string_view data;     // kFileData
  };

  // The next event from `input` (the body's unconsumed bytes). `at_end`: no more bytes
  // will come. Errors, as S3 answers them: kInvalidArgument for a body that is not a form
  // of this boundary, or a part without a name; kMaxPostPreDataLengthExceeded past
  // kMaxPreData before the file; kIncorrectNumberOfFilesInPostRequest when the form ends
  // without a file part; kIncompleteBody when the body ends inside the file. After
  // kFileEnd every call answers kFileEnd.
  Result<Event> Next(std::string_view input, bool at_end);

  // The most input Next may need at once to make progress: a part's header, the
  // pre-data limit and a boundary. A caller's buffer of this size always suffices.
  static constexpr std::size_t kMaxLookahead = kMaxPreData + 8 * 1024;

 private:
  enum class State { kPreamble, kPartHeader, kFieldValue, kFileData, kDone };
  Result<Event> PartHeader(std::string_view input, bool at_end);
  Result<Event> FieldValue(std::string_view input, bool at_end);
  Result<Event> FileData(std::string_view input, bool at_end);

  std::string delimiter_;  // "\r\n--" + boundary
  State state_ = State::kPreamble;
  std::string field_name_;
  std::size_t pre_data_ = 0;  // field bytes seen before the file
  std::size_t fields_ = 0;
};

}  // namespace strata::gateway
