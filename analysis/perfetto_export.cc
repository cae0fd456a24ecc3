#include "analysis/perfetto_export.h"

#include <fmt/core.h>
#include <sched.h>
#include <sys/wait.h>

#include <csignal>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>

#include "core/syscalls/syscall_table.h"

namespace repro::analysis {
namespace {

using Json = nlohmann::ordered_json;

// Ids for tracks whose recorded tid cannot be used (reused by the kernel for
// a later thread, or a thread with no thread-start event): 2^23 is above any
// Linux pid, since pid_max is at most 2^22 (PID_MAX_LIMIT on 64-bit).
constexpr int64_t kSyntheticIdBase = int64_t{1} << 23;

const char* const kClockNote =
    "logical: the trace records no time per event, only their order; event N of the trace "
    "spans [N, N+1) microseconds, so widths count events, not time";

uint64_t ts_of(uint64_t event_index) { return event_index * kMicrosecondsPerEvent; }

std::string basename_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A syscall's arguments as `repro dump` prints them: as many as the
// syscall table says it takes, -4095..65535 in decimal, others in hex.
std::string syscall_arguments_text(const format::Event& event) {
  const syscalls::SyscallInfo* info = syscalls::find_x86_64(event.syscall_number);
  int count = info ? info->arg_count : 6;
  std::string text;
  for (int i = 0; i < count; ++i) {
    if (i > 0) {
      text += ", ";
    }
    uint64_t arg = event.args[i];
    bool small = static_cast<int64_t>(arg) > -4096 && static_cast<int64_t>(arg) < 65536;
    text += small ? fmt::format("{}", static_cast<int64_t>(arg)) : fmt::format("{:#x}", arg);
  }
  return text;
}

// Whether a syscall's result is an address (shown in hex) rather than a count.
bool returns_address(int number) {
  std::string_view name = syscalls::syscall_name(number);
  return name == "mmap" || name == "mremap" || name == "brk" || name == "shmat";
}

// "5", "0x7ffff7fc3000" for an address, or "-2 ENOENT" for an error.
std::string syscall_result_text(const format::Event& event) {
  int64_t result = event.result;
  if (result < 0 && result >= -4095) {
    const char* name = strerrorname_np(static_cast<int>(-result));
    if (name != nullptr) {
      return fmt::format("{} {}", result, name);
    }
  }
  if (result > 0 && returns_address(event.syscall_number)) {
    return fmt::format("{:#x}", result);
  }
  return fmt::format("{}", result);
}

// What a syscall read from the program's memory (a path, a socket
// address, the first bytes written), as text: printable ASCII as it is,
// other bytes as \xNN, so the text is valid JSON and shows binary bytes.
std::string input_text(const std::string& bytes) {
  std::string text;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      text += static_cast<char>(c);
    } else {
      text += fmt::format("\\x{:02x}", c);
    }
  }
  return text;
}

// The inputs of a syscall event as args input_arg<N>.
void add_inputs(const format::Event& event, Json* args) {
  for (const format::SyscallInput& input : event.inputs) {
    (*args)[fmt::format("input_arg{}", input.arg_index)] = input_text(input.bytes);
  }
}

std::string signal_text(int32_t number) {
  const char* name = sigabbrev_np(number);
  return name != nullptr ? fmt::format("SIG{}", name) : fmt::format("signal {}", number);
}

// "exited 0", "killed by SIGKILL", or the raw status.
std::string wait_status_text(int32_t status) {
  if (WIFEXITED(status)) {
    return fmt::format("exited {}", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return fmt::format("killed by {}{}", signal_text(WTERMSIG(status)),
                       WCOREDUMP(status) ? " (core dumped)" : "");
  }
  return fmt::format("wait status {:#x}", status);
}

}  // namespace

class TimelineExporter::Impl {
 public:
  Impl(const format::TraceHeader& header, std::ostream* out) : header_(header), out_(out) {
    *out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  }

