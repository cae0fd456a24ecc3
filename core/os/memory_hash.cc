#include "core/os/memory_hash.h"

#include "core/os/tracee.h"

#include <fmt/core.h>
#include <sys/uio.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace repro::os {

Result<uint64_t> hash_writable_memory(pid_t pid, uint64_t skipped_mapping) {
  std::string maps_path = fmt::format("/proc/{}/maps", pid);
  std::unique_ptr<FILE, int (*)(FILE*)> maps(std::fopen(maps_path.c_str(), "re"), &std::fclose);
  if (!maps) {
    return Status::from_errno(errno, fmt::format("opening '{}'", maps_path));
  }
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  // Not zeroed (a memset of it would cost as much as a small program's
  // hash): every byte hashed was read first.
  constexpr size_t kBufferBytes = 1 << 20;
  auto buffer = std::make_unique_for_overwrite<char[]>(kBufferBytes);
  char line[512];
  unsigned long previous_end = 0;
  while (std::fgets(line, sizeof line, maps.get()) != nullptr) {
    unsigned long start = 0;
    unsigned long end = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 || perms[1] != 'w') {
      continue;
    }
    if (start == skipped_mapping || std::strstr(line, "[vvar") != nullptr ||
        std::strstr(line, "[vsyscall]") != nullptr) {
      continue;
    }
    // Replay may map a file as anonymous memory (a trace on a noexec
    // mount), which the kernel may merge with a neighbour: hash contiguous
    // runs, not the mappings' boundaries.
    if (start != previous_end) {
      XXH3_64bits_update(state, &start, sizeof start);
    }
    previous_end = end;
    for (unsigned long at = start; at < end;) {
      size_t n = std::min<unsigned long>(kBufferBytes, end - at);
      iovec local{buffer.get(), n};
      iovec remote{reinterpret_cast<void*>(at), n};
      ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
      if (got <= 0) {
        break;  // unreadable tail (e.g. beyond a file's end): same on both sides
      }
      XXH3_64bits_update(state, buffer.get(), static_cast<size_t>(got));
      at += static_cast<unsigned long>(got);
    }
  }
  uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

Result<uint64_t> hash_extended_registers(pid_t tid) {
  constexpr size_t kFxsaveBytes = 416;
  REPRO_ASSIGN_OR_RETURN(std::string xstate, get_extended_registers(tid));
  return XXH3_64bits(xstate.data(), std::min(xstate.size(), kFxsaveBytes));
}

}  // namespace repro::os
