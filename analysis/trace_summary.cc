#include "analysis/trace_summary.h"

#include <fmt/format.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <map>

#include "analysis/value_names.h"

namespace repro::analysis {
namespace {

// Bytes kept of each memory write of the events remembered per thread.
constexpr size_t kKeptWriteBytes = 4096;

bool is_exit_syscall(const format::Event& event) {
  return event.kind == format::EventKind::kSyscall &&
         (event.syscall_number == SYS_exit_group || event.syscall_number == SYS_exit);
}

// Builds the summary event by event.
class Summarizer {
 public:
  Summarizer(TraceSummary* summary, const SummaryOptions& options)
      : summary_(summary), options_(options) {}

  void add(uint64_t index, const format::Event& event) {
    ThreadSummary* thread = thread_for(index, event);
    // Reports show these in full on their own.
    if (event.kind != format::EventKind::kFailureStacks &&
        event.kind != format::EventKind::kDeadlock) {
      remember(index, event);
    }
    if (thread != nullptr) {
      thread->last_event = index;
      ++thread->event_count;
      ProcessSummary& process = summary_->processes[thread->process];
      process.last_event = index;
      switch (event.kind) {
        case format::EventKind::kExec:
          process.argv = format::split_exec_argv(event.data);
          process.exe = event.path;
          break;
        case format::EventKind::kThreadExit:
          on_thread_exit(index, event, *thread);
          break;
        case format::EventKind::kFailureStacks:
          on_failure_stacks(index, event);
          break;
        case format::EventKind::kDeadlock:
          on_deadlock(index, event);
          break;
        default:
          if (is_exit_syscall(event) && thread->process == 0) {
            exit_call_ = IndexedEvent{index, event};
            exit_call_snapshot_ = snapshot();
          }
          break;
      }
    }
  }

  void finish() {
    if (summary_->failure) {
      return;
    }
    if (killed_) {
      summary_->failure = std::move(*killed_);
      return;
    }
    const ProcessSummary& program = summary_->processes.front();
    if (program.exit_status && WIFEXITED(*program.exit_status) &&
        WEXITSTATUS(*program.exit_status) != 0) {
      FailurePoint failure;
      failure.kind = FailurePoint::Kind::kExitStatus;
      failure.exit_status = *program.exit_status;
      if (exit_call_) {
        failure.event_index = exit_call_->index;
        failure.thread = exit_call_->event.thread;
        failure.last_events = std::move(exit_call_snapshot_);
      } else {
        failure.thread = program.first_thread;
        failure.event_index = summary_->threads[program.first_thread].last_event;
        failure.last_events = snapshot();
      }
      summary_->failure = std::move(failure);
    }
  }

 private:
  // The summary of the event's thread, created at its kThreadStart; null
  // for an event of a thread never started (a damaged trace).
  ThreadSummary* thread_for(uint64_t index, const format::Event& event) {
    if (event.kind == format::EventKind::kThreadStart && event.thread == summary_->threads.size()) {
      ThreadSummary thread;
      thread.thread = event.thread;
      thread.parent_thread = event.parent_thread;
      thread.recorded_tid = event.recorded_tid;
      thread.first_event = index;
      bool first = summary_->threads.empty();
      bool same_process = !first && (event.clone_flags & CLONE_THREAD) != 0 &&
                          event.parent_thread < summary_->threads.size();
      if (same_process) {
        thread.process = summary_->threads[event.parent_thread].process;
      } else {
        ProcessSummary process;
        process.recorded_pid = event.recorded_tid;
        process.first_thread = event.thread;
        process.parent_thread = event.parent_thread;
        process.first_event = index;
        if (first) {
          process.argv = summary_->header.argv;
          process.exe = summary_->header.exe_path;
        } else if (event.parent_thread < summary_->threads.size()) {
          const ProcessSummary& parent =
              summary_->processes[summary_->threads[event.parent_thread].process];
          process.argv = parent.argv;
          process.exe = parent.exe;
        }
        thread.process = summary_->processes.size();
        summary_->processes.push_back(std::move(process));
      }
      summary_->processes[thread.process].threads.push_back(event.thread);
      summary_->threads.push_back(thread);
    }
    if (event.thread >= summary_->threads.size()) {
      return nullptr;
    }
    return &summary_->threads[event.thread];
  }

