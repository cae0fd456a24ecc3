#include "core/os/populated_pages.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/base/scoped_fd.h"
#include "core/os/memory_hash.h"

namespace repro::os {
namespace {

// The PAGEMAP_SCAN ABI (include/uapi/linux/fs.h, Linux 6.7), which the
// headers this is built against may predate.
struct PmScanArg {
  uint64_t size;
  uint64_t flags;
  uint64_t start;
  uint64_t end;
  uint64_t walk_end;
  uint64_t vec;
  uint64_t vec_len;
  uint64_t max_pages;
  uint64_t category_inverted;
  uint64_t category_mask;
  uint64_t category_anyof_mask;
  uint64_t return_mask;
};
struct PageRegion {
  uint64_t start;
  uint64_t end;
  uint64_t categories;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);
constexpr uint64_t kPageIsPresent = 1 << 3;
constexpr uint64_t kPageIsSwapped = 1 << 4;
constexpr uint64_t kPageIsPfnZero = 1 << 5;

// /proc/PID/pagemap entries.
constexpr uint64_t kEntryPresent = uint64_t{1} << 63;
constexpr uint64_t kEntrySwapped = uint64_t{1} << 62;

Result<ScopedFd> open_pagemap(pid_t pid) {
  std::string path = fmt::format("/proc/{}/pagemap", pid);
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return Status::from_errno(errno, "opening " + path);
  }
  return fd;
}

void add_range(std::vector<PageRange>& ranges, uint64_t start, uint64_t end) {
  if (!ranges.empty() && ranges.back().end == start) {
    ranges.back().end = end;
  } else {
    ranges.push_back({start, end});
  }
}

bool scan_disabled() {
  const char* value = std::getenv("REPRO_PAGEMAP_SCAN");
  return value != nullptr && std::strcmp(value, "0") == 0;
}

// The ioctl's answer; `unsupported` (a kernel without it: ENOTTY, or
// EINVAL for an argument it does not know) for the caller to fall back.
Result<std::vector<PageRange>> scan(int fd, uint64_t start, uint64_t end) {
  std::vector<PageRange> ranges;
  std::array<PageRegion, 512> regions;
  uint64_t at = start;
  while (at < end) {
    PmScanArg arg{};
    arg.size = sizeof arg;
    arg.start = at;
    arg.end = end;
    arg.vec = reinterpret_cast<uint64_t>(regions.data());
    arg.vec_len = regions.size();
    arg.category_anyof_mask = kPageIsPresent | kPageIsSwapped;
    arg.category_inverted = kPageIsPfnZero;  // and not the shared zero page
    arg.category_mask = kPageIsPfnZero;
    arg.return_mask = kPageIsPresent | kPageIsSwapped;
    int found = ioctl(fd, kPagemapScan, &arg);
    if (found < 0) {
      int error = errno;
      return error == ENOTTY || error == EINVAL
                 ? Status::error(StatusCode::kUnsupported, "no PAGEMAP_SCAN")
                 : Status::from_errno(error, "PAGEMAP_SCAN");
    }
    for (int i = 0; i < found; ++i) {
      add_range(ranges, regions[i].start, regions[i].end);
    }
    if (arg.walk_end <= at) {
      return Status::error(StatusCode::kIoError, "PAGEMAP_SCAN made no progress");
    }
    at = arg.walk_end;
  }
  return ranges;
}

}  // namespace

Result<std::vector<PageRange>> populated_ranges_from_pagemap(pid_t pid, uint64_t start,
                                                             uint64_t end) {
  REPRO_ASSIGN_OR_RETURN(ScopedFd fd, open_pagemap(pid));
  std::vector<PageRange> ranges;
  std::array<uint64_t, 8192> entries;
  for (uint64_t at = start; at < end;) {
    size_t pages = std::min<uint64_t>(entries.size(), (end - at) / kPageBytes);
    off_t offset = static_cast<off_t>(at / kPageBytes * sizeof(uint64_t));
    ssize_t got = pread(fd.get(), entries.data(), pages * sizeof(uint64_t), offset);
    if (got <= 0 || got % sizeof(uint64_t) != 0) {
      return Status::from_errno(got < 0 ? errno : EIO, fmt::format("reading pagemap of {}", pid));
    }
    size_t read_pages = static_cast<size_t>(got) / sizeof(uint64_t);
    for (size_t i = 0; i < read_pages; ++i) {
      if (entries[i] & (kEntryPresent | kEntrySwapped)) {
        uint64_t page = at + i * kPageBytes;
        add_range(ranges, page, page + kPageBytes);
      }
    }
    at += read_pages * kPageBytes;
  }
  return ranges;
}

Result<std::vector<PageRange>> populated_ranges(pid_t pid, uint64_t start, uint64_t end) {
  if (!scan_disabled()) {
    REPRO_ASSIGN_OR_RETURN(ScopedFd fd, open_pagemap(pid));
    auto ranges = scan(fd.get(), start, end);
    if (ranges.is_ok() || ranges.status().code() != StatusCode::kUnsupported) {
      return ranges;
    }
  }
  return populated_ranges_from_pagemap(pid, start, end);
}

}  // namespace repro::os
