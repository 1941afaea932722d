#include "gateway/cluster_listing.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/co_try.h"
#include "common/offload.h"
#include "gateway/forward.h"
#include "gateway/listing_wire.h"
#include "metadata/read_inline.h"
#include "storage/cluster.h"
#include "storage/listing_merge.h"

namespace strata::gateway {
namespace {

namespace asio = boost::asio;

// One member's page.
struct MemberPage {
  std::vector<metadata::VersionEntry> rows;     // objects and versions
  std::vector<metadata::UploadRecord> uploads;  // uploads
  bool truncated = false;
};

const std::string& KeyOf(const metadata::VersionEntry& row) { return row.record.key.str(); }
const std::string& KeyOf(const metadata::UploadRecord& row) { return row.object.key.str(); }

// Merges the members' rows of one kind (`rows_of` picks them out of a page) in key order.
// A key's rows all come from its one owner, in order. A truncated member was read only up
// to its last key: nothing past the least such key may be listed yet.
template <typename RowsOf>
auto MergeByKey(std::vector<MemberPage>& pages, RowsOf rows_of, std::size_t max_rows,
                bool& truncated) {
  std::optional<std::string> bound;
  truncated = false;
  std::remove_reference_t<decltype(rows_of(std::declval<MemberPage&>()))> rows;
  for (auto& page : pages) {
    auto& mine = rows_of(page);
    if (page.truncated) {
      truncated = true;
      if (!mine.empty() && (!bound || KeyOf(mine.back()) < *bound)) {
        bound = KeyOf(mine.back());
      }
    }
    std::move(mine.begin(), mine.end(), std::back_inserter(rows));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return KeyOf(a) < KeyOf(b); });
  std::size_t keep = 0;
  while (keep < rows.size() && keep < max_rows && !(bound && KeyOf(rows[keep]) > *bound)) {
    ++keep;
  }
  if (keep < rows.size()) {
    truncated = true;
    rows.resize(keep);
  }
  return rows;
}

// Bytes of rows gathered before each write of the answer's stream.
constexpr std::size_t kRowsChunk = 256 * 1024;

Error MemberFailed(const std::string& node, const Error& error) {
  if (!error.retryable) {
    spdlog::warn("listing: member {} failed: {}", node, error.message);
  }
  return Error(ErrorCode::kUnavailable,
               "a member of the cluster could not be listed now (" + node + "), retry",
               /*retryable=*/true);
}

// This gateway's share of a listing: rows of the keys it is the primary of (their other
// owners hold replicas, which another member's share must not list twice), at most
// request.limit, reading the index page after page past the keys others answer for, so
// `truncated` means exactly that more of its keys follow. Synchronous index reads.
Result<MemberPage> ListOwnedPage(Services& services, const ListingRequest& request) {
  const BucketName bucket(request.bucket);
  auto owned = [&services, &request](const std::string& key) {
    if (services.cluster == nullptr) {
      return true;
    }
    const auto owner = services.cluster->PrimaryOf(request.bucket, key);
    return !owner || owner->self;
  };
  MemberPage page;
  std::string marker = request.marker;
  std::string version_marker = request.version_marker;
  while (true) {
    const std::size_t have = page.rows.size() + page.uploads.size();
    const std::size_t want = request.limit - have;
    bool more = false;
    if (request.kind == ListingKind::kObjects) {
      auto listed = services.index.ListObjects(bucket, request.prefix, marker, want);
      if (!listed.ok()) {
        return std::move(listed).error();
      }
      more = listed->truncated;
      if (!listed->objects.empty()) {
        marker = listed->objects.back().key.str();
      }
      for (auto& object : listed->objects) {
        if (owned(object.key.str())) {
          page.rows.push_back(metadata::VersionEntry{std::move(object), true});
        }
      }
    } else if (request.kind == ListingKind::kVersions) {
      auto listed =
          services.index.ListVersions(bucket, request.prefix, marker, version_marker, want);
      if (!listed.ok()) {
        return std::move(listed).error();
      }
      more = listed->truncated;
      if (!listed->versions.empty()) {
        marker = listed->versions.back().record.key.str();
        version_marker = listed->versions.back().record.version_id.str();
      }
      for (auto& row : listed->versions) {
        if (owned(row.record.key.str())) {
          page.rows.push_back(std::move(row));
        }
      }
    } else {
      auto listed =
          services.store.ListUploads(bucket, request.prefix, marker, version_marker, want);
      if (!listed.ok()) {
        return std::move(listed).error();
      }
      more = listed->truncated;
      if (!listed->uploads.empty()) {
        marker = listed->uploads.back().object.key.str();
        version_marker = listed->uploads.back().upload_id.str();
      }
      for (auto& upload : listed->uploads) {
        if (owned(upload.object.key.str())) {
          page.uploads.push_back(std::move(upload));
        }
      }
    }
    if (!more || page.rows.size() + page.uploads.size() >= request.limit) {
      page.truncated = more;
      return page;
    }
  }
}

asio::awaitable<Result<MemberPage>> ListHere(Services& services, const ListingRequest& request) {
  co_return co_await metadata::ReadInline(
      services.blocking_pool, [&services, &request] { return ListOwnedPage(services, request); });
}

// Every whole row the reader holds now, into `rows`, at most `limit` in all.
template <typename Next, typename Row>
Result<void> TakeRows(ListingRowReader& reader, Next next, std::vector<Row>& rows,
                      std::uint32_t limit) {
  while (true) {
    auto row = (reader.*next)();
    if (!row.ok()) {
      return std::move(row).error();
    }
    if (!row->has_value()) {
      return Ok();
    }
    if (rows.size() == limit) {
      return Error(ErrorCode::kCorruption, "listing: more rows than asked for");
    }
    rows.push_back(std::move(**row));
  }
}

asio::awaitable<Result<MemberPage>> ListThere(storage::Cluster& cluster, const std::string& peer,
                                              const ListingRequest& request) {
  const auto executor = cluster.executor();
  storage::PeerRequest call_request;
  call_request.op = storage::kPeerOpListing;
  call_request.payload = EncodeListingRequest(request);
  auto opened = co_await RunOn(executor, cluster.Call(peer, call_request));
  if (!opened.ok()) {
    co_return std::move(opened).error();
  }
  HeldPeerCall call(executor, std::move(opened).value());
  auto response = co_await RunOn(executor, call->Response());
  if (!response.ok()) {
    co_return std::move(response).error();
  }
  auto truncated = DecodeListingAnswer(response->payload);
  if (!truncated.ok()) {
    co_return std::move(truncated).error();
  }
  if (!response->has_stream) {
    co_return Error(ErrorCode::kCorruption, "listing: an answer without rows");
  }
  MemberPage page;
  page.truncated = *truncated;
  ListingRowReader reader(request.bucket);
  while (true) {
    auto chunk = co_await RunOn(executor, call->Read());
    if (!chunk.ok()) {
      co_return std::move(chunk).error();
    }
    if (!chunk->has_value()) {
      break;
    }
    reader.Add(**chunk);
    STRATA_CO_RETURN_IF_ERROR(
        request.kind == ListingKind::kUploads
            ? TakeRows(reader, &ListingRowReader::NextUpload, page.uploads, request.limit)
            : TakeRows(reader, &ListingRowReader::Next, page.rows, request.limit));
  }
  if (reader.has_partial()) {
    co_return Error(ErrorCode::kCorruption, "listing: the rows were cut short");
  }
  co_return page;
}

// Every member's page for `request`, in the view's order (by node name).
asio::awaitable<Result<std::vector<MemberPage>>> ListMembers(Services& services,
                                                             const ListingRequest& request) {
  storage::Cluster& cluster = *services.cluster;
  const auto view = cluster.View();
  std::vector<MemberPage> pages;
  pages.reserve(view->members.size());
  for (const auto& member : view->members) {
    Result<MemberPage> page = MemberPage();
    if (member.node == cluster.node()) {
      page = co_await ListHere(services, request);
    } else {
      page = co_await ListThere(cluster, member.peer, request);
    }
    if (!page.ok()) {
      co_return MemberFailed(member.node, page.error());
    }
    pages.push_back(std::move(page).value());
  }
  co_return pages;
}

ListingRequest RequestOf(ListingKind kind, const std::string& bucket, const std::string& prefix,
                         const std::string& marker, const std::string& version_marker,
                         std::size_t want) {
  ListingRequest request;
  request.kind = kind;
  request.bucket = bucket;
  request.prefix = prefix;
  request.marker = marker;
  request.version_marker = version_marker;
  request.limit = static_cast<std::uint32_t>(std::clamp<std::size_t>(want, 1, kMaxListingRows));
  return request;
}

}  // namespace

