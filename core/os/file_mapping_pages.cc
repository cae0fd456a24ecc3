#include "core/os/file_mapping_pages.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>

#include "core/base/scoped_fd.h"
#include "core/os/memory_hash.h"

namespace repro::os {
namespace {

uint64_t page_down(uint64_t at) { return at & ~(kPageBytes - 1); }
uint64_t page_up(uint64_t at) { return (at + kPageBytes - 1) & ~(kPageBytes - 1); }

// Sorts `ranges` and merges those that overlap or touch.
std::vector<PageRange> merged(std::vector<PageRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const PageRange& a, const PageRange& b) { return a.start < b.start; });
  std::vector<PageRange> out;
  for (const PageRange& range : ranges) {
    if (!out.empty() && range.start <= out.back().end) {
      out.back().end = std::max(out.back().end, range.end);
    } else {
      out.push_back(range);
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<PageRange>> file_mapping_data_ranges(pid_t pid, const Mapping& mapping) {
  std::string path = fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, mapping.start, mapping.end);
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  // File offsets this mapping shows, within the file.
  const uint64_t first = mapping.file_offset;
  const uint64_t last =
      std::min(first + (mapping.end - mapping.start), static_cast<uint64_t>(st.st_size));
  auto address = [&](uint64_t offset) { return mapping.start + (offset - first); };
  std::vector<PageRange> ranges;
  for (uint64_t at = first; at < last;) {
    off_t data = ::lseek(fd.get(), static_cast<off_t>(at), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) {
        break;  // a hole from here to the end of the file
      }
      return std::nullopt;  // no SEEK_DATA here
    }
    if (static_cast<uint64_t>(data) >= last) {
      break;
    }
    off_t hole = ::lseek(fd.get(), data, SEEK_HOLE);
    if (hole < 0) {
      return std::nullopt;
    }
    const uint64_t data_end = std::min(static_cast<uint64_t>(hole), last);
    ranges.push_back({address(page_down(static_cast<uint64_t>(data))), address(page_up(data_end))});
    at = data_end;
  }
  if (mapping.is_private()) {
    // Pages copied on write hold what the program stored, hole or not.
    Result<std::vector<PageRange>> populated = populated_ranges(pid, mapping.start, mapping.end);
    if (!populated.is_ok()) {
      return std::nullopt;
    }
    ranges.insert(ranges.end(), populated->begin(), populated->end());
  }
  return merged(std::move(ranges));
}

}  // namespace repro::os
