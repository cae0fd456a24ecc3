#pragma once
// ReplayThread: the replayer's view of one live tracee thread, and where it
// stands relative to the trace. Owned by the ReplaySession; only used on
// the replay thread.

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>

#include "core/os/tracee.h"

namespace repro::replayer {

struct ReplayThread {
  uint32_t index = 0;
  pid_t tid = 0;           // live tid
  pid_t pid = 0;           // live thread group id
  int32_t recorded_tid = 0;
  uint32_t parent_index = 0;
  bool shares_parent_memory = false;  // created with CLONE_VM (vfork, posix_spawn)

  enum class Where {
    kStarting,   // created; its first ptrace-stop has not been seen
    kParked,     // in a ptrace-stop after its last event; PTRACE_CONT resumes it
    kRunning,    // resumed; its next stop is still to come
    kAtEntry,    // stopped at a syscall's seccomp stop, not yet answered
    kInSyscall,  // executing a syscall for real; its exit stop is to come
    kExiting,    // on its way out
    kGone,
  };
  Where where = Where::kStarting;

  // The replay queue of its process holds a batch of its fast-path calls
  // (fast_path_answers.h), to be used up before its next event is done.
  bool fast_path_queued = false;

  // Valid while kAtEntry / kInSyscall: the syscall and its entry registers.
  int syscall_number = -1;
  std::array<uint64_t, 6> args{};
  os::Registers entry_regs{};

  // A kMappedFile event seen before this thread's mmap: what to map.
  std::string mapped_content_id;
  int queued_signal = 0;  // a signal already sent ahead of its kSignal event

  // With a ReplayWatcher (replay_watcher.h). The last resume was
  // PTRACE_SINGLESTEP (`stepping`), on the watcher's behalf in place of a
  // PTRACE_CONT (`watcher_step`); the instruction stepped is a pushf, which
  // pushes the trap flag the step set (`clear_pushed_trap_flag`), or a
  // syscall, which copies it into r11 (`clear_r11_trap_flag`); where
  // the watcher last saw the thread (0: it ran freely since); a watcher's
  // step entered a syscall, which ends that step when the thread goes on.
  bool stepping = false;
  bool stepped_into_syscall = false;
  bool watcher_step = false;
  bool clear_pushed_trap_flag = false;
  bool clear_r11_trap_flag = false;
  uint64_t watched_rip = 0;
};

}  // namespace repro::replayer
