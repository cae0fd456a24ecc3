#pragma once
// Set-user-ID and set-group-ID programs under recording. The kernel does not
// raise the privileges of a process that execs such a program while it is
// traced (a tracer could otherwise take them over), so the program runs with
// the ids it had: `passwd` cannot write /etc/shadow, `ping` may lack its
// capability. repro records it all the same and warns, once per program,
// since the recording may then differ from a run outside repro; replay
// repeats the recording. Stateless; thread-safe.

#include <sys/types.h>

#include <optional>
#include <string>

namespace repro::tracer {

/// After an exec stop of `tid`: a description of the privileges the exec'd
/// program would have had without tracing ("set-user-ID uid 0 (root)"), or
/// nullopt when it had none to lose: no set-id bit, the file's owner is the
/// process's own effective id already, or the file system is mounted nosuid.
/// Errors of /proc (the thread died) give nullopt too.
std::optional<std::string> privileges_lost_at_exec(pid_t tid);

}  // namespace repro::tracer