  void add(uint64_t index, const format::Event& e) {
    ++events_;
    end_index_ = index + 1;
    switch (e.kind) {
      case format::EventKind::kThreadStart:
        start_thread(index, e);
        return;
      case format::EventKind::kDeadlock:
        // Not any one thread's turn: the run as a whole ended here.
        write({{"name", "deadlock"},
               {"cat", "deadlock"},
               {"ph", "i"},
               {"s", "g"},
               {"ts", ts_of(index)},
               {"pid", first_pid()},
               {"tid", first_pid()},
               {"args", {{"event", index}, {"report", e.data}}}});
        return;
      case format::EventKind::kThreadExit:
        exit_thread(index, e);
        return;
      default:
        break;
    }
    Track& track = track_of(e.thread);
    track.last_event = index;
    // This event is the thread's turn: whoever ran before it stopped here.
    if (runner_ && *runner_ != e.thread) {
      close_run(tracks_.at(*runner_), index);
    }
    if (track.state == State::kBlocked) {
      if (e.kind == format::EventKind::kSyscall) {
        Json args = {{"result", syscall_result_text(e)}, {"completed_at_event", index}};
        add_inputs(e, &args);
        end_slice(track, index + 1, std::move(args));
        track.state = State::kIdle;
        return;
      }
      if (e.kind != format::EventKind::kSyscallEntered) {
        instant(track, index, e);  // a signal for the thread inside its syscall
        return;
      }
      end_slice(track, index, {{"result", "none: the thread entered another syscall"}});
      track.state = State::kIdle;
    }
    switch (e.kind) {
      case format::EventKind::kSyscallEntered:
        if (track.state == State::kRunning) {
          close_run(track, index);
        }
        write({{"name", syscalls::syscall_name(e.syscall_number)},
               {"cat", "syscall,blocking"},
               {"ph", "B"},
               {"ts", ts_of(index)},
               {"pid", track.pid},
               {"tid", track.tid},
               {"args", {{"event", index}, {"arguments", syscall_arguments_text(e)}}}});
        track.state = State::kBlocked;
        return;
      case format::EventKind::kSyscall: {
        ensure_running(track, index);
        Json args = {{"event", index},
                     {"arguments", syscall_arguments_text(e)},
                     {"result", syscall_result_text(e)}};
        add_inputs(e, &args);
        if (e.syscall_flags & format::kSyscallDenied) {
          args["answered_by_repro"] = true;
        }
        write({{"name", syscalls::syscall_name(e.syscall_number)},
               {"cat", "syscall"},
               {"ph", "X"},
               {"ts", ts_of(index)},
               {"dur", kMicrosecondsPerEvent},
               {"pid", track.pid},
               {"tid", track.tid},
               {"args", std::move(args)}});
        return;
      }
      case format::EventKind::kPreempt:
        ensure_running(track, index);
        instant(track, index, e);
        close_run(track, index + 1);  // its time slice is over
        return;
      default:
        ensure_running(track, index);
        instant(track, index, e);
        return;
    }
  }

  Result<TimelineSummary> finish(bool complete) {
    for (auto& [thread, track] : tracks_) {
      if (track.state == State::kRunning) {
        close_run(track, end_index_);
      } else if (track.state == State::kBlocked) {
        end_slice(track, end_index_, {{"result", "none: the trace ends inside the syscall"}});
        track.state = State::kIdle;
      }
    }
    std::set<uint32_t> leaders;
    for (const auto& [thread, track] : tracks_) {
      if (leaders.insert(track.leader).second) {
        write_metadata("process_name", track.pid, track.pid,
                       {{"name", process_names_[track.leader]}});
        write_metadata("process_sort_index", track.pid, track.pid, {{"sort_index", track.leader}});
      }
      write_metadata("thread_name", track.pid, track.tid, {{"name", fmt::format("t{}", thread)}});
      write_metadata("thread_sort_index", track.pid, track.tid, {{"sort_index", thread}});
    }
    Json other = {{"clock", kClockNote},
                  {"microseconds_per_event", kMicrosecondsPerEvent},
                  {"events", events_},
                  {"complete", complete},
                  {"argv", header_.argv},
                  {"exe", header_.exe_path},
                  {"start_time_ns", header_.start_time_ns},
                  {"scheduler", header_.scheduler.policy},
                  {"seed", header_.seed},
                  {"trace_format_version", header_.format_version},
                  {"repro_version", header_.repro_version}};
    *out_ << "\n],\n\"otherData\":" << dump(other) << "}\n";
    out_->flush();
    if (!*out_) {
      return Status::error(StatusCode::kIoError, "writing the timeline failed");
    }
    TimelineSummary summary;
    summary.events = events_;
    summary.processes = leaders.size();
    summary.threads = tracks_.size();
    summary.trace_events_written = written_;
    return summary;
  }

