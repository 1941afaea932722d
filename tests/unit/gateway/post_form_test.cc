#include "gateway/post_form.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::gateway {
namespace {

constexpr const char* kBoundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW";

std::string Part(const std::string& name, const std::string& value) {
  return std::string("--") + kBoundary + "\r\nContent-Disposition: form-data; name=\"" + name +
         "\"\r\n\r\n" + value + "\r\n";
}

std::string Form(const std::vector<std::pair<std::string, std::string>>& fields,
                 const std::string& file, const std::string& tail = "") {
  std::string body;
  for (const auto& [name, value] : fields) {
    body += Part(name, value);
  }
  body += std::string("--") + kBoundary +
          "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cat.jpg\"\r\n"
          "Content-Type: image/jpeg\r\n\r\n" +
          file + "\r\n--" + kBoundary + "--\r\n" + tail;
  return body;
}

struct Outcome {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string file_name;
  std::string content_type;
  std::string file;
  bool file_ended = false;
  std::optional<ErrorCode> error;
};

// Drives a reader as the handler does: reads `chunk` bytes at a time into a buffer of
// the unconsumed bytes.
Outcome Read(const std::string& body, std::size_t chunk) {
  PostFormReader reader(kBoundary);
  Outcome out;
  std::string buffer;
  std::size_t offset = 0;
  for (int guard = 0; guard < 1'000'000; ++guard) {
    const bool at_end = offset == body.size();
    auto e = reader.Next(buffer, at_end);
    if (!e.ok()) {
      out.error = e.error().code;
      return out;
    }
    switch (e->kind) {
      case PostFormReader::Kind::kNeedMore:
        if (e->consumed == 0) {
          if (at_end) {
            ADD_FAILURE() << "no progress at the end";
            return out;
          }
          buffer += body.substr(offset, chunk);
          offset = std::min(body.size(), offset + chunk);
        }
        break;
      case PostFormReader::Kind::kField:
        out.fields.emplace_back(e->name, e->value);
        break;
      case PostFormReader::Kind::kFileStart:
        out.file_name = e->file_name;
        out.content_type = e->content_type;
        break;
      case PostFormReader::Kind::kFileData:
        EXPECT_FALSE(e->data.empty());
        out.file += std::string(e->data);  // a view into `buffer`: before the erase
        break;
      case PostFormReader::Kind::kFileEnd:
        out.file_ended = true;
        return out;
    }
    buffer.erase(0, e->consumed);
  }
  ADD_FAILURE() << "no end";
  return out;
}

TEST(PostForm, FieldsThenTheFileInAnyChunking) {
  std::string file;
  for (int i = 0; i < 5000; ++i) {
    file += static_cast<char>(i * 7);
  }
  file += "\r\n--" + std::string(kBoundary).substr(0, 10);  // a near-boundary inside the file
  const std::string body = Form({{"key", "uploads/${filename}"},
                                 {"x-amz-meta-owner", "bob"},
                                 {"policy", "eyJleHBpcmF0aW9uIjoi"},
                                 {"empty", ""}},
                                file, "ignored trailing garbage");
  for (std::size_t chunk : {1u, 2u, 7u, 64u, 1000u, 100000u}) {
    auto out = Read(body, chunk);
    ASSERT_FALSE(out.error) << chunk;
    EXPECT_TRUE(out.file_ended);
    EXPECT_EQ(out.fields,
              (std::vector<std::pair<std::string, std::string>>{{"key", "uploads/${filename}"},
                                                                {"x-amz-meta-owner", "bob"},
                                                                {"policy", "eyJleHBpcmF0aW9uIjoi"},
                                                                {"empty", ""}}))
        << chunk;
    EXPECT_EQ(out.file_name, "cat.jpg");
    EXPECT_EQ(out.content_type, "image/jpeg");
    EXPECT_EQ(out.file, file) << chunk;
  }
}

TEST(PostForm, AnEmptyFile) {
  auto out = Read(Form({{"key", "k"}}, ""), 3);
  ASSERT_FALSE(out.error);
  EXPECT_TRUE(out.file_ended);
  EXPECT_TRUE(out.file.empty());
}

TEST(PostForm, Boundaries) {
  EXPECT_EQ(FormBoundary("multipart/form-data; boundary=abc"), "abc");
  EXPECT_EQ(FormBoundary("Multipart/Form-Data;boundary=\"a b:c\""), "a b:c");
  EXPECT_EQ(FormBoundary("multipart/form-data; charset=utf-8; boundary=x"), "x");
  EXPECT_FALSE(FormBoundary("multipart/form-data"));
  EXPECT_FALSE(FormBoundary("multipart/mixed; boundary=abc"));
  EXPECT_FALSE(FormBoundary("multipart/form-data; boundary="));
  EXPECT_FALSE(FormBoundary("multipart/form-data; boundary=" + std::string(71, 'b')));
  EXPECT_FALSE(FormBoundary("multipart/form-data; boundary=a\x01z"));
}

TEST(PostForm, RefusesWhatS3Refuses) {
  // No file part.
  std::string no_file = Part("key", "k") + "--" + kBoundary + "--\r\n";
  EXPECT_EQ(Read(no_file, 5).error, ErrorCode::kIncorrectNumberOfFilesInPostRequest);
  // Cut inside the file.
  std::string cut = Form({{"key", "k"}}, std::string(1000, 'x'));
  cut.resize(cut.size() - 60);
  EXPECT_EQ(Read(cut, 17).error, ErrorCode::kIncompleteBody);
  // Not a form of this boundary.
  EXPECT_EQ(Read("--other\r\n", 4).error, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Read("", 4).error, ErrorCode::kInvalidArgument);
  // A part without a name.
  std::string nameless = std::string("--") + kBoundary +
                         "\r\nContent-Disposition: form-data\r\n\r\nv\r\n--" + kBoundary + "--";
  EXPECT_EQ(Read(nameless, 8).error, ErrorCode::kInvalidArgument);
  // Fields past 20 KiB before the file.
  EXPECT_EQ(Read(Form({{"big", std::string(kMaxPreData, 'v')}}, "f"), 4096).error,
            ErrorCode::kMaxPostPreDataLengthExceeded);
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 150; ++i) {
    many.emplace_back("f" + std::to_string(i), std::string(200, 'v'));
  }
  EXPECT_EQ(Read(Form(many, "f"), 999).error, ErrorCode::kMaxPostPreDataLengthExceeded);
  // More than 100 small fields.
  std::vector<std::pair<std::string, std::string>> small;
  for (int i = 0; i <= static_cast<int>(kMaxFormFields); ++i) {
    small.emplace_back("f" + std::to_string(i), "v");
  }
  EXPECT_EQ(Read(Form(small, "f"), 999).error, ErrorCode::kInvalidArgument);
  // A header section that never ends.
  std::string endless = std::string("--") + kBoundary + "\r\nContent-Disposition: form-data; " +
                        std::string(40000, 'x');
  EXPECT_TRUE(Read(endless, 1000).error.has_value());
}

}  // namespace
}  // namespace strata::gateway
