#include "hunter/shrink.h"

#include <fmt/core.h>
#include <sys/syscall.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/format/event.h"
#include "core/format/trace_reader.h"
#include "core/syscalls/syscall_table.h"
#include "hunter/runs.h"

namespace repro::hunter {
namespace {

// What the racing pair needs of one event.
struct EventSummary {
  format::EventKind kind = format::EventKind::kSyscall;
  uint32_t thread = 0;
  int syscall_number = 0;
  uint64_t first_arg = 0;
  int signal_number = 0;
  bool output_matches = false;  // an output syscall whose bytes an output trigger matches
};

// A thread's own work, as opposed to the bookkeeping around it and its
// end (a thread that exits races with no one).
bool is_step(const EventSummary& e) {
  bool syscall = e.kind == format::EventKind::kSyscall || e.kind == format::EventKind::kSyscallEntered;
  return (syscall && e.syscall_number != SYS_exit && e.syscall_number != SYS_exit_group) ||
         e.kind == format::EventKind::kPreempt || e.kind == format::EventKind::kSignal;
}

// The event where the failure shows: the deadlock, the fatal signal, the
// exit_group with the failing status, the output that matched; else the
// trace's last event.
size_t failure_event(const std::vector<EventSummary>& events, const Trigger& trigger, int status) {
  for (size_t i = 0; i < events.size(); ++i) {
    const EventSummary& e = events[i];
    bool here = false;
    switch (trigger.kind) {
      case Trigger::Kind::kDeadlock:
        here = e.kind == format::EventKind::kDeadlock;
        break;
      case Trigger::Kind::kOutput:
        here = e.output_matches;
        break;
      default:
        here = (status > 128 && e.kind == format::EventKind::kSignal &&
                e.signal_number == status - 128) ||
               (status <= 128 && e.kind == format::EventKind::kSyscall &&
                e.syscall_number == SYS_exit_group && static_cast<int>(e.first_arg & 0xff) == status);
        break;
    }
    if (here) {
      return i;
    }
  }
  return events.empty() ? 0 : events.size() - 1;
}

std::string step_name(const EventSummary& e) {
  switch (e.kind) {
    case format::EventKind::kPreempt:
      return "a preemption";
    case format::EventKind::kSignal:
      return fmt::format("signal {}", e.signal_number);
    default:
      return syscalls::syscall_name(e.syscall_number);
  }
}

// From `repro replay --stop-at` output: where thread `index` stood, as its
// first frame in the program's own executable (else the first frame with a
// source line, else the first frame).
std::string place_of(const std::string& replay_err, uint32_t index, const std::string& exe) {
  std::istringstream lines(replay_err);
  std::string header = fmt::format("repro: t{} (", index);
  bool in_thread = false;
  std::vector<std::string> frames;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("repro: t")) {
      in_thread = line.starts_with(header);
    } else if (in_thread && line.starts_with("repro:   #")) {
      frames.push_back(line);
    }
  }
  // "repro:   #N 0xADDR NAME at FILE:LINE (PATH)" -> "NAME at FILE:LINE".
  auto place = [](const std::string& frame) {
    size_t name = frame.find(' ', frame.find("0x"));
    size_t path = frame.rfind(" (");
    return name == std::string::npos ? frame
                                     : frame.substr(name + 1, path == std::string::npos || path <= name
                                                                  ? std::string::npos
                                                                  : path - name - 1);
  };
  for (const std::string& frame : frames) {
    if (frame.ends_with("(" + exe + ")")) {
      return place(frame);
    }
  }
  for (const std::string& frame : frames) {
    if (frame.find(" at ") != std::string::npos) {
      return place(frame);
    }
  }
  return frames.empty() ? "an unknown place" : place(frames.front());
}

// What `repro replay --stop-at EVENT TRACE` printed on stderr.
Result<std::string> stopped_replay(const std::string& repro_path, const std::string& trace,
                                   size_t event) {
  std::string files = trace + ".stop";
  REPRO_ASSIGN_OR_RETURN(pid_t replay, spawn({repro_path, "replay", "--stop-at",
                                              std::to_string(event), trace},
                                             files + ".out", files + ".err"));
  REPRO_RETURN_IF_ERROR(wait_for(replay).status());
  std::string text = read_file(files + ".err");
  remove_run(files);
  return text;
}

