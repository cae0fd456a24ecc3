// Replay isolation (core/os/isolation.h): the choice made from
// REPRO_REPLAY_ISOLATION, what replay says when it cannot isolate, and the
// test hook that proves the isolation holds.
//
// REPRO_REPLAY_EXECUTE_FOR_REAL=connect,openat,... is a test hook: it makes
// replay run the named syscalls for real instead of emulating them, which is
// what a wrong row in the syscall table or a replayer bug would do. With
// isolation, such a syscall cannot reach the network or write a file: it
// fails, its result differs from the recorded one, and replay reports a
// divergence. tests/e2e/scenarios/replay_isolation_enforced.sh uses it. It
// is not for anything else: a replay with it set is no faithful replay.

#include <fmt/core.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/syscalls/syscall_table.h"
#include "replayer/divergence.h"
#include "replayer/replay_session.h"

namespace repro::replayer {

Status ReplaySession::choose_isolation() {
  REPRO_ASSIGN_OR_RETURN(isolation_, os::isolation_request_from_env());
  const char* value = std::getenv("REPRO_REPLAY_EXECUTE_FOR_REAL");
  std::string_view names = value == nullptr ? "" : value;
  while (!names.empty()) {
    size_t comma = names.find(',');
    std::string_view name = names.substr(0, comma);
    names = comma == std::string_view::npos ? "" : names.substr(comma + 1);
    if (name.empty()) {
      continue;
    }
    const syscalls::SyscallInfo* info = syscalls::find_by_name(name);
    if (info == nullptr || info->x86_64 < 0) {
      return Status::error(StatusCode::kInvalidArgument,
                           fmt::format("REPRO_REPLAY_EXECUTE_FOR_REAL: no syscall '{}'", name));
    }
    execute_for_real_.insert(info->x86_64);
  }
  if (!execute_for_real_.empty() && options_.on_warning) {
    options_.on_warning(fmt::format(
        "REPRO_REPLAY_EXECUTE_FOR_REAL={}: these syscalls run for real (a test hook)", value));
  }
  return Status::ok();
}

Status ReplaySession::check_isolation(const os::IsolationFailure& failure) {
  const char* unguarded =
      "nothing but emulation keeps the program from the network and the file system";
  if (isolation_ == os::IsolationRequest::kOff) {
    if (options_.on_warning) {
      options_.on_warning(
          fmt::format("replay isolation is off (REPRO_REPLAY_ISOLATION=off): {}", unguarded));
    }
    return Status::ok();
  }
  if (!failure.failed()) {
    return Status::ok();
  }
  if (isolation_ == os::IsolationRequest::kNamespace) {
    return Status::error(StatusCode::kUnsupported,
                         fmt::format("REPRO_REPLAY_ISOLATION=namespace, but this host does not "
                                     "allow it ({}); see 'repro doctor'",
                                     failure.describe()));
  }
  if (options_.on_warning) {
    options_.on_warning(fmt::format("replay isolation is not enforced here ({}): {}; see 'repro doctor'",
                                    failure.describe(), unguarded));
  }
  return Status::ok();
}

Status ReplaySession::execute_for_real(ReplayThread& t, const format::Event& event) {
  REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SYSCALL));
  REPRO_RETURN_IF_ERROR(wait_syscall_exit(t));
  t.where = ReplayThread::Where::kParked;
  REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
  const auto result = static_cast<int64_t>(regs.rax);
  if (result != event.result) {
    auto describe = [](int64_t value) {
      return value < 0 && value >= -4095
                 ? fmt::format("{} ({})", value, std::strerror(static_cast<int>(-value)))
                 : std::to_string(value);
    };
    return diverged(t,
                    fmt::format("{} = {}", describe_syscall(event.syscall_number, event.args),
                                describe(event.result)),
                    fmt::format("run for real (REPRO_REPLAY_EXECUTE_FOR_REAL): {}",
                                describe(result)));
  }
  return write_recorded_memory(t, event);
}

}  // namespace repro::replayer
