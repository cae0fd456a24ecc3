#pragma once
// SyscallRecorder: after a recorded syscall returns, captures the memory the
// kernel wrote (driven by the syscall tables, plus code for the syscalls
// whose effects depend on a command argument: ioctl, fcntl, prctl, ...), and
// the bytes the program wrote to the recording's own stdout and stderr, so
// replay can print them without touching any file.
//
// Not thread-safe; owned by the RecordSession.

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/format/event.h"

namespace repro::tracer {

class SyscallRecorder {
 public:
  /// Remembers which files are the recorder's own stdout and stderr.
  SyscallRecorder();

  /// Fills event->writes and the effect flags of event->syscall_flags for
  /// the completed syscall in `event` (number, args, result set), made by
  /// thread `tid` of process `pid`. Errors: tracee_died, io_error.
  Status capture(pid_t tid, pid_t pid, format::Event* event);

  /// Whether the syscall about to run in process `pid` (number, args) is
  /// copy_file_range, sendfile or splice into the recording's own stdout
  /// or stderr. The kernel moves those bytes without them passing through
  /// the program's memory, so the recorder could not keep them for replay
  /// to print: such calls are answered ENOSYS, and programs (cat, cp)
  /// fall back to read and write, whose bytes it keeps.
  bool copies_to_recording_output(pid_t pid, int number, const std::array<uint64_t, 6>& args) const;

  /// The recording's own stdout and stderr, as (st_dev, st_ino): at most
  /// two entries, fewer when repro had no such descriptor.
  std::vector<std::pair<uint64_t, uint64_t>> output_files() const;

 private:
  Status capture_table_effects(pid_t tid, format::Event* event);
  Status capture_failure_effects(pid_t tid, format::Event* event);
  Status capture_custom_effects(pid_t tid, int arg_index, format::Event* event);
  Status capture_ioctl_effects(pid_t tid, format::Event* event);
  Status capture_ipc_ctl_effects(pid_t tid, format::Event* event);
  Status capture_keyctl_effects(pid_t tid, format::Event* event);
  Status capture_output(pid_t tid, pid_t pid, format::Event* event);
  Status add_write(pid_t tid, uint64_t address, uint64_t length, format::Event* event);
  // Whether descriptor `fd` of process `pid` is the recording's stdout
  // (kSyscallOutputStdout), its stderr (kSyscallOutputStderr), or neither (0).
  uint32_t recording_output(pid_t pid, int fd) const;

  uint64_t stdout_device_ = 0, stdout_inode_ = 0;
  uint64_t stderr_device_ = 0, stderr_inode_ = 0;
  bool have_stdout_ = false, have_stderr_ = false;
};

}  // namespace repro::tracer
