// A key sync (storage/replication.h) as it travels over the peer transport.
//
// Request payload (integers little-endian): a format byte, the bucket and the key (each a
// u32 length and bytes), a byte saying where the records are (0: here, 1: in the stream),
// a u32 count of versions, then (records here) each version newest first: a flags byte
// (bit 0: its bytes follow in the call's stream) and its record (a u32 length and
// metadata/codec.h's EncodeObject, which leaves out bucket and key), then the key's
// write-back item on the primary: a byte (1: one follows, 0: none) and, when one does, a
// u32 length and metadata/codec.h's EncodeWriteback. With the records in the stream (a
// stack over kMaxSyncVersions versions, or too large for the payload) the stream starts
// with the versions, each written as in the payload (AppendStreamedVersion), and
// StreamedVersionReader reads them back. The stream then holds the flagged versions'
// bytes back to back, in order, each exactly its record's size.
// Answer payload: a u32 count, then that many u32 indexes of versions whose bytes the
// replica lacks and did not get (increasing); count 0: applied.
//
// Decoders refuse (kCorruption) a wrong format, unknown flags, bytes flagged on a delete
// marker, lengths past the end, trailing bytes, more than kMaxSyncVersions versions in the
// payload (kMaxStreamedVersions, or kMaxStreamedRecordBytes of records, in the stream),
// keys over 1024 bytes and indexes out of order or range: the peer's bytes are outside
// input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "metadata/records.h"

namespace strata::storage::cluster {

// 2: the write-back item joined the key sync. 3: records may travel in the stream.
inline constexpr std::uint8_t kKeySyncFormat = 3;
inline constexpr std::uint32_t kMaxSyncVersions = 1000;  // records in the payload
// A stack whose records travel in the stream: what the primary and the replica each hold
// of it in memory during one sync.
inline constexpr std::uint32_t kMaxStreamedVersions = 100'000;
inline constexpr std::uint64_t kMaxStreamedRecordBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kMaxStreamedRecord = std::uint64_t{1} << 20;

struct SyncedVersion {
  metadata::ObjectRecord record;  // bucket and key set from the request's
  bool bytes_follow = false;
};

struct KeySyncRequest {
  std::string bucket;
  std::string key;
  std::vector<SyncedVersion> versions;  // newest first
  // The key's write-back item on the primary (bucket and key unset): the replica's becomes
  // the same, so a new primary pushes what the old one had not.
  std::optional<metadata::WritebackItem> writeback;
  // Decoded from a payload whose records are in the stream: how many versions follow
  // there (`versions` is empty until a StreamedVersionReader reads them). 0 otherwise.
  std::uint32_t streamed = 0;
};

// The payload with the versions' records in it.
std::string EncodeKeySync(const KeySyncRequest& request);
// The payload of `request` with its records left to the stream.
std::string EncodeKeySyncHead(const KeySyncRequest& request);
// One version as the stream carries it.
void AppendStreamedVersion(std::string& out, const SyncedVersion& version);
Result<KeySyncRequest> DecodeKeySync(std::string_view bytes);

// Reads the versions of a request whose records are in the stream, chunk by chunk: each
// Feed takes what it needs from the front of `data` (a record may span chunks; at most one
// record is buffered) and leaves the rest, the bytes that follow the records. kCorruption
// for a bad record or flag, a record over kMaxStreamedRecord bytes or the records over
// kMaxStreamedRecordBytes.
class StreamedVersionReader {
 public:
  explicit StreamedVersionReader(KeySyncRequest& request) : request_(request) {}
  Result<void> Feed(std::string_view& data);
  bool done() const { return request_.versions.size() == request_.streamed; }

 private:
  KeySyncRequest& request_;
  std::string buffer_;  // the record being read: its flags, length and bytes so far
  std::uint64_t total_ = 0;
};

// `missing`: indexes into the request's versions, increasing.
std::string EncodeKeySyncAnswer(const std::vector<std::uint32_t>& missing);
Result<std::vector<std::uint32_t>> DecodeKeySyncAnswer(std::string_view bytes,
                                                       std::size_t versions);

// A member that is catching up (storage/replication.h) asks a primary about one bucket:
// `kPeerOpCatchUp` (sync me your keys I own, after `key`), or one key: `kPeerOpKeyPull`
// (sync me this key). Payload: a format byte, the bucket and the key (u32 length and bytes;
// the key may be empty for a catch-up from the start). Catch-up answer: a flags byte
// (bit 0: the bucket is done) and the last key looked at (u32 length and bytes), where the
// next call starts. Pull answer: a byte, 0 synced, 1 the primary has no version and left
// the caller's copy as it is, then the object bytes the primary's sync sent (u64), by
// which the caller paces its moves.
struct KeyRange {
  std::string bucket;
  std::string key;
};
std::string EncodeKeyRange(const KeyRange& range);
Result<KeyRange> DecodeKeyRange(std::string_view bytes);

struct CatchUpAnswer {
  bool done = false;
  std::string next;
};
std::string EncodeCatchUpAnswer(const CatchUpAnswer& answer);
Result<CatchUpAnswer> DecodeCatchUpAnswer(std::string_view bytes);

struct PullAnswer {
  bool keep = false;        // the primary has no version of the key (replicas = 1)
  std::uint64_t moved = 0;  // object bytes its sync sent
};
std::string EncodePullAnswer(const PullAnswer& answer);
Result<PullAnswer> DecodePullAnswer(std::string_view bytes);

}  // namespace strata::storage::cluster
