#include "storage/upstream/upstream_tier.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/this_coro.hpp>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <vector>

#include "storage/checksum.h"
#include "storage/crc64nvme.h"
#include "storage/local/async_file.h"
#include "storage/local/local_io.h"
#include "storage/local/local_tier.h"

namespace strata::storage {

namespace asio = boost::asio;

namespace {

// Both not-found answers S3 gives for a location mean there is no object there.
Error NotFound(Error error) {
  if (error.code == ErrorCode::kNoSuchKey || error.code == ErrorCode::kNoSuchBucket) {
    error.code = ErrorCode::kNotFound;
  }
  return error;
}

bool IsMd5Hex(std::string_view etag) {
  return etag.size() == 32 &&
         std::all_of(etag.begin(), etag.end(), [](char c) { return std::isxdigit(c) != 0; });
}

bool IsChecksumHeader(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  return name.starts_with("x-amz-checksum-");
}

class UpstreamReader final : public TierReader {
 public:
  UpstreamReader(Upstream& upstream, std::string bucket, std::string key,
                 const upstream::ObjectInfo& head, std::string version_id, std::uint64_t start,
                 std::uint64_t size)
      : upstream_(upstream),
        bucket_(std::move(bucket)),
        key_(std::move(key)),
        etag_(head.etag),
        version_id_(std::move(version_id)),
        start_(start),
        size_(size) {
    info_.size = head.size;
    info_.etag = upstream::EtagValue(head.etag);
    info_.version_id = head.version_id;
    info_.last_modified = head.last_modified;
    info_.content_type = head.content_type;
    info_.headers = head.headers;
  }

  std::uint64_t size() const override { return size_; }
  const TierObjectInfo& info() const override { return info_; }

  TierTask<std::size_t> ReadAsync(std::uint64_t offset, std::span<char> buf) override {
    if (offset >= size_ || buf.empty()) {
      co_return std::size_t{0};
    }
    const std::uint64_t n = std::min<std::uint64_t>(buf.size(), size_ - offset);
    upstream::GetRequest request;
    request.range = std::make_pair(start_ + offset, start_ + offset + n - 1);
    request.if_match = etag_;
    request.version_id = version_id_;
    std::size_t got = 0;
    upstream::BodySink sink = [&got, n, buf](std::string_view data) -> TierTask<void> {
      if (data.size() > n - got) {
        co_return Error(ErrorCode::kCorruption, "upstream: more bytes than the range asked for");
      }
      std::copy(data.begin(), data.end(), buf.data() + got);
      got += data.size();
      co_return Ok();
    };
    auto& client = upstream_.Client(co_await asio::this_coro::executor);
    auto info = co_await client.GetObject(bucket_, key_, std::move(request), std::move(sink));
    if (!info.ok()) {
      co_return NotFound(std::move(info).error());
    }
    if (got != n) {
      co_return Error(ErrorCode::kCorruption, "upstream: " + std::to_string(got) + " bytes of " +
                                                  bucket_ + "/" + key_ + ", asked for " +
                                                  std::to_string(n));
    }
    co_return got;
  }

 private:
  Upstream& upstream_;
  std::string bucket_;
  std::string key_;
  std::string etag_;        // quoted, as HEAD gave it
  std::string version_id_;  // the version pinned, if any
  std::uint64_t start_;
  std::uint64_t size_;
  TierObjectInfo info_;
};

class UpstreamWrite final : public TierWrite {
 public:
  UpstreamWrite(Upstream& upstream, std::string bucket, std::string key, TierWriteOptions options,
                UniqueFd spool, std::string spool_path)
      : upstream_(upstream),
        bucket_(std::move(bucket)),
        key_(std::move(key)),
        options_(std::move(options)),
        spool_(std::move(spool)),
        spool_path_(std::move(spool_path)) {}

  TierTask<void> Append(std::string_view data) override {
    if (failed_ || committed_) {
      co_return Error(ErrorCode::kInternal, "append to a failed or committed write");
    }
    auto written = PwriteAll(spool_.get(), data, size_, spool_path_);
    if (!written.ok()) {
      failed_ = true;
      co_return written;
    }
    size_ += data.size();
    crc_ = Crc64Nvme(crc_, data);
    md5_.Update(data);
    co_return Ok();
  }