asio::awaitable<Result<metadata::ListObjectsPage>> ListObjectsInCluster(
    Services& services, const std::string& bucket, const std::string& prefix,
    const std::string& start_after, std::size_t max_keys) {
  const ListingRequest request =
      RequestOf(ListingKind::kObjects, bucket, prefix, start_after, "", max_keys);
  auto pages = co_await ListMembers(services, request);
  if (!pages.ok()) {
    co_return std::move(pages).error();
  }
  std::vector<storage::ListingSourcePage> sources;
  for (auto& page : *pages) {
    storage::ListingSourcePage source;
    source.truncated = page.truncated;
    if (!page.rows.empty()) {
      source.last_listed = page.rows.back().record.key.str();
    }
    for (auto& row : page.rows) {
      source.entries.push_back(std::move(row.record));
    }
    sources.push_back(std::move(source));
  }
  co_return storage::MergeListingPages(std::move(sources), max_keys);
}

asio::awaitable<Result<metadata::ListVersionsPage>> ListVersionsInCluster(
    Services& services, const std::string& bucket, const std::string& prefix,
    const std::string& key_marker, const std::string& version_marker, std::size_t max_versions) {
  const ListingRequest request =
      RequestOf(ListingKind::kVersions, bucket, prefix, key_marker, version_marker, max_versions);
  auto pages = co_await ListMembers(services, request);
  if (!pages.ok()) {
    co_return std::move(pages).error();
  }
  metadata::ListVersionsPage merged;
  merged.versions = MergeByKey(
      *pages, [](MemberPage& page) -> auto& { return page.rows; }, max_versions, merged.truncated);
  co_return merged;
}

