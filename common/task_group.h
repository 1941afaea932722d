// TaskGroup: the background coroutines of one owner (a worker, a core's sessions), counted
// and cancellable, as Seastar's gate: nothing runs detached, so shutdown is
//   Close()  refuse new tasks,
//   Cancel() ask every task to stop (Asio's terminal cancellation, through each task's
//            own cancellation slot: a timer wait, a socket read or a ClockTimer wait in
//            it ends with operation_aborted, and its next co_await throws),
//   Join() / Wait()  until the count is 0,
// and only then may what the tasks use go. A task counts from Spawn until its coroutine
// frame is gone: it finished, threw (logged, unless it was cancelled), or its io_context
// was destroyed with it.
//
// Thread-safe: Spawn, Close, Cancel and size from any thread. A task's cancellation is
// emitted on its own executor (posted), so an executor must be one io_context's thread or
// a strand. Join blocks: never call it on a thread that runs a task of the group. The
// group outlives its tasks: the destructor closes, cancels and joins.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace strata {

class TaskGroup {
 public:
  TaskGroup() = default;
  ~TaskGroup();
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  // Starts `task` on `executor`, counted, with a cancellation slot of its own. False (the
  // task is destroyed unstarted) once the group is closed.
  // `cancellable` false: the task gets no cancellation slot (Cancel does not reach it); for
  // a task its owner stops another way, such as an accept loop ended by closing its
  // acceptor. Seen with Boost 1.81: after an accept failed with EMFILE, the loop's next
  // timer wait found a destroyed handler in its connected slot (UBSan: invalid vptr in
  // cancellation_slot::emplace; test_connection_limits.py's descriptor flood).
  bool Spawn(const boost::asio::any_io_executor& executor, boost::asio::awaitable<void> task,
             bool cancellable = true);
  void Close();
  // Cancels every task counted now, and every task spawned from now on (until Close
  // refuses them).
  void Cancel();
  // Completes once no task is counted (at once when none is).
  boost::asio::awaitable<void> Wait();
  void Join();
  // Join with a deadline (real time): false when tasks were still counted then.
  bool JoinUntil(std::chrono::steady_clock::time_point deadline);

  std::size_t size() const;
  bool closed() const;

 private:
  struct Task {
    boost::asio::any_io_executor executor;
    boost::asio::cancellation_signal signal;  // emitted on `executor` only
    bool finished = false;                    // on `executor` only
  };
  struct Finish;
  static boost::asio::awaitable<void> Run(Finish finish, boost::asio::awaitable<void> body);
  void Finished(std::uint64_t id);

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable idle_;
  bool closed_ = false;
  bool cancelled_ = false;  // a task spawned since Cancel is cancelled at once
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, std::shared_ptr<Task>> tasks_;
  // Wait()s in progress: each sleeps on its timer until the count reaches 0, when the
  // timer is cancelled on its executor.
  struct Waiter {
    boost::asio::any_io_executor executor;
    std::weak_ptr<boost::asio::steady_timer> timer;
  };
  std::vector<Waiter> waiters_;
};

}  // namespace strata
