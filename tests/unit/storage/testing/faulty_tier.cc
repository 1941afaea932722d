#include "tests/unit/storage/testing/faulty_tier.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>

namespace strata::storage::testing {

namespace asio = boost::asio;

namespace {
std::size_t Index(TierOp op) { return static_cast<std::size_t>(op); }
}  // namespace

class FaultyTier::Reader final : public TierReader {
 public:
  Reader(FaultyTier& tier, std::unique_ptr<TierReader> inner, std::uint64_t start,
         std::optional<Flip> flip)
      : tier_(tier), inner_(std::move(inner)), start_(start), flip_(flip) {}

  std::uint64_t size() const override { return inner_->size(); }
  const TierObjectInfo& info() const override { return inner_->info(); }

  TierTask<std::size_t> ReadAsync(std::uint64_t offset, std::span<char> buf) override {
    if (auto error = co_await tier_.Enter(TierOp::kRead)) {
      co_return std::move(*error);
    }
    auto n = co_await inner_->ReadAsync(offset, buf);
    if (n.ok() && flip_ && flip_->offset >= start_ + offset &&
        flip_->offset < start_ + offset + *n) {
      char& byte = buf[flip_->offset - start_ - offset];
      byte = static_cast<char>(byte ^ (1 << (flip_->bit & 7)));
    }
    co_return n;
  }

 private:
  FaultyTier& tier_;
  std::unique_ptr<TierReader> inner_;
  std::uint64_t start_;  // object offset of the range's first byte
  std::optional<Flip> flip_;
};

class FaultyTier::Write final : public TierWrite {
 public:
  Write(FaultyTier& tier, std::unique_ptr<TierWrite> inner, std::optional<Tear> tear)
      : tier_(tier), inner_(std::move(inner)), tear_(tear) {}

  TierTask<void> Append(std::string_view data) override {
    if (auto error = co_await tier_.Enter(TierOp::kAppend)) {
      inner_.reset();  // the write is over: the inner one aborts
      co_return std::move(*error);
    }
    if (!inner_) {
      co_return Error(ErrorCode::kInternal, "append to a failed write");
    }
    if (tear_) {
      const std::uint64_t room = tear_->keep > appended_ ? tear_->keep - appended_ : 0;
      appended_ += data.size();
      data = data.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(room, data.size())));
      if (data.empty()) {
        co_return Ok();
      }
    }
    co_return co_await inner_->Append(data);
  }

  TierTask<TierObject> Commit() override {
    if (auto error = co_await tier_.Enter(TierOp::kCommit)) {
      inner_.reset();
      co_return std::move(*error);
    }
    if (!inner_) {
      co_return Error(ErrorCode::kInternal, "commit of a failed write");
    }
    if (tear_ && tear_->fault == WriteFault::kTorn) {
      inner_.reset();  // destroyed uncommitted: nothing becomes visible
      co_return Error(ErrorCode::kUnavailable, "faulty tier: torn write", true);
    }
    co_return co_await inner_->Commit();
  }

 private:
  FaultyTier& tier_;
  std::unique_ptr<TierWrite> inner_;
  std::optional<Tear> tear_;
  std::uint64_t appended_ = 0;  // bytes the caller appended (a torn write passes fewer)
};

FaultyTier::FaultyTier(Tier& inner) : inner_(inner) {}
FaultyTier::~FaultyTier() = default;

asio::awaitable<std::optional<Error>> FaultyTier::Enter(TierOp op) {
  bool hold = false;
  {
    std::lock_guard lock(mu_);
    ++calls_[Index(op)];
    if (hold_[Index(op)] > 0) {
      --hold_[Index(op)];
      hold = true;
    }
  }
  if (hold) {
    asio::steady_timer timer(co_await asio::this_coro::executor,
                             asio::steady_timer::time_point::max());
    std::list<asio::steady_timer*>::iterator entry;
    {
      std::lock_guard lock(mu_);
      entry = waiting_.insert(waiting_.end(), &timer);
    }
    // Ends with operation_aborted when Release cancels it; no exception either way.
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
    std::lock_guard lock(mu_);
    waiting_.erase(entry);
  }
  std::lock_guard lock(mu_);
  auto& queue = fail_[Index(op)];
  if (queue.empty()) {
    co_return std::nullopt;
  }
  Error error = std::move(queue.front());
  queue.pop_front();
  co_return error;
}

void FaultyTier::FailNext(TierOp op, Error error, int count) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < count; ++i) {
    fail_[Index(op)].push_back(error);
  }
}

void FaultyTier::HoldNext(TierOp op) {
  std::lock_guard lock(mu_);
  ++hold_[Index(op)];
}

void FaultyTier::Release() {
  std::lock_guard lock(mu_);
  for (auto* timer : waiting_) {
    timer->cancel();
  }
}

std::size_t FaultyTier::held() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

void FaultyTier::TearNextWrite(WriteFault fault, std::uint64_t keep) {
  std::lock_guard lock(mu_);
  tear_ = Tear{fault, keep};
}

void FaultyTier::FlipBitOnRead(std::string location, std::uint64_t offset, int bit) {
  std::lock_guard lock(mu_);
  flips_[std::move(location)] = Flip{offset, bit};
}

std::uint64_t FaultyTier::calls(TierOp op) const {
  std::lock_guard lock(mu_);
  return calls_[Index(op)];
}

TierTask<std::unique_ptr<TierReader>> FaultyTier::Open(std::string location,
                                                       TierOpenOptions options) {
  if (auto error = co_await Enter(TierOp::kOpen)) {
    co_return std::move(*error);
  }
  std::optional<Flip> flip;
  {
    std::lock_guard lock(mu_);
    if (auto it = flips_.find(location); it != flips_.end()) {
      flip = it->second;
    }
  }
  const std::uint64_t start = options.range.offset;
  auto reader = co_await inner_.Open(std::move(location), std::move(options));
  if (!reader.ok()) {
    co_return std::move(reader).error();
  }
  co_return std::unique_ptr<TierReader>(
      std::make_unique<Reader>(*this, std::move(reader).value(), start, flip));
}

TierTask<std::unique_ptr<TierWrite>> FaultyTier::BeginWrite(TierWriteOptions options) {
  if (auto error = co_await Enter(TierOp::kBeginWrite)) {
    co_return std::move(*error);
  }
  std::optional<Tear> tear;
  {
    std::lock_guard lock(mu_);
    tear = std::exchange(tear_, std::nullopt);
  }
  auto write = co_await inner_.BeginWrite(std::move(options));
  if (!write.ok()) {
    co_return std::move(write).error();
  }
  co_return std::unique_ptr<TierWrite>(
      std::make_unique<Write>(*this, std::move(write).value(), tear));
}

TierTask<TierRemoved> FaultyTier::Remove(std::string location, std::string version_id) {
  if (auto error = co_await Enter(TierOp::kRemove)) {
    co_return std::move(*error);
  }
  co_return co_await inner_.Remove(std::move(location), std::move(version_id));
}

TierTask<TierUsage> FaultyTier::Usage() {
  if (auto error = co_await Enter(TierOp::kUsage)) {
    co_return std::move(*error);
  }
  co_return co_await inner_.Usage();
}

}  // namespace strata::storage::testing