 private:
  enum class State { kIdle, kRunning, kBlocked };

  struct Track {
    uint32_t thread = 0;  // its index in the trace
    int64_t pid = 0;
    int64_t tid = 0;
    uint32_t leader = 0;  // the thread index of its process's first thread
    State state = State::kIdle;
    uint64_t last_event = 0;  // the thread's latest event
  };

  static std::string dump(const Json& json) {
    return json.dump(-1, ' ', false, Json::error_handler_t::replace);
  }

  void write(const Json& event) {
    if (written_ > 0) {
      *out_ << ",\n";
    }
    *out_ << dump(event);
    ++written_;
  }

  void write_metadata(const char* name, int64_t pid, int64_t tid, Json args) {
    write({{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}});
  }

  int64_t unique_tid(int64_t recorded_tid, uint32_t thread) {
    if (recorded_tid <= 0 || !used_tids_.insert(recorded_tid).second) {
      return kSyntheticIdBase + thread;
    }
    return recorded_tid;
  }

  int64_t first_pid() const { return tracks_.empty() ? 0 : tracks_.begin()->second.pid; }

  // The track of a thread that never had a thread-start event (a damaged
  // trace): a process of its own.
  Track& track_of(uint32_t thread) {
    auto it = tracks_.find(thread);
    if (it != tracks_.end()) {
      return it->second;
    }
    Track track;
    track.thread = thread;
    track.tid = track.pid = kSyntheticIdBase + thread;
    track.leader = thread;
    process_names_[thread] = fmt::format("process of t{}", thread);
    return tracks_.emplace(thread, track).first->second;
  }

  void start_thread(uint64_t index, const format::Event& e) {
    if (tracks_.count(e.thread) == 0) {
      Track track;
      track.thread = e.thread;
      track.tid = unique_tid(e.recorded_tid, e.thread);
      auto parent = tracks_.find(e.parent_thread);
      if (parent != tracks_.end() && (e.clone_flags & CLONE_THREAD)) {
        track.pid = parent->second.pid;
        track.leader = parent->second.leader;
      } else {
        track.pid = track.tid;
        track.leader = e.thread;
        // A new process runs its parent's program until it execs.
        process_names_[e.thread] =
            parent != tracks_.end()
                ? process_names_[parent->second.leader]
                : basename_of(header_.argv.empty() ? header_.exe_path : header_.argv[0]);
      }
      tracks_.emplace(e.thread, track);
    }
    const Track& track = tracks_.at(e.thread);
    write({{"name", "thread start"},
           {"cat", "thread"},
           {"ph", "i"},
           {"s", "t"},
           {"ts", ts_of(index)},
           {"pid", track.pid},
           {"tid", track.tid},
           {"args",
            {{"event", index},
             {"parent", fmt::format("t{}", e.parent_thread)},
             {"recorded_tid", e.recorded_tid},
             {"clone_flags", fmt::format("{:#x}", e.clone_flags)}}}});
  }

  // A thread's exit is reported when the kernel reaps it, which need not be
  // its turn (the threads exit_group kills): it ends what the thread had
  // open, and no one else's running slice.
  void exit_thread(uint64_t index, const format::Event& e) {
    Track& track = track_of(e.thread);
    track.last_event = index;
    if (track.state == State::kBlocked) {
      end_slice(track, index, {{"result", "none: the thread exited inside the syscall"}});
      track.state = State::kIdle;
    }
    instant(track, index, e);
    if (track.state == State::kRunning) {
      close_run(track, index + 1);
    }
  }

  void ensure_running(Track& track, uint64_t index) {
    if (track.state == State::kRunning) {
      return;
    }
    write({{"name", "running"},
           {"cat", "run"},
           {"ph", "B"},
           {"ts", ts_of(index)},
           {"pid", track.pid},
           {"tid", track.tid},
           {"args", {{"first_event", index}}}});
    track.state = State::kRunning;
    runner_ = track.thread;
  }

  void close_run(Track& track, uint64_t end_index) {
    end_slice(track, end_index, {{"last_event", track.last_event}});
    track.state = State::kIdle;
    if (runner_ && *runner_ == track.thread) {
      runner_.reset();
    }
  }