asio::awaitable<Result<metadata::ListUploadsPage>> ListUploadsInCluster(
    Services& services, const std::string& bucket, const std::string& prefix,
    const std::string& key_marker, const std::string& upload_id_marker, std::size_t max_uploads) {
  const ListingRequest request =
      RequestOf(ListingKind::kUploads, bucket, prefix, key_marker, upload_id_marker, max_uploads);
  auto pages = co_await ListMembers(services, request);
  if (!pages.ok()) {
    co_return std::move(pages).error();
  }
  metadata::ListUploadsPage merged;
  merged.uploads = MergeByKey(
      *pages, [](MemberPage& page) -> auto& { return page.uploads; }, max_uploads,
      merged.truncated);
  co_return merged;
}

Result<void> CheckBucketEmptyInCluster(Services& services, const std::string& bucket) {
  // Wrapped: co_spawn's answer must be default-constructible, which a Result is not.
  auto done = asio::co_spawn(
                  services.cluster->executor(),
                  run_on_detail::Optional(ListVersionsInCluster(services, bucket, "", "", "", 1)),
                  asio::use_future)
                  .get();
  auto& listed = *done;
  if (!listed.ok()) {
    return std::move(listed).error();
  }
  if (!listed->versions.empty()) {
    return Error(ErrorCode::kBucketNotEmpty, "The bucket you tried to delete is not empty");
  }
  return Ok();
}

storage::PeerTask<void> ServeListing(storage::PeerIncomingCall& call, Services& services) {
  auto request = DecodeListingRequest(call.request().payload);
  if (!request.ok()) {
    spdlog::warn("peer {}: a listing request refused: {}", call.peer(), request.error().message);
    co_return std::move(request).error();
  }
  // On the blocking pool: this thread serves every peer call of the gateway.
  auto page = co_await Offload(services.blocking_pool,
                               [&services, &request] { return ListOwnedPage(services, *request); });
  if (!page.ok()) {
    co_return std::move(page).error();
  }
  storage::PeerResponse response;
  response.payload = EncodeListingAnswer(page->truncated);
  response.has_stream = true;
  STRATA_CO_RETURN_IF_ERROR(co_await call.Respond(std::move(response)));
  std::string rows;
  const std::size_t count = page->rows.size() + page->uploads.size();
  for (std::size_t i = 0; i < count; ++i) {
    if (i < page->rows.size()) {
      AppendListingRow(rows, page->rows[i].record, page->rows[i].latest);
    } else {
      AppendUploadRow(rows, page->uploads[i - page->rows.size()]);
    }
    while (rows.size() >= kRowsChunk) {
      const std::size_t n = std::min(rows.size(), storage::kMaxPeerChunk);
      STRATA_CO_RETURN_IF_ERROR(co_await call.Write(rows.substr(0, n)));
      rows.erase(0, n);
    }
  }
  if (!rows.empty()) {
    STRATA_CO_RETURN_IF_ERROR(co_await call.Write(std::move(rows)));
  }
  co_return co_await call.CloseResponse();
}

}  // namespace strata::gateway
