// How replay performs an exec: the trace's copy of the image that ran, with
// the argv and file name the kernel used when recording, and the program's
// own memory left untouched.
//
// The new image's initial stack (argv and envp strings, AT_EXECFN, auxv)
// fixes the address of everything on it, so it must match the recording
// byte for byte in layout. Replay points the thread's execve or execveat
// (then relative to AT_FDCWD) at a scratch path of the recorded name's
// length (ExecPaths) that leads to the stored copy, with the recorded argv. For a script, the
// copy is its interpreter and the argv the one the kernel rewrote
// (interpreter, its argument, script path, then the program's argv[1...]),
// which execing the interpreter directly reproduces exactly. The scratch
// path and the strings the program did not pass itself go below the
// thread's stack, in memory the exec discards; the recorded name is put
// back in AT_EXECFN afterwards.

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/syscall.h>

#include <cstring>

#include "core/os/auxv.h"
#include "replayer/divergence.h"
#include "replayer/exec_argv.h"
#include "replayer/replay_session.h"

namespace repro::replayer {

namespace {

// The kernel's MAX_ARG_STRLEN (32 pages): no argv string is longer.
constexpr size_t kMaxArgBytes = 32 * 4096;
// The x86-64 red zone below the stack pointer, which the code that made
// the syscall may still use (its argv could be there).
constexpr uint64_t kRedZoneBytes = 128;

std::string describe_exec(const std::string& name, const std::vector<std::string>& argv) {
  std::string text = fmt::format("exec of \"{}\" with argv [", name);
  for (size_t i = 0; i < argv.size(); ++i) {
    text += fmt::format("{}\"{}\"", i == 0 ? "" : ", ", argv[i]);
  }
  return text + "]";
}

}  // namespace

Result<std::pair<uint64_t, std::string>> ReplaySession::redirect_exec(ReplayThread& t,
                                                                      const format::Event& event) {
  const bool at = t.syscall_number == SYS_execveat;
  const uint64_t path_address = at ? t.args[1] : t.args[0];
  const uint64_t argv_address = at ? t.args[2] : t.args[1];
  const uint64_t envp_address = at ? t.args[3] : t.args[2];
  const std::vector<std::string> recorded = split_exec_argv(event.data);

  REPRO_ASSIGN_OR_RETURN(std::string path, os::read_c_string(t.tid, path_address));
  const std::string name = kernel_exec_name(t.syscall_number, static_cast<int>(t.args[0]), path);
  // The program's argv, which cannot be longer than the recorded one: one
  // string more already shows a divergence, so reading stops there.
  std::vector<uint64_t> given_addresses;
  std::vector<std::string> given;
  for (uint64_t slot = argv_address; slot != 0 && given.size() <= recorded.size(); slot += 8) {
    uint64_t address = 0;
    REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, slot, &address, sizeof address));
    if (address == 0) {
      break;
    }
    REPRO_ASSIGN_OR_RETURN(std::string arg, os::read_c_string(t.tid, address, kMaxArgBytes));
    given_addresses.push_back(address);
    given.push_back(std::move(arg));
  }
  // The kernel replaces at most argv[0] (by a script's interpreter line).
  const size_t tail = common_tail(recorded, given);
  const bool argv_matches = given.size() <= recorded.size() && tail + 1 >= given.size();
  if (name != event.path || !argv_matches) {
    return diverged(t, describe_exec(event.path, recorded), describe_exec(name, given));
  }

  // Scratch memory, from low to high: the new argv array (when the
  // program's cannot serve), the strings it adds, the scratch path.
  const bool same_argv = tail == given.size() && tail == recorded.size();
  std::vector<std::string> added(recorded.begin(), recorded.end() - static_cast<ptrdiff_t>(tail));
  size_t array_bytes = same_argv ? 0 : 8 * (recorded.size() + 1);
  size_t strings_bytes = 0;
  for (const std::string& arg : added) {
    strings_bytes += arg.size() + 1;
  }
  const size_t total = array_bytes + strings_bytes + name.size() + 1;
  const uint64_t base = (t.entry_regs.rsp - kRedZoneBytes - total) & ~uint64_t{15};

  REPRO_ASSIGN_OR_RETURN(std::string copy, stored_copy(event.content_id, event.path));
  REPRO_ASSIGN_OR_RETURN(std::string scratch_path, exec_paths_.make(name.size(), copy));
  std::string bytes(total, '\0');
  uint64_t string_address = base + array_bytes;
  std::vector<uint64_t> new_argv;
  for (const std::string& arg : added) {
    new_argv.push_back(string_address);
    std::memcpy(&bytes[string_address - base], arg.data(), arg.size());
    string_address += arg.size() + 1;
  }
  new_argv.insert(new_argv.end(), given_addresses.end() - static_cast<ptrdiff_t>(tail),
                  given_addresses.end());
  new_argv.push_back(0);
  if (!same_argv) {
    std::memcpy(bytes.data(), new_argv.data(), array_bytes);
  }
  std::memcpy(&bytes[string_address - base], scratch_path.data(), scratch_path.size());

  auto old_bytes = os::read_memory(t.tid, base, total);
  if (!old_bytes.is_ok()) {
    return Status::error(StatusCode::kUnsupported,
                         fmt::format("event #{}: no room below the stack of thread t{} to replay "
                                     "the exec of \"{}\"",
                                     event_index_, t.index, event.path));
  }
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, base, bytes.data(), bytes.size()));
  // The same syscall, so a seccomp filter of the program's own, which the
  // kernel runs again on the changed registers, judges it as it did.
  os::Registers regs = t.entry_regs;
  const uint64_t new_argv_address = same_argv ? argv_address : base;
  if (at) {
    regs.rdi = static_cast<uint64_t>(AT_FDCWD);  // with a path, the path is the name
    regs.rsi = string_address;
    regs.rdx = new_argv_address;
    regs.r10 = envp_address;
    regs.r8 = 0;
  } else {
    regs.rdi = string_address;
    regs.rsi = new_argv_address;
    regs.rdx = envp_address;
  }
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  return std::make_pair(base, std::move(*old_bytes));
}

Status ReplaySession::restore_exec_state(ReplayThread& t, const format::Event& exec) {
  REPRO_ASSIGN_OR_RETURN(os::ExecAuxv auxv, os::patch_exec_auxv(t.tid));
  if (exec.random_bytes.size() != auxv.random_bytes.size()) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("event #{} has a bad AT_RANDOM length", event_index_));
  }
  if (auxv.argv != exec.data || auxv.execfn.size() != exec.path.size()) {
    return diverged(t, describe_exec(exec.path, split_exec_argv(exec.data)),
                    describe_exec(auxv.execfn, split_exec_argv(auxv.argv)));
  }
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, auxv.random_address, exec.random_bytes.data(),
                                         exec.random_bytes.size()));
  // The new stack holds the scratch path replay exec'd: put back the
  // recorded name, of the same length.
  if (auxv.execfn_address != 0) {
    REPRO_RETURN_IF_ERROR(
        os::write_memory(t.tid, auxv.execfn_address, exec.path.data(), exec.path.size()));
  }
  return Status::ok();
}

}  // namespace repro::replayer
