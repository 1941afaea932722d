// A member's share of a cluster-wide listing (gateway/cluster_listing.h) as it travels
// over the peer transport: the request in the call's payload, the page's rows in its
// response stream.
//
// Request (integers little-endian): a format byte, a kind byte (1 objects, 2 versions,
// 3 multipart uploads),
// then bucket, prefix, marker key and marker version (each a u32 length and bytes), then
// a u32 row limit. Response payload: a format byte and a flags byte (bit 0: truncated).
// Stream: rows back to back, each a u32 key length and the key, a flags byte (bit 0: the
// key's newest version, for versions), a u32 record length and the record
// (metadata/codec.h's EncodeObject, which leaves out bucket and key).
//
// Decoders refuse (kCorruption) wrong formats, kinds and flags, lengths past the end,
// trailing bytes, a row limit over kMaxListingRows, and keys over 1024 bytes: the peer's
// bytes are outside input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "metadata/object_index.h"

namespace strata::gateway {

inline constexpr std::uint8_t kListingFormat = 1;
inline constexpr std::uint32_t kMaxListingRows = 10'001;

enum class ListingKind : std::uint8_t { kObjects = 1, kVersions = 2, kUploads = 3 };

struct ListingRequest {
  ListingKind kind = ListingKind::kObjects;
  std::string bucket;
  std::string prefix;
  std::string marker;          // objects: start after this key; else the key marker
  std::string version_marker;  // versions: the version id marker; uploads: the upload id
  std::uint32_t limit = 0;
};

std::string EncodeListingRequest(const ListingRequest& request);
Result<ListingRequest> DecodeListingRequest(std::string_view bytes);

std::string EncodeListingAnswer(bool truncated);
Result<bool> DecodeListingAnswer(std::string_view bytes);  // truncated

// Appends one row (a version entry; `latest` is false for object listings).
void AppendListingRow(std::string& out, const metadata::ObjectRecord& record, bool latest);
// Appends one row of an uploads listing (its record: metadata/codec.h's EncodeUpload).
void AppendUploadRow(std::string& out, const metadata::UploadRecord& upload);

// Reads rows out of a stream's chunks: rows may span chunks, and one row is at most
// kMaxListingRowBytes, so what is buffered stays bounded.
inline constexpr std::size_t kMaxListingRowBytes = 1 << 20;
class ListingRowReader {
 public:
  explicit ListingRowReader(std::string bucket) : bucket_(std::move(bucket)) {}
  // Adds a chunk of the stream.
  void Add(std::string_view chunk) { buffer_.append(chunk); }
  // The next whole row, nullopt when more bytes are needed; an error for a malformed row
  // (the reader is then unusable).
  Result<std::optional<metadata::VersionEntry>> Next();
  // The same for an uploads listing's rows.
  Result<std::optional<metadata::UploadRecord>> NextUpload();
  // Whether bytes of an unfinished row are left (at the stream's end: it was cut short).
  bool has_partial() const { return offset_ < buffer_.size(); }

 private:
  struct Row {
    std::string key;
    bool latest = false;
    std::string record;
  };
  // The next row's parts, nullopt when more bytes are needed.
  Result<std::optional<Row>> NextRow();

  std::string bucket_;
  std::string buffer_;
  std::size_t offset_ = 0;
};

}  // namespace strata::gateway
