#pragma once
// Starting a program under ptrace, shared by record and replay.
//
// spawn_traced() forks; the child disables address-space randomisation,
// stops itself, runs the caller's `before_exec` hook (the seccomp filter goes
// there) and execs. The parent seizes it with `ptrace_options` and runs it
// to the PTRACE_EVENT_EXEC stop of that first exec, so both sessions start
// from the same point: the new image, before its first instruction.

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/os/isolation.h"

namespace repro::os {

struct SpawnOptions {
  std::string exe_path;               // the file to exec (no PATH search)
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd;                    // empty: inherit
  unsigned long ptrace_options = 0;   // PTRACE_O_* bits for PTRACE_SEIZE
  /// Runs in the child after it stopped and was seized, right before
  /// execve. Returns errno-style 0 on success; a nonzero value aborts.
  std::function<int()> before_exec;
  /// Replay: the child isolates itself before it stops (isolate_process()
  /// of isolation.h), keeping `writable_dir` writable. Where the host
  /// refuses, the program runs without and `*isolation_failure` (required
  /// with `isolate`) says which call failed; it is left clear otherwise.
  bool isolate = false;
  std::string writable_dir;
  IsolationFailure* isolation_failure = nullptr;
};

/// Returns the pid of the child, stopped at its first exec event. Errors:
/// io_error (fork/ptrace failed), not_found (exec failed in the child).
Result<pid_t> spawn_traced(const SpawnOptions& options);

/// Resolves a program name like a shell would (PATH search when it has no
/// '/'). not_found with a clear message if there is no such executable.
Result<std::string> find_program(const std::string& name);

}  // namespace repro::os
