#include "core/os/zero_pages.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "core/base/scoped_fd.h"
#include "core/os/memory_hash.h"

namespace repro::os {
namespace {

// /proc/PID/pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr uint64_t kPagePresent = uint64_t{1} << 63;
constexpr uint64_t kPageSwapped = uint64_t{1} << 62;
constexpr uint64_t kPageFileOrSharedAnon = uint64_t{1} << 61;

// The pagemap entries of [start, end) of `pid`, or empty if unreadable.
std::vector<uint64_t> read_pagemap(pid_t pid, uint64_t start, uint64_t end) {
  std::string path = fmt::format("/proc/{}/pagemap", pid);
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  std::vector<uint64_t> entries((end - start) / kPageBytes);
  const size_t bytes = entries.size() * sizeof(uint64_t);
  size_t done = 0;
  while (fd.valid() && done < bytes) {
    ssize_t n = ::pread(fd.get(), reinterpret_cast<char*>(entries.data()) + done, bytes - done,
                        static_cast<off_t>(start / kPageBytes * sizeof(uint64_t) + done));
    if (n <= 0) {
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (done != bytes) {
    entries.clear();
  }
  return entries;
}

// Marks in `in_hole` the pages of the file mapping whose file bytes are a
// hole, within the file's size. False if the file system cannot tell.
bool mark_file_holes(pid_t pid, const Mapping& mapping, std::vector<bool>* in_hole) {
  std::string path = fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, mapping.start, mapping.end);
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return false;
  }
  // Whole pages of the file; the last, partial one reads as data and zeros.
  const uint64_t file_end =
      (static_cast<uint64_t>(st.st_size) + kPageBytes - 1) & ~(kPageBytes - 1);
  const uint64_t first = mapping.file_offset;
  const uint64_t last = std::min(first + (mapping.end - mapping.start), file_end);
  for (uint64_t at = first; at < last;) {
    off_t data = ::lseek(fd.get(), static_cast<off_t>(at), SEEK_DATA);
    uint64_t hole_end = last;
    if (data >= 0) {
      hole_end = std::min(static_cast<uint64_t>(data), last);
    } else if (errno != ENXIO) {
      return false;  // no SEEK_DATA here
    }
    for (uint64_t page = (at + kPageBytes - 1) / kPageBytes * kPageBytes;
         page + kPageBytes <= hole_end; page += kPageBytes) {
      (*in_hole)[(page - first) / kPageBytes] = true;
    }
    if (hole_end >= last) {
      break;
    }
    off_t hole = ::lseek(fd.get(), static_cast<off_t>(hole_end), SEEK_HOLE);
    if (hole < 0) {
      return false;
    }
    at = static_cast<uint64_t>(hole);
  }
  return true;
}

}  // namespace

std::vector<bool> known_zero_pages(pid_t pid, const Mapping& mapping) {
  const size_t pages = (mapping.end - mapping.start) / kPageBytes;
  std::vector<uint64_t> pagemap = read_pagemap(pid, mapping.start, mapping.end);
  if (pagemap.empty()) {
    return {};
  }
  std::vector<bool> zero(pages, false);
  if (mapping.inode == 0) {
    if (!mapping.is_private()) {
      return {};
    }
    for (size_t i = 0; i < pages; ++i) {
      zero[i] = (pagemap[i] & (kPagePresent | kPageSwapped)) == 0;
    }
    return zero;
  }
  if (!mark_file_holes(pid, mapping, &zero)) {
    return {};
  }
  if (mapping.is_private()) {
    for (size_t i = 0; i < pages; ++i) {
      bool copied = (pagemap[i] & kPageSwapped) != 0 ||
                    ((pagemap[i] & kPagePresent) != 0 && (pagemap[i] & kPageFileOrSharedAnon) == 0);
      zero[i] = zero[i] && !copied;
    }
  }
  return zero;
}

}  // namespace repro::os