  void end_slice(const Track& track, uint64_t end_index, Json args) {
    write({{"ph", "E"},
           {"ts", ts_of(end_index)},
           {"pid", track.pid},
           {"tid", track.tid},
           {"args", std::move(args)}});
  }

  // The instant event for any kind that is not a syscall.
  void instant(Track& track, uint64_t index, const format::Event& e) {
    std::string name = format::event_kind_name(e.kind);
    std::string category = name;
    Json args = {{"event", index}};
    switch (e.kind) {
      case format::EventKind::kSignal:
        name = signal_text(e.signal_number);
        category = "signal";
        args["number"] = e.signal_number;
        args["synchronous"] = (e.signal_flags & format::kSignalSynchronous) != 0;
        break;
      case format::EventKind::kPreempt: {
        name = "preempted";
        uint64_t rip = 0;
        if (e.registers.size() >= 17 * 8) {  // user_regs_struct: rip is the 17th field
          std::memcpy(&rip, e.registers.data() + 16 * 8, 8);
        }
        args["rip"] = fmt::format("{:#x}", rip);
        args["memory_hash"] = fmt::format("{:#018x}", e.memory_hash);
        break;
      }
      case format::EventKind::kRdtsc:
        args["address"] = fmt::format("{:#x}", e.address);
        args["tsc"] = e.tsc;
        break;
      case format::EventKind::kExec:
        name = "exec " + basename_of(e.path);
        args["path"] = e.path;
        process_names_[track.leader] = basename_of(e.path);
        break;
      case format::EventKind::kMappedFile:
        name = "map " + basename_of(e.path);
        args["path"] = e.path;
        args["address"] = fmt::format("{:#x}", static_cast<uint64_t>(e.result));
        break;
      case format::EventKind::kRdtscPatch:
        args["path"] = e.path;
        args["sites"] = e.writes.size();
        break;
      case format::EventKind::kSyscallPatch:
        args["path"] = e.path;
        args["site"] = fmt::format("{:#x}", e.address);
        break;
      case format::EventKind::kThreadExit:
        name = "exit";
        category = "thread";
        args["status"] = wait_status_text(e.exit_status);
        break;
      case format::EventKind::kSyscallBatch:
        args["bytes"] = e.data.size();
        break;
      case format::EventKind::kSyscall:
      case format::EventKind::kSyscallEntered:
        name = syscalls::syscall_name(e.syscall_number);
        category = "syscall";
        args["arguments"] = syscall_arguments_text(e);
        break;
      default:
        break;
    }
    write({{"name", name},
           {"cat", category},
           {"ph", "i"},
           {"s", "t"},
           {"ts", ts_of(index)},
           {"pid", track.pid},
           {"tid", track.tid},
           {"args", std::move(args)}});
  }

  format::TraceHeader header_;
  std::ostream* out_;
  std::map<uint32_t, Track> tracks_;  // by thread index, which is their order in the output
  std::map<uint32_t, std::string> process_names_;  // by leader thread index
  std::set<int64_t> used_tids_;
  std::optional<uint32_t> runner_;  // the thread whose running slice is open
  uint64_t events_ = 0;
  uint64_t end_index_ = 0;  // one past the last event's index
  uint64_t written_ = 0;
};

TimelineExporter::TimelineExporter(const format::TraceHeader& header, std::ostream* out)
    : impl_(std::make_unique<Impl>(header, out)) {}

TimelineExporter::~TimelineExporter() = default;

void TimelineExporter::add(uint64_t index, const format::Event& event) { impl_->add(index, event); }

Result<TimelineSummary> TimelineExporter::finish(bool complete) { return impl_->finish(complete); }

Result<TimelineSummary> export_timeline(format::TraceReader* reader, std::ostream* out) {
  TimelineExporter exporter(reader->header(), out);
  format::Event event;
  for (uint64_t index = 0;; ++index) {
    auto more = reader->next(&event);
    if (!more.is_ok()) {
      return more.status();
    }
    if (!*more) {
      break;
    }
    exporter.add(index, event);
  }
  return exporter.finish(reader->state() == format::TraceState::kComplete);
}

}  // namespace repro::analysis
