#pragma once
// TraceSummary: what happened in a recorded run, read from its trace alone
// (no replay): the program's processes and threads with their lifetimes and
// ends, and the point where the run failed, if it did, with each thread's
// last events before it. `repro report` prints it.
//
// The failure point, in order of preference:
// - a deadlock (kDeadlock): the recorder's report of each thread's wait;
// - a fatal signal: the first kFailureStacks event, with the faulting
//   instruction and each thread's backtrace as the recorder saw them, or
//   the first process killed by a signal (the stacks are missing then, for
//   example for SIGKILL from outside);
// - the first process's non-zero exit status: its exit or exit_group.
// A run that exited 0 and never died of a signal has no failure point.
//
// Plain values; summarize_trace() reads the whole trace once.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/format/event.h"
#include "core/format/failure_stacks.h"
#include "core/format/trace_header.h"
#include "core/format/trace_reader.h"

namespace repro::analysis {

/// An event and its index in the trace.
struct IndexedEvent {
  uint64_t index = 0;
  format::Event event;
};

struct ThreadSummary {
  uint32_t thread = 0;         // index in the trace (t1 is 1)
  uint32_t parent_thread = 0;  // who created it (itself for the first thread)
  int32_t recorded_tid = 0;
  size_t process = 0;          // index into TraceSummary::processes
  uint64_t first_event = 0;    // its kThreadStart
  uint64_t last_event = 0;
  uint64_t event_count = 0;
  /// Raw wait status of its kThreadExit; nullopt if the trace ends first.
  std::optional<int32_t> exit_status;
};

struct ProcessSummary {
  int32_t recorded_pid = 0;    // its first thread's tid
  uint32_t first_thread = 0;
  uint32_t parent_thread = 0;  // the thread that forked it (itself for the first)
  std::vector<std::string> argv;  // of its last exec (a forked child: its parent's)
  std::string exe;                // the program file it runs, as the header or exec event names it
  std::vector<uint32_t> threads;  // in order of appearance
  uint64_t first_event = 0;
  uint64_t last_event = 0;
  /// Raw wait status of its last thread's kThreadExit; nullopt while any
  /// of its threads is still running at the end of the trace.
  std::optional<int32_t> exit_status;
};

struct FailurePoint {
  enum class Kind { kDeadlock, kFatalSignal, kExitStatus };
  Kind kind = Kind::kExitStatus;
  uint64_t event_index = 0;  // the deadlock, failure-stacks, thread-exit or exit syscall event
  uint32_t thread = 0;       // the failing thread (for a deadlock: the first waiting one)
  int32_t signal_number = 0;  // kFatalSignal
  int32_t exit_status = 0;    // raw wait status of the failing process, when known
  /// kFatalSignal: what the recorder saw (absent when no kFailureStacks
  /// event was logged); stacks_error says why one could not be read.
  std::optional<format::FailureStacks> stacks;
  std::string stacks_error;
  std::string deadlock_report;  // kDeadlock: the recorder's text
  /// Each thread's last events up to the failure point (at most
  /// SummaryOptions::last_events each), in the order of `threads`.
  std::vector<std::pair<uint32_t, std::vector<IndexedEvent>>> last_events;
};

struct TraceSummary {
  format::TraceHeader header;
  bool complete = false;
  uint64_t event_count = 0;
  std::vector<ThreadSummary> threads;   // by thread index
  std::vector<ProcessSummary> processes;  // in order of appearance; the first is the program
  std::optional<FailurePoint> failure;
  /// Set when the trace could be read only in part (damage after some
  /// valid events): the summary covers what was read.
  std::string read_error;
};

struct SummaryOptions {
  /// Events kept per thread before the failure point. 4: enough to see
  /// what a thread was doing (the syscall it waits in, the signal it got)
  /// without burying the backtraces.
  size_t last_events = 4;
};

/// Reads every event of `reader` (positioned at the first event). Returns
/// the summary; a read error after the first event is kept in read_error.
/// Errors: corruption when no event at all could be read.
Result<TraceSummary> summarize_trace(format::TraceReader& reader, const SummaryOptions& options);

/// "exited with status 3", "killed by SIGSEGV (core dumped)" for a raw wait status.
std::string describe_wait_status(int32_t status);

/// "SIGSEGV" (or "signal 77" for a number without a name).
std::string signal_name(int32_t signal);

}  // namespace repro::analysis
