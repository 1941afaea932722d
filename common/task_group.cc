#include "common/task_group.h"

#include <spdlog/spdlog.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>
#include <exception>
#include <utility>

namespace strata {
namespace asio = boost::asio;

// Uncounts a task when its coroutine frame goes: finished, thrown, or destroyed with its
// io_context.
// A parameter of the task's coroutine, so that it goes with the frame even when the
// frame never ran (cancelled before its first step).
struct TaskGroup::Finish {
  Finish(TaskGroup* g, std::uint64_t i) : group(g), id(i) {}
  Finish(Finish&& other) noexcept : group(std::exchange(other.group, nullptr)), id(other.id) {}
  Finish& operator=(Finish&&) = delete;
  ~Finish() {
    if (group != nullptr) {
      group->Finished(id);
    }
  }
  TaskGroup* group;
  std::uint64_t id;
};

TaskGroup::~TaskGroup() {
  Close();
  Cancel();
  Join();
}

bool TaskGroup::Spawn(const asio::any_io_executor& executor, asio::awaitable<void> body,
                      bool cancellable) {
  auto task = std::make_shared<Task>();
  task->executor = executor;
  std::uint64_t id = 0;
  bool cancelled = false;
  {
    std::lock_guard lock(mu_);
    if (closed_) {
      return false;
    }
    id = ++next_id_;
    tasks_.emplace(id, task);
    cancelled = cancelled_;
  }
  // An unconnected slot (default-constructed) gives the spawn no cancellation at all.
  asio::cancellation_slot slot = cancellable ? task->signal.slot() : asio::cancellation_slot();
  asio::co_spawn(executor, Run(Finish(this, id), std::move(body)),
                 asio::bind_cancellation_slot(slot, [task](std::exception_ptr) mutable {
                   // On the task's executor, the coroutine done. The signal holds the
                   // cancellation state its frames used until the spawn's own last step,
                   // which runs after this handler: it goes one turn later.
                   task->finished = true;
                   asio::any_io_executor executor = task->executor;
                   asio::post(executor, [keep = std::move(task)] {});
                 }));
  if (cancelled) {
    asio::post(executor, [task] {
      if (!task->finished) {
        task->signal.emit(asio::cancellation_type::terminal);
      }
    });
  }
  return true;
}

asio::awaitable<void> TaskGroup::Run([[maybe_unused]] Finish finish, asio::awaitable<void> body) {
  try {
    co_await std::move(body);
  } catch (const boost::system::system_error& e) {
    if (e.code() != asio::error::operation_aborted) {
      spdlog::error("background task failed: {}", e.what());
    }
  } catch (const std::exception& e) {
    spdlog::error("background task failed: {}", e.what());
  }
  // A cancelled task is over: co_spawn's own last steps must not throw for it.
  co_await asio::this_coro::throw_if_cancelled(false);
}

void TaskGroup::Finished(std::uint64_t id) {
  std::vector<Waiter> wake;
  {
    std::lock_guard lock(mu_);
    tasks_.erase(id);
    if (!tasks_.empty()) {
      return;
    }
    wake.swap(waiters_);
    idle_.notify_all();
  }
  for (auto& waiter : wake) {
    asio::post(waiter.executor, [timer = std::move(waiter.timer)] {
      if (auto t = timer.lock()) {
        t->cancel();
      }
    });
  }
}

void TaskGroup::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
}

void TaskGroup::Cancel() {
  std::vector<std::shared_ptr<Task>> tasks;
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    tasks.reserve(tasks_.size());
    for (const auto& [id, task] : tasks_) {
      tasks.push_back(task);
    }
  }
  for (auto& task : tasks) {
    asio::any_io_executor executor = task->executor;
    asio::post(executor, [task = std::move(task)] {
      if (!task->finished) {
        task->signal.emit(asio::cancellation_type::terminal);
      }
    });
  }
}

asio::awaitable<void> TaskGroup::Wait() {
  auto executor = co_await asio::this_coro::executor;
  auto timer =
      std::make_shared<asio::steady_timer>(executor, asio::steady_timer::time_point::max());
  {
    std::lock_guard lock(mu_);
    if (tasks_.empty()) {
      co_return;
    }
    waiters_.push_back({executor, timer});
  }
  // The cancel Finished posts to this executor runs only once this coroutine waits.
  boost::system::error_code ec;
  co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

void TaskGroup::Join() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return tasks_.empty(); });
}

bool TaskGroup::JoinUntil(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return idle_.wait_until(lock, deadline, [&] { return tasks_.empty(); });
}

std::size_t TaskGroup::size() const {
  std::lock_guard lock(mu_);
  return tasks_.size();
}

bool TaskGroup::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

}  // namespace strata
