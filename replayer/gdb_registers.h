#pragma once
// The x86-64 registers as gdb sees them: the target description gdb reads
// with qXfer:features:read (the org.gnu.gdb.i386 core, sse, linux and
// segments features, 60 registers), and the conversion between ptrace's
// register structs and gdb's register layout (the g/G packets' bytes, each
// register little-endian at a fixed offset, in regnum order).
//
// Values only; reading and writing a thread is the caller's (gdb_server.cc).

#include <sys/user.h>

#include <optional>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/os/tracee.h"

namespace repro::replayer {

/// One thread's registers as ptrace gives them.
struct GdbRegisterState {
  os::Registers general{};
  user_fpregs_struct fpu{};
};

/// How many registers the target description declares (regnums 0..count-1).
constexpr int kGdbRegisterCount = 60;

/// The target description (target.xml).
const std::string& gdb_target_description();
/// The registers in gdb's layout (what a g reply carries, before hex).
std::string to_gdb_layout(const GdbRegisterState& state);
/// Sets `state` from gdb's layout. False if `layout` is not the whole layout.
bool from_gdb_layout(std::string_view layout, GdbRegisterState* state);
/// Where register `regnum` lies in the layout: {offset, size}; nullopt for
/// an unknown regnum.
std::optional<std::pair<size_t, size_t>> gdb_register_slot(int regnum);

/// Reads a stopped thread's registers (PTRACE_GETREGS, PTRACE_GETFPREGS).
Result<GdbRegisterState> read_gdb_registers(pid_t tid);
/// Writes them back.
Status write_gdb_registers(pid_t tid, const GdbRegisterState& state);

}  // namespace repro::replayer
