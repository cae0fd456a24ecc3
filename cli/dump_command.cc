// `repro dump [--json] [--thread T] [--from E] [--to E] [--syscall NAME,...]
// [TRACE]`: prints a trace's header and its events, one per line, syscalls
// and signals decoded strace-style (analysis/), with a line where the
// running thread changes.

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/event_json.h"
#include "cli/event_printer.h"
#include "cli/exit_codes.h"
#include "cli/trace_location.h"
#include "analysis/schedule_text.h"
#include "core/format/trace_reader.h"
#include "core/syscalls/syscall_table.h"

namespace repro::cli {
namespace {

void print_header(const format::TraceHeader& h, format::TraceState state) {
  fmt::print("# trace format {} arch {} ({})\n", h.format_version, h.arch,
             state == format::TraceState::kComplete ? "complete" : "incomplete");
  fmt::print("# cpu {} family {} model {} stepping {}\n", h.cpu.vendor, h.cpu.family, h.cpu.model,
             h.cpu.stepping);
  fmt::print("# kernel {}  repro {}  seed {}  start {} ns\n", h.kernel_release, h.repro_version,
             h.seed, h.start_time_ns);
  if (h.scheduler.policy == "chaos") {
    fmt::print("# scheduler chaos: seed {} depth {} over {} points, slices from 1 to {} ms\n",
               h.seed, h.scheduler.depth, h.scheduler.expected_points,
               2 * h.scheduler.base_slice_ms - 1);
    if (!h.scheduler.skipped_changes.empty() || !h.scheduler.skipped_starvations.empty()) {
      fmt::print("# scheduler chaos: change points left out [{}], starvation windows left out [{}]\n",
                 fmt::join(h.scheduler.skipped_changes, ","),
                 fmt::join(h.scheduler.skipped_starvations, ","));
    }
  } else {
    fmt::print("# scheduler {}: slices of {} ms\n", h.scheduler.policy, h.scheduler.base_slice_ms);
  }
  fmt::print("# rdtsc {} (tsc mode {})\n",
             h.tsc_mode == format::TscMode::kPatch ? "patched in the program's code" : "trapped",
             format::tsc_mode_name(h.tsc_mode));
  fmt::print("# cwd {}\n# exe {}\n", h.cwd, h.exe_path);
  fmt::print("# argv {}\n", fmt::join(h.argv, " "));
  fmt::print("# env {} variables\n", h.env.size());
  for (const format::RedactedVariable& variable : h.redacted_env) {
    fmt::print("# env {}: value redacted ({} bytes, not in the trace)\n", variable.name,
               variable.value_bytes);
  }
}

class DumpCommand : public Command {
 public:
  void declare(CLI::App* sub) override {
    sub->add_option("trace", trace_, "trace directory (default: the latest trace)");
    sub->add_flag("--header-only", header_only_, "print only the header");
    sub->add_flag("--json", json_,
                  "one JSON object per line: the header, then each event with every field "
                  "its kind uses, its inputs and its line of text");
    sub->add_option("--thread", threads_, "only the events of these threads (1 or t1), repeatable")
        ->transform([](std::string value) {
          // Threads as dump names them ("t1") or by number ("1").
          return value.size() > 1 && value[0] == 't' ? value.substr(1) : value;
        })
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->allow_extra_args(false);
    sub->add_option("--from", from_, "only events from this one on (numbered as printed)");
    sub->add_option("--to", to_, "only events up to this one (at least --from)");
    sub->add_option("--syscall", syscalls_,
                    "only syscall events of these syscalls (comma-separated names)")
        ->delimiter(',')
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->allow_extra_args(false);
  }

  // Whether `event`, number `index`, passes the filters.
  bool wanted(uint64_t index, const format::Event& event) const {
    if (index < from_ || (to_ && index > *to_)) {
      return false;
    }
    if (!threads_.empty() &&
        std::find(threads_.begin(), threads_.end(), event.thread) == threads_.end()) {
      return false;
    }
    if (!syscall_numbers_.empty()) {
      bool syscall = event.kind == format::EventKind::kSyscall ||
                     event.kind == format::EventKind::kSyscallEntered;
      return syscall && std::find(syscall_numbers_.begin(), syscall_numbers_.end(),
                                  event.syscall_number) != syscall_numbers_.end();
    }
    return true;
  }

  int run() override {
    if (to_ && *to_ < from_) {
      return report_error(Status::error(
          StatusCode::kInvalidArgument,
          fmt::format("--from {} is after --to {}: no event is in that range", from_, *to_)));
    }
    for (const std::string& name : syscalls_) {
      const syscalls::SyscallInfo* info = syscalls::find_by_name(name);
      if (info == nullptr) {
        return report_error(Status::error(StatusCode::kInvalidArgument,
                                          fmt::format("--syscall: no syscall named '{}'", name)));
      }
      syscall_numbers_.push_back(info->x86_64);
    }
    auto dir = resolve_trace_dir(trace_);
    if (!dir.is_ok()) {
      return report_error(dir.status());
    }
    auto reader = format::TraceReader::open(*dir);
    if (!reader.is_ok()) {
      return report_error(reader.status());
    }
    (*reader)->tolerate_missing_file_copies();  // dump shows the events even so
    if (json_) {
      fmt::print("{}\n", json_line(header_json((*reader)->header(),
                                               (*reader)->state() == format::TraceState::kComplete)));
    } else {
      print_header((*reader)->header(), (*reader)->state());
    }
    if (header_only_) {
      return kExitOk;
    }
    format::Event event;
    analysis::ScheduleTracker schedule;
    uint64_t shown = 0;
    uint64_t total = 0;
    for (uint64_t index = 0;; ++index) {
      auto more = (*reader)->next(&event);
      if (!more.is_ok()) {
        std::fflush(stdout);
        return report_error(more.status());
      }
      if (!*more) {
        total = index;
        break;
      }
      std::optional<analysis::ThreadSwitch> change = schedule.observe(event);
      if (!wanted(index, event)) {
        continue;
      }
      ++shown;
      if (json_) {
        auto j = event_json(index, event);
        if (change) {
          j["switch"] = {{"from", change->from}, {"to", change->to}, {"why", change->why}};
        }
        fmt::print("{}\n", json_line(j));
      } else {
        if (change) {
          fmt::print("{}\n", change->text());
        }
        fmt::print("{}\n", describe_event(index, event));
      }
    }
    if (shown == 0 && (!threads_.empty() || from_ > 0 || to_ || !syscalls_.empty())) {
      // Not an error (a filter may rightly match nothing), but say so: an
      // empty output could also mean a mistyped thread or event number.
      fmt::print(stderr, "repro: none of the trace's {} events passes the filters\n", total);
    }
    if ((*reader)->dropped_bytes() > 0) {
      fmt::print(stderr, "repro: warning: trace ends in a partial frame; {} bytes dropped\n",
                 (*reader)->dropped_bytes());
    }
    return kExitOk;
  }

 private:
  std::string trace_;
  bool header_only_ = false;
  bool json_ = false;
  std::vector<uint32_t> threads_;
  uint64_t from_ = 0;
  std::optional<uint64_t> to_;
  std::vector<std::string> syscalls_;
  std::vector<int> syscall_numbers_;  // of syscalls_
};

}  // namespace

std::unique_ptr<Command> make_dump_command() { return std::make_unique<DumpCommand>(); }

}  // namespace repro::cli
