#pragma once
// The environment switches that force a fallback path on any host
// (REPRO_WCHAN=off, REPRO_SYSCALL_PATCHING=off, ...), read one way.

namespace repro {

/// True when environment variable `name` is set to "off".
bool switched_off(const char* name);

}  // namespace repro
