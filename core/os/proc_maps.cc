#include "core/os/proc_maps.h"

#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <memory>

namespace repro::os {

bool parse_mapping(const char* line, Mapping* mapping) {
  unsigned long start = 0;
  unsigned long end = 0;
  unsigned long offset = 0;
  unsigned long inode = 0;
  char perms[8] = {};
  int name_at = 0;
  if (std::sscanf(line, "%lx-%lx %7s %lx %*x:%*x %lu %n", &start, &end, perms, &offset, &inode,
                  &name_at) < 5) {
    return false;
  }
  mapping->start = start;
  mapping->end = end;
  mapping->perms = perms;
  mapping->file_offset = offset;
  mapping->inode = inode;
  mapping->name = line + name_at;
  while (!mapping->name.empty() && mapping->name.back() == '\n') {
    mapping->name.pop_back();
  }
  return true;
}

Result<std::vector<Mapping>> read_mappings(pid_t pid) {
  std::string path = fmt::format("/proc/{}/maps", pid);
  std::unique_ptr<FILE, int (*)(FILE*)> maps(std::fopen(path.c_str(), "re"), &std::fclose);
  if (!maps) {
    return Status::from_errno(errno, fmt::format("opening '{}'", path));
  }
  std::vector<Mapping> mappings;
  // Paths are at most PATH_MAX (4096) bytes; the fields before them, a
  // hundred or so.
  char line[4096 + 256];
  while (std::fgets(line, sizeof line, maps.get()) != nullptr) {
    Mapping mapping;
    if (parse_mapping(line, &mapping)) {
      mappings.push_back(std::move(mapping));
    }
  }
  return mappings;
}

}  // namespace repro::os
