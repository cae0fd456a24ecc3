#pragma once
// Names of data addresses in a tracee process, for error reports: which
// variable of which file a memory address belongs to. Used by replay when
// a preemption point's memory differs, to say where.
//
// The name comes from the ELF file mapped at the address (libdw, with the
// mappings reported as for backtraces, see backtrace.h): the symbol whose
// extent covers the address, from the symbol table or separate debug
// information, and the section, from the section headers. .bss has no
// bytes in the file but lies within the file's PT_LOAD range, so it is
// named like .data.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/diag/mapped_module.h"

namespace repro::diag {

/// "relocate_time+0x0 in /lib64/ld-linux-x86-64.so.2 (.bss)" where a
/// symbol covers `address`; "in /lib64/ld-linux-x86-64.so.2 (.bss+0x1c8)"
/// where none does (a stripped file keeps only the exported symbols of
/// .dynsym); "in /path" where no section does either. A file of `modules`
/// is named by its recorded_path. Returns "" when no ELF file covers the
/// address (heap, stacks, anonymous memory) or libdw fails: best effort.
/// Requires: process `pid` exists; it need not be stopped (nothing is
/// read from its memory). `modules` is only read during the call.
std::string describe_data_address(pid_t pid, uint64_t address,
                                  const std::vector<MappedModule>& modules);

}  // namespace repro::diag
