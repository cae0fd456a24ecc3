#pragma once
// OutputOrder: keeps syscalls whose effects are seen outside the recording
// (writes and sends to a file, pipe, socket or terminal) from overlapping in
// the kernel when they go to the same open object.
//
// Why: the recorder lets a thread into a syscall that may block and passes
// the CPU on; the syscall's event is logged when the kernel lets it return.
// Two threads writing to one pipe or file could then be inside their writes
// at once, and the order of their exit events need not be the order in
// which the kernel wrote their bytes, so a replay that prints the recorded
// output in trace order would print it in another order than the recording
// did. While one thread's output syscall to an object is in the kernel,
// another thread's output syscall to the same object is held at its entry
// (its kSyscallEntered event is logged, so replay knows where it stands)
// and let in when the first returns. Exit events then come in the order the
// bytes went out. exit_group and execve, which kill a process's other
// threads, are held the same way while an output syscall of that process
// is in the kernel, so a write the kernel completes is never lost from the
// trace; that hold gives up after kExitHoldLimit (a writer blocked on a full
// pipe nobody reads would otherwise keep the program from exiting).
//
// Not thread-safe; owned by the RecordSession.

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace repro::tracer {

/// The open object an output syscall writes to, named by device and inode
/// (a pipe's and a socket's inode too).
struct OutputTarget {
  uint64_t device = 0;
  uint64_t inode = 0;
  /// A regular file or block device: a write to it completes without
  /// waiting for another process, so the writer may keep the CPU.
  bool completes_alone = false;

  bool operator==(const OutputTarget& other) const {
    return device == other.device && inode == other.inode;
  }
};

/// The object that syscall `number` of process `pid`, with `args`, writes
/// to, or nothing for a syscall that writes to no open object (or an fd
/// that is not open: the syscall fails).
std::optional<OutputTarget> output_target(pid_t pid, int number,
                                          const std::array<uint64_t, 6>& args);

/// How long exit_group or execve waits for an output syscall of its process
/// to return. A write to a pipe with room, a file or a socket returns within
/// microseconds; one that takes longer is blocked on a reader, which
/// natively the exit would cut short. Too short shows as a line missing
/// from a replay's output when a writer was slow; too long, as a recording
/// that lingers for this long at exit.
constexpr std::chrono::milliseconds kExitHoldLimit{1000};

class OutputOrder {
 public:
  /// True if another thread's output syscall to `target` is in the kernel.
  bool busy(const OutputTarget& target, pid_t tid) const;
  /// True if a thread of process `pid` other than `tid` is inside an
  /// output syscall.
  bool process_busy(pid_t pid, pid_t tid) const;

  /// Thread `tid` of process `pid` enters an output syscall to `target`.
  void begin(pid_t tid, pid_t pid, const OutputTarget& target);
  /// Thread `tid` waits until `target` is free, or with no target, until
  /// process `pid` has no output syscall in the kernel.
  void hold(pid_t tid, pid_t pid, std::optional<OutputTarget> target);

  /// Thread `tid` left its output syscall (or is gone). Returns the held
  /// threads that may now try again.
  std::vector<pid_t> end(pid_t tid);

 private:
  struct InFlight {
    pid_t pid;
    OutputTarget target;
  };
  struct Held {
    pid_t pid;
    std::optional<OutputTarget> target;
  };
  std::map<pid_t, InFlight> in_flight_;  // by thread
  std::map<pid_t, Held> held_;           // by thread
};

}  // namespace repro::tracer
