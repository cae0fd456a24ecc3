#pragma once
// What an exec looks like to the kernel, worked out from the syscall a
// replayed thread makes and the exec event the recording logged.
//
// Replay executes the trace's copy of the image that ran (for a script,
// its interpreter) directly, so it must lay out by itself what the kernel
// derived when recording: the file name it used (AT_EXECFN) and the argv it
// built (a script's interpreter, its argument and the script's path in
// place of argv[0]). Pure functions; thread-safe.

#include <string>
#include <vector>

#include "core/format/event.h"

namespace repro::replayer {

using format::split_exec_argv;

/// The name the kernel gives the file execve or execveat opens (it becomes
/// AT_EXECFN and a script's path): `path` for execve, AT_FDCWD or an
/// absolute path; "/dev/fd/N" for an empty path (AT_EMPTY_PATH), else
/// "/dev/fd/N/path".
std::string kernel_exec_name(int syscall_number, int dirfd, const std::string& path);

/// How many last strings `a` and `b` have in common.
size_t common_tail(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace repro::replayer
