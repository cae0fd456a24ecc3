#pragma once
// MappedFiles: where replay mapped the program's files, for backtraces.
//
// Replay maps a file the program maps as anonymous memory filled from the
// trace's copy (replay_syscalls.cc), so the kernel, and with it
// /proc/PID/maps, does not know which file is where. The divergence report's
// backtrace needs to know, to unwind through that code and name it
// (diag::backtrace). This is the list it gets.
//
// Simplifications, fine for error reports: one list serves the whole
// session (a forked child sees its parent's mappings at the same addresses,
// as address randomisation is off); munmap is untraced and not seen, so
// unmapped ranges are kept until something else is mapped there.
//
// Owned by the ReplaySession. Not thread-safe.

#include <cstdint>
#include <map>
#include <vector>

#include "core/diag/mapped_module.h"

namespace repro::replayer {

class MappedFiles {
 public:
  /// Notes that `mapping` now covers its range (its length is rounded up to
  /// whole pages). It replaces whatever earlier mapping covered any part of
  /// it, as the kernel's MAP_FIXED does; the rest of those stays.
  void note(diag::MappedModule mapping);

  /// The mappings noted and not replaced since, in address order.
  std::vector<diag::MappedModule> modules() const;

 private:
  std::map<uint64_t, diag::MappedModule> by_start_;  // key: mapping.start
};

}  // namespace repro::replayer