Result<std::string> racing_pair(const ShrinkOptions& options, const std::string& trace,
                                const Trigger& trigger) {
  REPRO_ASSIGN_OR_RETURN(std::unique_ptr<format::TraceReader> reader,
                         format::TraceReader::open(trace));
  std::string exe = reader->header().exe_path;
  std::vector<EventSummary> events;
  format::Event event;
  while (true) {
    REPRO_ASSIGN_OR_RETURN(bool more, reader->next(&event));
    if (!more) {
      break;
    }
    EventSummary e{event.kind, event.thread, event.syscall_number, event.args[0],
                   event.signal_number, false};
    if (trigger.kind == Trigger::Kind::kOutput &&
        (event.syscall_flags & (format::kSyscallOutputStdout | format::kSyscallOutputStderr))) {
      for (const format::MemoryWrite& write : event.writes) {
        e.output_matches |= std::regex_search(write.bytes, *trigger.pattern);
      }
    }
    events.push_back(e);
  }
  size_t failure = failure_event(events, trigger, options.status);
  if (events.empty()) {
    return std::string();
  }
  uint32_t failing = events[failure].thread;
  std::optional<size_t> last_other;
  for (size_t i = failure; i-- > 0;) {
    if (is_step(events[i]) && events[i].thread != failing) {
      last_other = i;
      break;
    }
  }
  if (!last_other) {
    return std::string();  // one thread did it all
  }
  const EventSummary& other = events[*last_other];
  // Where the other thread stood at the switch, and the failing one at the
  // failure: replays stopped there.
  REPRO_ASSIGN_OR_RETURN(std::string at_switch, stopped_replay(options.repro_path, trace, *last_other));
  REPRO_ASSIGN_OR_RETURN(std::string at_failure, stopped_replay(options.repro_path, trace, failure));
  return fmt::format(
      "racing pair, at event #{} of {}:\n"
      "  t{} ran last before the failure: {}, in {}\n"
      "  t{} then ran on to the failure (event #{}), in {}\n",
      *last_other, trace, other.thread, step_name(other), place_of(at_switch, other.thread, exe),
      failing, failure, place_of(at_failure, failing, exe));
}

}  // namespace

Result<ShrinkOutcome> shrink(const ShrinkOptions& options) {
  ShrinkOutcome outcome;
  if (!chaos_decisions(options.trace + ".err", &outcome.changes, &outcome.starvations)) {
    return Status::error(StatusCode::kInvalidArgument,
                         fmt::format("{}.err does not say what the chaos policy did", options.trace));
  }
  const Trigger* wanted = nullptr;
  for (const Trigger& trigger : options.triggers) {
    if (trigger.text == options.trigger) {
      wanted = &trigger;
    }
  }
  if (wanted == nullptr) {
    return Status::error(StatusCode::kInvalidArgument, "no trigger " + options.trigger);
  }
  ChaosRun run{.repro_path = options.repro_path,
               .argv = options.argv,
               .seed = options.seed,
               .depth = options.depth,
               .points = options.points,
               .dir = options.trace + ".try"};
  std::string smaller = options.trace + ".min";
  // Leaves out one more decision; keeps it out if the failure still shows.
  auto try_without = [&](std::set<uint32_t>* skipped, uint32_t decision) -> Result<bool> {
    skipped->insert(decision);
    REPRO_ASSIGN_OR_RETURN(pid_t pid, spawn(record_args(run), run.dir + ".out", run.dir + ".err"));
    REPRO_ASSIGN_OR_RETURN(int status, wait_for(pid));
    ++outcome.recordings;
    RunResult result = read_result(run.dir, status, false);
    const Trigger* again = fired({*wanted}, result);
    if (again != nullptr && result.shell_status == options.status) {
      REPRO_RETURN_IF_ERROR(move_run(run.dir, smaller));
      outcome.smaller_trace = smaller;
      return true;
    }
    remove_run(run.dir);
    skipped->erase(decision);
    return false;
  };
  for (uint32_t change = 0; change < outcome.changes; ++change) {
    REPRO_ASSIGN_OR_RETURN(bool left_out, try_without(&run.skipped_changes, change));
    if (!left_out) {
      outcome.needed_changes.push_back(change);
    }
  }
  for (uint32_t window = 0; window < outcome.starvations; ++window) {
    REPRO_ASSIGN_OR_RETURN(bool left_out, try_without(&run.skipped_starvations, window));
    if (!left_out) {
      outcome.needed_starvations.push_back(window);
    }
  }
  std::string final_trace = outcome.smaller_trace.empty() ? options.trace : outcome.smaller_trace;
  REPRO_ASSIGN_OR_RETURN(outcome.racing_pair, racing_pair(options, final_trace, *wanted));
  if (!outcome.racing_pair.empty()) {
    std::ofstream(options.trace + ".race") << outcome.racing_pair;
    std::error_code ec;  // as private as the trace it names places in
    std::filesystem::permissions(options.trace + ".race", std::filesystem::perms::owner_read |
                                                              std::filesystem::perms::owner_write,
                                 ec);
  }
  return outcome;
}

}  // namespace repro::hunter
