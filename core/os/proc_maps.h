#pragma once
// The memory mappings of a process, as /proc/PID/maps lists them. One
// parser for every part of repro that looks at a tracee's address space
// (hashing writable memory, finding code to patch, reports).
//
// Stateless; thread-safe.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace repro::os {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string perms;        // "r-xp": read, write, execute, private or shared
  uint64_t file_offset = 0;
  uint64_t inode = 0;       // 0: no file behind it
  std::string name;         // a path, "[stack]", "[heap]", ... or empty
  bool readable() const { return perms.size() == 4 && perms[0] == 'r'; }
  bool writable() const { return perms.size() == 4 && perms[1] == 'w'; }
  bool executable() const { return perms.size() == 4 && perms[2] == 'x'; }
  bool is_private() const { return perms.size() == 4 && perms[3] == 'p'; }
  /// Backed by a file (a path name and an inode).
  bool is_file() const { return inode != 0 && !name.empty() && name[0] == '/'; }
};

/// The mappings of `pid` in address order. Errors: io_error (cannot read
/// /proc/PID/maps: no such process, or not permitted).
Result<std::vector<Mapping>> read_mappings(pid_t pid);

/// Parses one line of /proc/PID/maps; false if it is not one.
bool parse_mapping(const char* line, Mapping* mapping);

}  // namespace repro::os
