#pragma once
// Internal to core/diag: a libdw session (Dwfl) that knows where a tracee
// process's files are mapped, shared by backtraces (backtrace.h) and data
// address names (data_address.h).
//
// libdw learns where each file is mapped from two places:
// - the `modules` the caller passes: files the kernel does not know are
//   mapped, or knows under another name (see mapped_module.h);
// - /proc/PID/maps, for the files the kernel really mapped (the executable
//   and ld.so during replay; everything during recording).
// Where both cover an address, the caller's module wins.

#include <elfutils/libdwfl.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/diag/mapped_module.h"

namespace repro::diag {

using TraceeDwfl = std::unique_ptr<Dwfl, decltype(&dwfl_end)>;

/// A Dwfl with the files of process `pid` reported (modules first, then
/// /proc/PID/maps where they are not), ready for lookups; it does not
/// attach to the process. Returns a null handle and sets `*error`
/// ("libdw: ...") when libdw fails. Sets `*maps_error` (else "") when
/// /proc/PID/maps could not be used: files only it names are then missing.
/// `modules` is only read during the call.
TraceeDwfl report_tracee_modules(pid_t pid, const std::vector<MappedModule>& modules,
                                 std::string* error, std::string* maps_error);

}  // namespace repro::diag
