// `repro report [--json] [--effects [--all]] [TRACE]`: what happened in a recorded run, from the
// trace alone: the command, how it ended, its processes and threads with
// their lifetimes, and at the failure point (fatal signal, deadlock,
// failing exit) where each thread stood and what it did last.

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sys/wait.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "analysis/failure_report.h"
#include "analysis/trace_summary.h"
#include "analysis/value_names.h"
#include "cli/command.h"
#include "cli/event_json.h"
#include "cli/event_printer.h"
#include "cli/exit_codes.h"
#include "cli/report_effects.h"
#include "cli/trace_location.h"
#include "core/format/trace_reader.h"

namespace repro::cli {
namespace {

using analysis::FailurePoint;
using analysis::TraceSummary;
using Json = nlohmann::ordered_json;

// The racing pair a hunt kept beside the trace it caught (seed-N.race, for
// seed-N and its shrunk seed-N.min); "" if there is none.
std::string hunt_race_text(const std::string& dir) {
  std::string base = dir;
  while (!base.empty() && base.back() == '/') {
    base.pop_back();
  }
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".min") == 0) {
    base.resize(base.size() - 4);
  }
  std::ifstream in(base + ".race");
  if (!in) {
    return "";
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// How a thread or process ended, in words.
std::string describe_end(const std::optional<int32_t>& status, const TraceSummary& summary) {
  if (!status) {
    return summary.complete ? "still running when the recording ended"
                            : "still running where the trace ends (the recording was cut short)";
  }
  std::string text = analysis::describe_wait_status(*status);
  if (summary.failure && summary.failure->kind == FailurePoint::Kind::kDeadlock &&
      WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) {
    text += " (repro ended the deadlock)";
  }
  return text;
}

// The frame of the failing thread in the program's own code: the innermost
// one in the file its process runs (a crash inside libc's abort or strlen
// was called from there), else the innermost with a source line, else the
// innermost. Null without stacks.
const format::StackFrame* program_frame(const FailurePoint& failure, const TraceSummary& summary) {
  if (!failure.stacks || failure.stacks->threads.empty() ||
      failure.stacks->threads.front().frames.empty()) {
    return nullptr;
  }
  const std::vector<format::StackFrame>& frames = failure.stacks->threads.front().frames;
  std::string exe;
  if (failure.thread < summary.threads.size()) {
    exe = std::filesystem::path(summary.processes[summary.threads[failure.thread].process].exe)
              .filename()
              .string();
  }
  for (const format::StackFrame& frame : frames) {
    if (!exe.empty() && std::filesystem::path(frame.module).filename() == exe) {
      return &frame;
    }
  }
  for (const format::StackFrame& frame : frames) {
    if (!frame.file.empty()) {
      return &frame;
    }
  }
  return &frames.front();
}

// "store_reading at prog.c:14", or for a failure outside the program's own
// code "raise (libc.so.6), called from check_reading at prog.c:20"; "" without stacks.
std::string failure_location(const FailurePoint& failure, const TraceSummary& summary) {
  const format::StackFrame* in_program = program_frame(failure, summary);
  if (in_program == nullptr) {
    return "";
  }
  auto where = [](const format::StackFrame& frame) {
    std::string text = frame.function.empty() ? fmt::format("{:#x}", frame.pc) : frame.function;
    if (!frame.file.empty()) {
      text += fmt::format(" at {}:{}", frame.file, frame.line);
    } else if (!frame.module.empty()) {
      text += fmt::format(" ({})", std::filesystem::path(frame.module).filename().string());
    }
    return text;
  };
  const format::StackFrame& innermost = failure.stacks->threads.front().frames.front();
  if (in_program == &innermost) {
    return where(innermost);
  }
  return where(innermost) + ", called from " + where(*in_program);
}

const char* failure_kind_name(FailurePoint::Kind kind) {
  switch (kind) {
    case FailurePoint::Kind::kDeadlock:
      return "deadlock";
    case FailurePoint::Kind::kFatalSignal:
      return "fatal-signal";
    case FailurePoint::Kind::kExitStatus:
      return "exit-status";
  }
  return "unknown";
}

std::string failure_headline(const FailurePoint& failure) {
  switch (failure.kind) {
    case FailurePoint::Kind::kDeadlock:
      return fmt::format("deadlock at event #{}: every live thread waits for another", failure.event_index);
    case FailurePoint::Kind::kFatalSignal: {
      std::string cause = failure.stacks ? analysis::describe_signal_cause(*failure.stacks)
                                         : analysis::signal_number_name(failure.signal_number);
      return fmt::format("t{} got {} (event #{})", failure.thread, cause, failure.event_index);
    }
    case FailurePoint::Kind::kExitStatus:
      return fmt::format("the program {} (t{} at event #{})",
                         analysis::describe_wait_status(failure.exit_status), failure.thread,
                         failure.event_index);
  }
  return "";
}

void print_text(const std::string& dir, const TraceSummary& s) {
  const analysis::ProcessSummary& program = s.processes.front();
  fmt::print("trace    {} ({}, {} events)\n", dir, s.complete ? "complete" : "incomplete",
             s.event_count);
  fmt::print("command  {}\n", fmt::join(s.header.argv, " "));
  fmt::print("outcome  {}\n", describe_end(program.exit_status, s));
  if (!s.read_error.empty()) {
    fmt::print("warning  the trace is damaged after event #{}: {}\n", s.event_count, s.read_error);
  }

  fmt::print("\nprocesses and threads\n");
  for (const analysis::ProcessSummary& process : s.processes) {
    std::string origin = &process == &program ? "" : fmt::format(", forked by t{}", process.parent_thread);
    fmt::print("  process {}{}: {}\n", process.recorded_pid, origin, fmt::join(process.argv, " "));
    fmt::print("    events #{}-#{}, {}\n", process.first_event, process.last_event,
               describe_end(process.exit_status, s));
    for (uint32_t index : process.threads) {
      const analysis::ThreadSummary& thread = s.threads[index];
      std::string started = index == process.first_thread
                                ? ""
                                : fmt::format(", started by t{}", thread.parent_thread);
      fmt::print("    t{} tid {}{}: events #{}-#{} ({} events), {}\n", index, thread.recorded_tid,
                 started, thread.first_event, thread.last_event, thread.event_count,
                 describe_end(thread.exit_status, s));
    }
  }

  if (!s.failure) {
    fmt::print("\nno failure: the program exited with status 0 and no process died of a signal\n");
    return;
  }
  const FailurePoint& failure = *s.failure;
  fmt::print("\nfailure  {}\n", failure_headline(failure));
  if (std::string where = failure_location(failure, s); !where.empty()) {
    fmt::print("  in {}\n", where);
  }
  if (failure.stacks) {
    fmt::print("  {} {}\n", analysis::instruction_label(*failure.stacks),
               analysis::describe_instruction(*failure.stacks));
    fmt::print("\nbacktraces (taken by the recorder at the signal)\n");
    for (const format::ThreadStack& thread : failure.stacks->threads) {
      fmt::print("  t{} (tid {}){}\n", thread.thread, thread.recorded_tid,
                 &thread == &failure.stacks->threads.front() ? ", which got the signal" : "");
      for (size_t i = 0; i < thread.frames.size(); ++i) {
        fmt::print("    {}\n", analysis::describe_frame(i, thread.frames[i]));
      }
      if (!thread.note.empty()) {
        fmt::print("    ({})\n", thread.note);
      }
    }
  } else if (!failure.stacks_error.empty()) {
    fmt::print("  (no backtraces: {})\n", failure.stacks_error);
  } else if (failure.kind == FailurePoint::Kind::kFatalSignal) {
    fmt::print("  (no backtraces: the recorder saw no delivery of this signal, as for a SIGKILL)\n");
  } else if (failure.kind == FailurePoint::Kind::kExitStatus) {
    // The recorder takes no backtraces at an exit; replay can, just before it.
    fmt::print("  (no backtraces at an exit: `repro replay --stop-at {} {}` shows each thread's)\n",
               failure.event_index > 0 ? failure.event_index - 1 : 0, dir);
  }
  if (failure.kind == FailurePoint::Kind::kDeadlock) {
    fmt::print("\nthe recorder's report\n{}", prefix_lines("  ", failure.deadlock_report));
  }
  if (!failure.last_events.empty()) {
    fmt::print("\nlast events before the failure\n");
    for (const auto& [thread, events] : failure.last_events) {
      fmt::print("  t{}\n", thread);
      for (const analysis::IndexedEvent& e : events) {
        fmt::print("{}", prefix_lines("    ", describe_event(e.index, e.event)));
      }
    }
  }
  if (std::string race = hunt_race_text(dir); !race.empty()) {
    fmt::print("\nthe hunt's racing pair\n{}", prefix_lines("  ", race));
  }
}

Json end_json(const std::optional<int32_t>& status, const TraceSummary& summary) {
  Json j = {{"text", describe_end(status, summary)}};
  if (status && WIFEXITED(*status)) {
    j["exit_code"] = WEXITSTATUS(*status);
  } else if (status && WIFSIGNALED(*status)) {
    j["signal"] = analysis::signal_number_name(WTERMSIG(*status));
  }
  return j;
}

Json report_json(const std::string& dir, const TraceSummary& s) {
  Json processes = Json::array();
  for (const analysis::ProcessSummary& process : s.processes) {
    Json threads = Json::array();
    for (uint32_t index : process.threads) {
      const analysis::ThreadSummary& thread = s.threads[index];
      threads.push_back({{"thread", index},
                         {"recorded_tid", thread.recorded_tid},
                         {"parent_thread", thread.parent_thread},
                         {"first_event", thread.first_event},
                         {"last_event", thread.last_event},
                         {"events", thread.event_count},
                         {"end", end_json(thread.exit_status, s)}});
    }
    processes.push_back({{"recorded_pid", process.recorded_pid},
                         {"parent_thread", process.parent_thread},
                         {"argv", process.argv},
                         {"first_event", process.first_event},
                         {"last_event", process.last_event},
                         {"end", end_json(process.exit_status, s)},
                         {"threads", std::move(threads)}});
  }
  Json j = {{"trace", dir},
            {"complete", s.complete},
            {"events", s.event_count},
            {"command", s.header.argv},
            {"outcome", end_json(s.processes.front().exit_status, s)},
            {"processes", std::move(processes)}};
  if (!s.read_error.empty()) {
    j["read_error"] = s.read_error;
  }
  if (!s.failure) {
    j["failure"] = nullptr;
    return j;
  }
  const FailurePoint& failure = *s.failure;
  Json f = {{"kind", failure_kind_name(failure.kind)},
            {"event", failure.event_index},
            {"thread", failure.thread},
            {"text", failure_headline(failure)}};
  if (failure.kind == FailurePoint::Kind::kFatalSignal) {
    f["signal"] = analysis::signal_number_name(failure.signal_number);
  }
  if (failure.kind == FailurePoint::Kind::kExitStatus) {
    f["exit_code"] = WEXITSTATUS(failure.exit_status);
  }
  if (const format::StackFrame* frame = program_frame(failure, s)) {
    f["location"] = {{"function", frame->function},
                     {"file", frame->file},
                     {"line", frame->line},
                     {"module", frame->module}};
  }
  if (failure.stacks) {
    f["stacks"] = analysis::failure_stacks_json(*failure.stacks);
  } else if (!failure.stacks_error.empty()) {
    f["stacks_error"] = failure.stacks_error;
  }
  if (failure.kind == FailurePoint::Kind::kDeadlock) {
    f["deadlock_report"] = failure.deadlock_report;
  }
  Json last = Json::array();
  for (const auto& [thread, events] : failure.last_events) {
    Json list = Json::array();
    for (const analysis::IndexedEvent& e : events) {
      list.push_back(event_json(e.index, e.event));
    }
    last.push_back({{"thread", thread}, {"events", std::move(list)}});
  }
  f["last_events"] = std::move(last);
  if (std::string race = hunt_race_text(dir); !race.empty()) {
    f["hunt_racing_pair"] = race;
  }
  j["failure"] = std::move(f);
  return j;
}

class ReportCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("trace", trace_, "trace directory (default: the latest trace)");
    sub->add_flag("--json", json_,
                  "one JSON object: command, outcome, processes and threads, and the "
                  "failure point with its backtraces and last events");
    sub->add_option("--last-events", options_.last_events,
                    "events shown per thread before the failure point")
        ->check(CLI::Range(0, 1000));
    auto* effects = sub->add_flag(
        "--effects", effects_,
        "instead: what the run touched outside itself (files created, written, renamed, "
        "deleted and read, network endpoints, programs executed, signals sent outside)");
    sub->add_flag("--all", effects_options_.all, kEffectsAllHelp)->needs(effects);
    sub->footer(kEffectsFooter);
  }

  int run() override {
    auto dir = resolve_trace_dir(trace_);
    if (!dir.is_ok()) {
      return report_error(dir.status());
    }
    if (effects_) {
      return print_effects_report(*dir, json_, effects_options_);
    }
    auto reader = format::TraceReader::open(*dir);
    if (!reader.is_ok()) {
      return report_error(reader.status());
    }
    (*reader)->tolerate_missing_file_copies();  // a report needs no file contents
    Result<TraceSummary> summary = analysis::summarize_trace(**reader, options_);
    if (!summary.is_ok()) {
      return report_error(summary.status());
    }
    if (json_) {
      fmt::print("{}\n", report_json(*dir, *summary).dump(2, ' ', false, Json::error_handler_t::replace));
    } else {
      print_text(*dir, *summary);
    }
    return kExitOk;
  }

 private:
  std::string trace_;
  bool json_ = false;
  analysis::SummaryOptions options_;
  bool effects_ = false;
  analysis::EffectsReportOptions effects_options_;
};

}  // namespace

std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace repro::cli