  void on_thread_exit(uint64_t index, const format::Event& event, ThreadSummary& thread) {
    // The program killed by a signal with no stacks logged (SIGKILL from
    // outside). Only the first process: repro itself ends the processes a
    // program leaves running with SIGKILL, which is no failure of the run.
    if (thread.process == 0 && WIFSIGNALED(event.exit_status) && !killed_ && !summary_->failure &&
        !(deadlocked_ && WTERMSIG(event.exit_status) == SIGKILL)) {
      FailurePoint failure;
      failure.kind = FailurePoint::Kind::kFatalSignal;
      failure.event_index = index;
      failure.thread = event.thread;
      failure.signal_number = WTERMSIG(event.exit_status);
      failure.exit_status = event.exit_status;
      failure.last_events = snapshot();
      killed_ = std::move(failure);
    }
    thread.exit_status = event.exit_status;
    ProcessSummary& process = summary_->processes[thread.process];
    bool all_ended = true;
    for (uint32_t member : process.threads) {
      all_ended = all_ended && summary_->threads[member].exit_status.has_value();
    }
    if (all_ended) {
      process.exit_status = event.exit_status;
    }
  }

  void on_failure_stacks(uint64_t index, const format::Event& event) {
    if (summary_->failure) {
      return;  // the first failure is the one to explain
    }
    FailurePoint failure;
    failure.kind = FailurePoint::Kind::kFatalSignal;
    failure.event_index = index;
    failure.thread = event.thread;
    Result<format::FailureStacks> stacks = format::decode_failure_stacks(event.data);
    if (stacks.is_ok()) {
      failure.signal_number = stacks->signal_number;
      failure.stacks = std::move(*stacks);
    } else {
      failure.stacks_error = fmt::format("event #{}: {}", index, stacks.status().message());
    }
    failure.last_events = snapshot();
    summary_->failure = std::move(failure);
  }

  void on_deadlock(uint64_t index, const format::Event& event) {
    deadlocked_ = true;
    if (summary_->failure && summary_->failure->kind == FailurePoint::Kind::kDeadlock) {
      return;
    }
    FailurePoint failure;
    failure.kind = FailurePoint::Kind::kDeadlock;
    failure.event_index = index;
    failure.thread = event.thread;
    failure.deadlock_report = event.data;
    failure.last_events = snapshot();
    summary_->failure = std::move(failure);  // a deadlock explains more than what came before
  }

  void remember(uint64_t index, const format::Event& event) {
    if (options_.last_events == 0) {
      return;
    }
    std::deque<IndexedEvent>& recent = recent_[event.thread];
    if (recent.size() == options_.last_events) {
      recent.pop_front();
    }
    recent.push_back(IndexedEvent{index, event});
    // Memory contents can be megabytes; the decoded line needs the first
    // bytes of a buffer (32 shown) and whole structs (a stat is 144).
    for (format::MemoryWrite& write : recent.back().event.writes) {
      write.bytes.resize(std::min<size_t>(write.bytes.size(), kKeptWriteBytes));
    }
  }

  std::vector<std::pair<uint32_t, std::vector<IndexedEvent>>> snapshot() const {
    std::vector<std::pair<uint32_t, std::vector<IndexedEvent>>> events;
    for (const auto& [thread, recent] : recent_) {
      if (thread < summary_->threads.size() && !summary_->threads[thread].exit_status) {
        events.emplace_back(thread, std::vector<IndexedEvent>(recent.begin(), recent.end()));
      }
    }
    return events;
  }

  TraceSummary* summary_;
  const SummaryOptions& options_;
  std::map<uint32_t, std::deque<IndexedEvent>> recent_;
  std::optional<IndexedEvent> exit_call_;
  std::vector<std::pair<uint32_t, std::vector<IndexedEvent>>> exit_call_snapshot_;
  std::optional<FailurePoint> killed_;
  bool deadlocked_ = false;
};

}  // namespace

std::string describe_wait_status(int32_t status) {
  if (WIFEXITED(status)) {
    return fmt::format("exited with status {}", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return fmt::format("killed by {}{}", signal_number_name(WTERMSIG(status)),
                       WCOREDUMP(status) ? " (core dumped)" : "");
  }
  return fmt::format("ended with wait status {:#x}", status);
}

Result<TraceSummary> summarize_trace(format::TraceReader& reader, const SummaryOptions& options) {
  TraceSummary summary;
  summary.header = reader.header();
  summary.complete = reader.state() == format::TraceState::kComplete;
  Summarizer summarizer(&summary, options);
  format::Event event;
  for (uint64_t index = 0;; ++index) {
    Result<bool> more = reader.next(&event);
    if (!more.is_ok()) {
      if (index == 0) {
        return more.status();
      }
      summary.read_error = more.status().message();
      break;
    }
    if (!*more) {
      break;
    }
    summarizer.add(index, event);
    summary.event_count = index + 1;
  }
  if (summary.processes.empty()) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("trace '{}' has no thread-start event", reader.dir()));
  }
  summarizer.finish();
  return summary;
}

}  // namespace repro::analysis
