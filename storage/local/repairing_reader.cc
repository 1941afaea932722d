#include "storage/local/repairing_reader.h"

#include <spdlog/spdlog.h>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>

#include "storage/local/local_object_store.h"

namespace strata::storage {
namespace {

namespace asio = boost::asio;

// Runs the repair of `record` and resumes the caller on its own executor: the repairer
// answers on its thread, the reader belongs to the caller's.
asio::awaitable<Result<bool>> AwaitRepair(CopyRepairer& repairer,
                                          const metadata::ObjectRecord& record) {
  std::optional<Result<bool>> out;
  // record and out live in this suspended frame until the handler resumes it.
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
      [&repairer, &record, &out](auto handler) {
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        repairer.Repair(record, [shared, &out](const Result<bool>& result) {
          out.emplace(result);
          auto ex = asio::get_associated_executor(*shared);
          asio::post(ex, [shared]() mutable { (*shared)(); });
        });
      },
      asio::use_awaitable);
  co_return std::move(*out);
}

class RepairingReader final : public ObjectReader {
 public:
  RepairingReader(LocalObjectStore& store, CopyRepairer& repairer, metadata::ObjectRecord record,
                  std::variant<std::unique_ptr<ObjectReader>, Error> opened)
      : store_(store), repairer_(repairer), record_(std::move(record)) {
    if (auto* reader = std::get_if<std::unique_ptr<ObjectReader>>(&opened)) {
      inner_ = std::move(*reader);
    } else {
      damage_ = std::get<Error>(std::move(opened));
    }
  }

  std::uint64_t size() const override { return record_.size; }

  // Synchronous readers (the write-back push, CopyPart) run on threads that must not wait
  // for an upstream fetch: they get the error, as without repair.
  Result<std::size_t> Read(std::uint64_t offset, std::span<char> buf) override {
    if (!inner_) {
      return *damage_;
    }
    return inner_->Read(offset, buf);
  }

  asio::awaitable<Result<std::size_t>> ReadAsync(std::uint64_t offset,
                                                 std::span<char> buf) override {
    if (inner_) {
      auto n = co_await inner_->ReadAsync(offset, buf);
      if (n.ok() || n.error().code != ErrorCode::kCorruption || repaired_) {
        co_return n;
      }
      damage_ = n.error();
    } else if (repaired_) {
      co_return *damage_;
    }
    repaired_ = true;  // one repair per reader: a copy damaged again is only an error
    auto repair = co_await AwaitRepair(repairer_, record_);
    if (!repair.ok()) {
      co_return *damage_;  // logged and counted by the repairer
    }
    // Repaired now, or by a concurrent reader a moment ago: the record names the new copy.
    auto current = store_.HeadVersion(record_.bucket, record_.key, record_.version_id);
    if (!current.ok() || current->etag != record_.etag ||
        current->last_modified_ms != record_.last_modified_ms) {
      co_return *damage_;
    }
    auto reopened = store_.OpenLocal(*current);
    if (!reopened.ok()) {
      spdlog::error("storage: {}/{}: the repaired copy does not open: {}", record_.bucket.str(),
                    record_.key.str(), reopened.error().message);
      co_return *damage_;
    }
    inner_ = std::move(reopened).value();
    record_ = std::move(current).value();
    co_return co_await inner_->ReadAsync(offset, buf);
  }

 private:
  LocalObjectStore& store_;
  CopyRepairer& repairer_;
  metadata::ObjectRecord record_;
  std::unique_ptr<ObjectReader> inner_;  // null while the copy's opening failed
  std::optional<Error> damage_;          // what the damaged copy answered
  bool repaired_ = false;                // a repair was tried
};

}  // namespace

std::unique_ptr<ObjectReader> MakeRepairingReader(
    LocalObjectStore& store, CopyRepairer& repairer, metadata::ObjectRecord record,
    std::variant<std::unique_ptr<ObjectReader>, Error> opened) {
  return std::make_unique<RepairingReader>(store, repairer, std::move(record), std::move(opened));
}

}  // namespace strata::storage
