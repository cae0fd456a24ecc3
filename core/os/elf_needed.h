#pragma once
// The shared libraries an x86-64 ELF file asks for (its DT_NEEDED entries),
// read with libelf through its program headers from the mapped file: a
// few pages touched, whatever the file's size.

#include <string>
#include <vector>

#include "core/base/status.h"

namespace repro::os {

/// The DT_NEEDED names of the ELF file at `path`, in order; empty for a
/// static executable. Errors: io_error (unreadable), invalid_argument (not
/// a 64-bit ELF file, or a dynamic section that does not fit in it).
Result<std::vector<std::string>> needed_libraries(const std::string& path);

}  // namespace repro::os
