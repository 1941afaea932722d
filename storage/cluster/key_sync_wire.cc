#include "storage/cluster/key_sync_wire.h"

#include <algorithm>

#include "common/little_endian.h"
#include "metadata/codec.h"

namespace strata::storage::cluster {
namespace {

constexpr std::size_t kMaxKeyBytes = 1024;
constexpr std::size_t kMaxBucketBytes = 63;

Error Malformed(std::string_view what) {
  return Error(ErrorCode::kCorruption, "key sync: " + std::string(what));
}

}  // namespace

namespace {

constexpr std::uint8_t kRecordsHere = 0;
constexpr std::uint8_t kRecordsStreamed = 1;

void PutHead(std::string& out, const KeySyncRequest& request, std::uint8_t where) {
  out.push_back(static_cast<char>(kKeySyncFormat));
  PutLeString(out, request.bucket);
  PutLeString(out, request.key);
  out.push_back(static_cast<char>(where));
  PutLe(out, request.versions.size(), 4);
}

void PutWriteback(std::string& out, const KeySyncRequest& request) {
  out.push_back(request.writeback ? 1 : 0);
  if (request.writeback) {
    PutLeString(out, metadata::EncodeWriteback(*request.writeback));
  }
}

// One version (flags, record) from `in`, of the request's bucket and key.
Result<SyncedVersion> NextVersion(LeCursor& in, const KeySyncRequest& request) {
  std::uint64_t flags = 0;
  std::string_view encoded;
  if (!in.Int(flags, 1) || flags > 1) {
    return Malformed("unknown flags");
  }
  if (!in.Bytes(encoded, in.left())) {
    return Malformed("record past the end");
  }
  auto record = metadata::DecodeObject(encoded);
  if (!record.ok()) {
    return Malformed("bad record: " + record.error().message);
  }
  SyncedVersion version{std::move(record).value(), flags == 1};
  if (version.bytes_follow && version.record.delete_marker) {
    return Malformed("bytes flagged on a delete marker");
  }
  version.record.bucket = BucketName(request.bucket);
  version.record.key = ObjectKey(request.key);
  return version;
}

}  // namespace

std::string EncodeKeySync(const KeySyncRequest& request) {
  std::string out;
  PutHead(out, request, kRecordsHere);
  for (const auto& version : request.versions) {
    AppendStreamedVersion(out, version);
  }
  PutWriteback(out, request);
  return out;
}

std::string EncodeKeySyncHead(const KeySyncRequest& request) {
  std::string out;
  PutHead(out, request, kRecordsStreamed);
  PutWriteback(out, request);
  return out;
}

void AppendStreamedVersion(std::string& out, const SyncedVersion& version) {
  out.push_back(version.bytes_follow ? 1 : 0);
  PutLeString(out, metadata::EncodeObject(version.record));
}

Result<KeySyncRequest> DecodeKeySync(std::string_view bytes) {
  LeCursor in{bytes};
  std::uint64_t format = 0;
  if (!in.Int(format, 1) || format != kKeySyncFormat) {
    return Malformed("unknown format");
  }
  KeySyncRequest request;
  std::string_view bucket;
  std::string_view key;
  if (!in.Bytes(bucket, kMaxBucketBytes) || bucket.empty()) {
    return Malformed("bad bucket");
  }
  if (!in.Bytes(key, kMaxKeyBytes) || key.empty()) {
    return Malformed("bad key");
  }
  request.bucket.assign(bucket);
  request.key.assign(key);
  std::uint64_t where = 0;
  std::uint64_t count = 0;
  if (!in.Int(where, 1) || where > kRecordsStreamed) {
    return Malformed("bad records flag");
  }
  if (where == kRecordsStreamed) {
    if (!in.Int(count, 4) || count == 0 || count > kMaxStreamedVersions) {
      return Malformed("bad streamed version count");
    }
    request.streamed = static_cast<std::uint32_t>(count);
  } else {
    if (!in.Int(count, 4) || count > kMaxSyncVersions) {
      return Malformed("bad version count");
    }
    // Each version takes at least five bytes: a count past what is left is a lie.
    if (count > in.left() / 5) {
      return Malformed("version count past the end");
    }
    request.versions.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      auto version = NextVersion(in, request);
      if (!version.ok()) {
        return std::move(version).error();
      }
      request.versions.push_back(std::move(version).value());
    }
  }
  std::uint64_t queued = 0;
  if (!in.Int(queued, 1) || queued > 1) {
    return Malformed("bad write-back flag");
  }
  if (queued == 1) {
    std::string_view encoded;
    if (!in.Bytes(encoded, in.left())) {
      return Malformed("write-back item past the end");
    }
    auto item = metadata::DecodeWriteback(encoded);
    if (!item.ok()) {
      return Malformed("bad write-back item: " + item.error().message);
    }
    request.writeback = std::move(item).value();
  }
  if (in.left() != 0) {
    return Malformed("trailing bytes");
  }
  return request;
}

