// Processes that outlive the program's first process.
//
// A daemon, a background job of a shell script, or a child left stopped
// keeps running after the process repro started has exited. Natively the
// shell returns and they run on. Under repro they cannot simply be let go:
// they carry repro's seccomp filter, which without a tracer fails every
// syscall they make. So repro keeps recording them for `linger` (10 s by
// default, --linger), says so at once, naming them, and then stops them
// with SIGKILL. Their deaths are ordinary thread-exit events: the trace is
// complete and replays them dying at the same point. A first Ctrl-C after
// the program's end stops them at once, and so does a recording whose
// leftovers are all job-stopped with no one left to continue them.

#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

#include "tracer/record_session.h"
#include "tracer/record_thread.h"

namespace repro::tracer {
namespace {

std::string process_name(pid_t pid) {
  std::ifstream comm(fmt::format("/proc/{}/comm", pid));
  std::string name;
  return std::getline(comm, name) ? name : "?";
}

}  // namespace

void RecordSession::on_root_gone() {
  std::set<pid_t> processes = live_processes();
  if (processes.empty() || control_signals_ >= 2 || !deadlock_report_.empty()) {
    return;  // none left, or all of them being killed already (interrupted, deadlocked)
  }
  root_gone_at_ = std::chrono::steady_clock::now();
  if (!options_.on_notice) {
    return;
  }
  std::string names;
  for (pid_t pid : processes) {
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", pid, process_name(pid));
  }
  bool one = processes.size() == 1;
  std::string what = one ? "1 process" : fmt::format("{} processes", processes.size());
  const char* them = one ? "it" : "them";
  std::string until =
      options_.linger
          ? fmt::format("recording {} for up to {:.3g} s more, then stopping {} with SIGKILL "
                        "(--linger; Ctrl-C stops {} now)",
                        them, static_cast<double>(options_.linger->count()) / 1000, them, them)
          : fmt::format("recording {} until {} exit{} (--linger=inf; Ctrl-C stops {})", them,
                        one ? "it" : "they", one ? "s" : "", them);
  options_.on_notice(fmt::format("the program has exited, leaving {} running: {}; {}", what,
                                 names, until));
}

void RecordSession::stop_leftovers_if_due(bool immediately) {
  if (!root_gone_at_ || threads_.empty() || leftovers_stopped_ != 0) {
    return;
  }
  // Threads that are all job-stopped wait for a SIGCONT no one recorded
  // can send (natively, their orphaned process group would get SIGHUP).
  bool all_stopped = std::ranges::all_of(
      threads_, [](const auto& entry) { return entry.second->state == Thread::State::kJobStopped; });
  bool lingered = options_.linger &&
                  std::chrono::steady_clock::now() - *root_gone_at_ >= *options_.linger;
  if (!immediately && !all_stopped && !lingered) {
    return;
  }
  std::set<pid_t> processes = live_processes();
  leftovers_stopped_ = processes.size();
  if (options_.on_notice) {
    options_.on_notice(fmt::format("stopping {} the program left running (SIGKILL){}",
                                   processes.size() == 1 ? "the process" : "the processes",
                                   immediately || lingered ? "" : ": all are stopped by signals, "
                                                                  "with no one left to continue them"));
  }
  kill_all();
}

}  // namespace repro::tracer