  TierTask<TierObject> Commit() override {
    if (failed_ || committed_) {
      co_return Error(ErrorCode::kInternal, "commit of a failed or committed write");
    }
    failed_ = true;  // until the PUT succeeds: a commit is tried once
    if (options_.size && *options_.size != size_) {
      co_return Error(ErrorCode::kIncompleteBody, "upstream: " + std::to_string(size_) +
                                                      " bytes written, " +
                                                      std::to_string(*options_.size) + " declared");
    }
    std::vector<upstream::Header> headers = options_.headers;
    if (std::none_of(headers.begin(), headers.end(),
                     [](const upstream::Header& h) { return IsChecksumHeader(h.first); })) {
      headers.emplace_back("x-amz-checksum-crc64nvme", Crc64Base64(crc_));
    }
    const int fd = spool_.get();
    const std::uint64_t size = size_;
    const std::string path = spool_path_;
    upstream::BodySource source = [fd, size, path](std::uint64_t offset,
                                                   std::span<char> buf) -> TierTask<std::size_t> {
      const std::size_t n =
          offset >= size
              ? 0
              : static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - offset));
      auto read = PreadExact(fd, buf.first(n), offset, path);
      if (!read.ok()) {
        co_return std::move(read).error();
      }
      co_return n;
    };
    auto& client = upstream_.Client(co_await asio::this_coro::executor);
    auto put =
        co_await client.PutObject(bucket_, key_, size_, std::move(source), std::move(headers));
    if (!put.ok()) {
      co_return std::move(put).error();
    }
    const std::string etag = upstream::EtagValue(put->etag);
    const std::string md5 = md5_.FinalHex();
    if (IsMd5Hex(etag) && etag != md5) {
      co_return Error(ErrorCode::kCorruption, "the upstream stored " + bucket_ + "/" + key_ +
                                                  " with ETag " + etag + ", expected " + md5);
    }
    failed_ = false;
    committed_ = true;
    co_return TierObject{bucket_ + "/" + key_, size_, crc_, etag, put->version_id};
  }

 private:
  Upstream& upstream_;
  std::string bucket_;
  std::string key_;
  TierWriteOptions options_;
  UniqueFd spool_;  // unnamed: closing it frees the bytes
  std::string spool_path_;
  std::uint64_t size_ = 0;
  std::uint64_t crc_ = 0;
  Md5 md5_;
  bool failed_ = false;
  bool committed_ = false;
};

// An unnamed read-write file in `dir` (O_TMPFILE, else a named one unlinked at once).
Result<UniqueFd> SpoolFile(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (fd.valid()) {
    return fd;
  }
  std::string name = dir + "/spool-XXXXXX";
  fd = UniqueFd(::mkostemp(name.data(), O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoError(errno, "create a spool file in", dir);
  }
  ::unlink(name.c_str());
  return fd;
}

}  // namespace

Result<std::pair<std::string, std::string>> UpstreamTier::SplitLocation(std::string_view location) {
  const auto slash = location.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == location.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 "upstream location " + std::string(location) + " is not <bucket>/<key>");
  }
  return std::make_pair(std::string(location.substr(0, slash)),
                        std::string(location.substr(slash + 1)));
}

TierTask<std::unique_ptr<TierReader>> UpstreamTier::Open(std::string location,
                                                         TierOpenOptions options) {
  const TierRange range = options.range;
  auto split = SplitLocation(location);
  if (!split.ok()) {
    co_return std::move(split).error();
  }
  auto& [bucket, key] = *split;
  auto& client = upstream_.Client(co_await asio::this_coro::executor);
  // A named argument: GCC 12 frees a class-type temporary of a co_await expression wrongly.
  upstream::GetRequest head;
  if (!options.if_match.empty()) {
    head.if_match = "\"" + options.if_match + "\"";
  }
  head.version_id = options.version_id;
  auto info = co_await client.HeadObject(bucket, key, head);
  if (!info.ok()) {
    co_return NotFound(std::move(info).error());
  }
  const std::uint64_t length = info->size;
  if (range.offset > length) {
    co_return Error(ErrorCode::kInvalidRange, "range starts past the end of " + location);
  }
  const std::uint64_t size = std::min(range.length.value_or(length), length - range.offset);
  co_return std::unique_ptr<TierReader>(std::make_unique<UpstreamReader>(
      upstream_, std::move(bucket), std::move(key), *info, options.version_id, range.offset, size));
}

TierTask<std::unique_ptr<TierWrite>> UpstreamTier::BeginWrite(TierWriteOptions options) {
  auto split = SplitLocation(options.location);
  if (!split.ok()) {
    co_return std::move(split).error();
  }
  auto spool = SpoolFile(spool_dir_);
  if (!spool.ok()) {
    co_return std::move(spool).error();
  }
  auto& [bucket, key] = *split;
  const std::string spool_path = spool_dir_ + " (spool of " + options.location + ")";
  co_return std::unique_ptr<TierWrite>(
      std::make_unique<UpstreamWrite>(upstream_, std::move(bucket), std::move(key),
                                      std::move(options), std::move(spool).value(), spool_path));
}