Result<void> StreamedVersionReader::Feed(std::string_view& data) {
  constexpr std::size_t kHead = 5;  // flags and the record's length
  while (!done()) {
    std::size_t want = kHead;
    if (buffer_.size() >= kHead) {
      // Checked as soon as the length is here, before any of the record is taken.
      const std::uint64_t length = GetLe(buffer_, 1, 4);
      if (length == 0) {
        return Malformed("an empty streamed record");
      }
      if (length > kMaxStreamedRecord || total_ + kHead + length > kMaxStreamedRecordBytes) {
        return Malformed("streamed records over their limit");
      }
      want = kHead + length;
      if (buffer_.size() == want) {
        LeCursor in{buffer_};
        auto version = NextVersion(in, request_);
        if (!version.ok()) {
          return std::move(version).error();
        }
        total_ += buffer_.size();
        request_.versions.push_back(std::move(version).value());
        buffer_.clear();
        continue;
      }
    }
    if (data.empty()) {
      break;
    }
    const std::size_t take = std::min(want - buffer_.size(), data.size());
    buffer_.append(data.substr(0, take));
    data.remove_prefix(take);
  }
  return Ok();
}

std::string EncodeKeySyncAnswer(const std::vector<std::uint32_t>& missing) {
  std::string out;
  PutLe(out, missing.size(), 4);
  for (const std::uint32_t index : missing) {
    PutLe(out, index, 4);
  }
  return out;
}

Result<std::vector<std::uint32_t>> DecodeKeySyncAnswer(std::string_view bytes,
                                                       std::size_t versions) {
  LeCursor in{bytes};
  std::uint64_t count = 0;
  if (!in.Int(count, 4) || count > versions || in.left() != count * 4) {
    return Malformed("bad answer length");
  }
  std::vector<std::uint32_t> missing;
  missing.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t index = 0;
    in.Int(index, 4);
    if (index >= versions || (!missing.empty() && index <= missing.back())) {
      return Malformed("answer indexes out of order or range");
    }
    missing.push_back(static_cast<std::uint32_t>(index));
  }
  return missing;
}

std::string EncodeKeyRange(const KeyRange& range) {
  std::string out;
  out.push_back(static_cast<char>(kKeySyncFormat));
  PutLeString(out, range.bucket);
  PutLeString(out, range.key);
  return out;
}

Result<KeyRange> DecodeKeyRange(std::string_view bytes) {
  LeCursor in{bytes};
  std::uint64_t format = 0;
  KeyRange range;
  if (!in.Int(format, 1) || format != kKeySyncFormat) {
    return Malformed("unknown format");
  }
  if (!in.String(range.bucket, kMaxBucketBytes) || range.bucket.empty() ||
      !in.String(range.key, kMaxKeyBytes) || in.left() != 0) {
    return Malformed("bad key range");
  }
  return range;
}

std::string EncodeCatchUpAnswer(const CatchUpAnswer& answer) {
  std::string out;
  out.push_back(answer.done ? 1 : 0);
  PutLeString(out, answer.next);
  return out;
}

Result<CatchUpAnswer> DecodeCatchUpAnswer(std::string_view bytes) {
  LeCursor in{bytes};
  std::uint64_t flags = 0;
  CatchUpAnswer answer;
  if (!in.Int(flags, 1) || flags > 1 || !in.String(answer.next, kMaxKeyBytes) || in.left() != 0) {
    return Malformed("bad catch-up answer");
  }
  answer.done = flags == 1;
  return answer;
}

std::string EncodePullAnswer(const PullAnswer& answer) {
  std::string out;
  out.push_back(answer.keep ? 1 : 0);
  PutLe(out, answer.moved, 8);
  return out;
}

Result<PullAnswer> DecodePullAnswer(std::string_view bytes) {
  LeCursor in{bytes};
  std::uint64_t keep = 0;
  PullAnswer answer;
  if (!in.Int(keep, 1) || keep > 1 || !in.Int(answer.moved, 8) || in.left() != 0) {
    return Malformed("bad key pull answer");
  }
  answer.keep = keep == 1;
  return answer;
}

}  // namespace strata::storage::cluster
