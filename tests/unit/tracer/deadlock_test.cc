#include "tracer/deadlock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using repro::tracer::SignalTimers;
using repro::tracer::wait_only_recorded_threads_end;
using repro::tracer::WaitingThread;

namespace {

WaitingThread waiting(int number, std::array<uint64_t, 6> args) {
  return WaitingThread{getpid(), getpid(), number, args};
}

int shared_word = 0;

}  // namespace

TEST_CASE("futex waits without a timeout on a private futex count", "[tracer][deadlock]") {
  std::set<pid_t> recorded{getpid()};
  auto word = reinterpret_cast<uint64_t>(&shared_word);
  auto wait = wait_only_recorded_threads_end(
      waiting(SYS_futex, {word, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0}), recorded);
  REQUIRE(wait);
  CHECK(wait->starts_with("futex wait on 0x"));
  CHECK(wait_only_recorded_threads_end(waiting(SYS_futex, {word, FUTEX_LOCK_PI_PRIVATE, 0, 0, 0, 0}),
                                       recorded)
            ->starts_with("futex lock on"));
  // Not private by flag, but in this process's private data mapping.
  CHECK(wait_only_recorded_threads_end(waiting(SYS_futex, {word, FUTEX_WAIT, 0, 0, 0, 0}), recorded));
  // A timeout ends it; a wake is no wait.
  CHECK_FALSE(wait_only_recorded_threads_end(
      waiting(SYS_futex, {word, FUTEX_WAIT_PRIVATE, 0, 0x7fff0000, 0, 0}), recorded));
  CHECK_FALSE(wait_only_recorded_threads_end(
      waiting(SYS_futex, {word, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0}), recorded));
}

TEST_CASE("a pipe counts only while every other end is recorded", "[tracer][deadlock]") {
  int ends[2];
  REQUIRE(pipe(ends) == 0);
  auto read_wait = waiting(SYS_read, {static_cast<uint64_t>(ends[0]), 0, 1, 0, 0, 0});
  auto write_wait = waiting(SYS_write, {static_cast<uint64_t>(ends[1]), 0, 1, 0, 0, 0});
  // This process holds the write end: recorded or not decides.
  auto wait = wait_only_recorded_threads_end(read_wait, {getpid()});
  REQUIRE(wait);
  CHECK(wait->starts_with("read from a pipe"));
  CHECK(wait_only_recorded_threads_end(write_wait, {getpid()}));
  CHECK_FALSE(wait_only_recorded_threads_end(read_wait, {}));
  // A read of something else (a regular file's descriptor: stdin may be one) never counts.
  auto not_a_pipe = waiting(SYS_read, {999999, 0, 1, 0, 0, 0});
  CHECK_FALSE(wait_only_recorded_threads_end(not_a_pipe, {getpid()}));
  close(ends[0]);
  close(ends[1]);
}

TEST_CASE("a child wait counts unless it cannot block", "[tracer][deadlock]") {
  auto wait = wait_only_recorded_threads_end(waiting(SYS_wait4, {static_cast<uint64_t>(-1), 0, 0, 0, 0, 0}), {getpid()});
  REQUIRE(wait);
  CHECK(*wait == "wait4 for any child");
  CHECK_FALSE(wait_only_recorded_threads_end(
      waiting(SYS_wait4, {static_cast<uint64_t>(-1), 0, WNOHANG, 0, 0, 0}), {getpid()}));
  CHECK(wait_only_recorded_threads_end(waiting(SYS_waitid, {P_ALL, 0, 0, WEXITED, 0, 0}), {getpid()}));
  CHECK_FALSE(wait_only_recorded_threads_end(waiting(SYS_nanosleep, {0, 0, 0, 0, 0, 0}), {getpid()}));
  CHECK_FALSE(wait_only_recorded_threads_end(waiting(SYS_pause, {0, 0, 0, 0, 0, 0}), {getpid()}));
}

TEST_CASE("timers that may send a signal rule a deadlock out", "[tracer][deadlock]") {
  SignalTimers timers;
  CHECK_FALSE(timers.may_fire(10));
  timers.note_alarm(10, 20);
  CHECK(timers.may_fire(10));
  CHECK_FALSE(timers.may_fire(11));
  timers.note_alarm(10, 0);  // cancelled
  CHECK_FALSE(timers.may_fire(10));

  itimerval periodic{{0, 1000}, {0, 1000}};
  timers.note_real_timer(10, periodic);
  CHECK(timers.may_fire(10));
  itimerval off{};
  timers.note_real_timer(10, off);
  CHECK_FALSE(timers.may_fire(10));
  itimerval expired{{0, 0}, {0, 1}};  // one shot, 1 µs: long past by the time it is asked
  timers.note_real_timer(10, expired);
  usleep(1000);
  CHECK_FALSE(timers.may_fire(10));

  timers.note_posix_timer(12, /*created=*/true);
  timers.note_posix_timer(12, /*created=*/true);
  timers.note_posix_timer(12, /*created=*/false);
  CHECK(timers.may_fire(12));
  timers.note_exec(12);  // exec deletes POSIX timers
  CHECK_FALSE(timers.may_fire(12));
  timers.note_alarm(13, 5);
  timers.forget(13);
  CHECK_FALSE(timers.may_fire(13));
}