TierTask<TierObject> UpstreamTier::PutFrom(std::string location, std::shared_ptr<TierReader> source,
                                           std::vector<std::pair<std::string, std::string>> headers,
                                           std::optional<std::uint64_t> crc64nvme) {
  auto split = SplitLocation(location);
  if (!split.ok()) {
    co_return std::move(split).error();
  }
  if (crc64nvme) {
    std::erase_if(headers, [](const upstream::Header& h) { return IsChecksumHeader(h.first); });
    headers.emplace_back("x-amz-checksum-crc64nvme", Crc64Base64(*crc64nvme));
  }
  // Each byte is hashed the first time it is read: a retry reads a prefix again.
  struct Digest {
    std::uint64_t hashed = 0;
    std::uint64_t crc = 0;
    Md5 md5;
  };
  auto digest = std::make_shared<Digest>();
  const std::uint64_t size = source->size();
  upstream::BodySource body = [source, digest](std::uint64_t offset,
                                               std::span<char> buf) -> TierTask<std::size_t> {
    auto n = co_await source->ReadAsync(offset, buf);
    if (!n.ok()) {
      co_return std::move(n).error();
    }
    const std::uint64_t end = offset + *n;
    if (offset <= digest->hashed && end > digest->hashed) {
      const std::string_view fresh(buf.data() + (digest->hashed - offset),
                                   static_cast<std::size_t>(end - digest->hashed));
      digest->crc = Crc64Nvme(digest->crc, fresh);
      digest->md5.Update(fresh);
      digest->hashed = end;
    }
    co_return n;
  };
  auto& client = upstream_.Client(co_await asio::this_coro::executor);
  auto put = co_await client.PutObject(split->first, split->second, size, std::move(body),
                                       std::move(headers));
  if (!put.ok()) {
    co_return std::move(put).error();
  }
  if (digest->hashed != size) {
    co_return Error(ErrorCode::kInternal, "upstream: the PUT of " + location + " read " +
                                              std::to_string(digest->hashed) + " of " +
                                              std::to_string(size) + " bytes");
  }
  if (crc64nvme && *crc64nvme != digest->crc) {
    co_return Error(ErrorCode::kCorruption,
                    "the bytes sent to " + location + " do not match their CRC64NVME");
  }
  const std::string etag = upstream::EtagValue(put->etag);
  const std::string md5 = digest->md5.FinalHex();
  if (IsMd5Hex(etag) && etag != md5) {
    co_return Error(ErrorCode::kCorruption,
                    "the upstream stored " + location + " with ETag " + etag + ", expected " + md5);
  }
  co_return TierObject{std::move(location), size, digest->crc, etag, put->version_id};
}

TierTask<TierRemoved> UpstreamTier::Remove(std::string location, std::string version_id) {
  auto split = SplitLocation(location);
  if (!split.ok()) {
    co_return std::move(split).error();
  }
  auto& client = upstream_.Client(co_await asio::this_coro::executor);
  auto deleted = co_await client.DeleteObject(split->first, split->second, version_id);
  if (!deleted.ok()) {
    if (deleted.error().code == ErrorCode::kNoSuchBucket) {
      co_return TierRemoved{};
    }
    co_return std::move(deleted).error();
  }
  TierRemoved removed;
  if (version_id.empty()) {  // S3 names the marker it made in x-amz-version-id
    removed.marker_version_id = deleted->version_id;
  }
  co_return removed;
}

TierTask<TierUsage> UpstreamTier::Usage() {
  auto& client = upstream_.Client(co_await asio::this_coro::executor);
  auto buckets = co_await client.ListBuckets();
  if (!buckets.ok()) {
    co_return std::move(buckets).error();
  }
  TierUsage usage;
  for (const auto& bucket : *buckets) {
    upstream::ListRequest request;
    for (bool more = true; more;) {
      auto page = co_await client.ListObjectsV2(bucket.name, request);
      if (!page.ok()) {
        co_return std::move(page).error();
      }
      for (const auto& object : page->objects) {
        ++usage.objects;
        usage.bytes += object.size;
      }
      more = page->truncated && !page->next_continuation_token.empty();
      request.continuation_token = page->next_continuation_token;
    }
  }
  co_return usage;
}

}  // namespace strata::storage
