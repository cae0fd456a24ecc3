#pragma once
// ExecPaths: makes, in a private scratch directory, paths of an exact
// length that lead to the trace's copy of an executable.
//
// Why: the kernel copies the path given to execve onto the new stack
// (AT_EXECFN), so the whole initial stack, and every stack address the
// program later passes to a syscall, depends on that path's length. Replay
// execs the trace's copy, not the original file (which may have changed or
// vanished), through a path exactly as long as the recorded one, relative to
// the scratch directory the replayed program runs in.
//
// Owns the scratch directory and removes it on destruction. Not thread-safe.

#include <map>
#include <string>
#include <utility>

#include "core/base/status.h"

namespace repro::replayer {

class ExecPaths {
 public:
  /// Creates the scratch directory. io_error on failure.
  static Result<ExecPaths> create();
  ExecPaths(ExecPaths&& other) noexcept;
  ExecPaths& operator=(ExecPaths&&) = delete;
  ~ExecPaths();

  /// A path relative to dir(), exactly `length` bytes long, naming
  /// `target` (made executable if the stored copy is not). The same for
  /// the same length and target: a program that execs one file many times
  /// makes one link (and one private copy).
  Result<std::string> make(size_t length, const std::string& target);
  const std::string& dir() const { return dir_; }

 private:
  explicit ExecPaths(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  unsigned counter_ = 0;
  std::map<std::pair<size_t, std::string>, std::string> made_;  // (length, target) -> path
};

}  // namespace repro::replayer
