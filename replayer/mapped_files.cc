#include "replayer/mapped_files.h"

#include <utility>

namespace repro::replayer {
namespace {

// repro runs on x86-64 only, where pages are 4 KiB. mmap maps whole pages,
// so a mapping of 100 bytes covers 4096: too small a value would leave the
// tail of a replaced mapping in the list.
constexpr uint64_t kPageBytes = 4096;

}  // namespace

void MappedFiles::note(diag::MappedModule mapping) {
  mapping.length_bytes = (mapping.length_bytes + kPageBytes - 1) & ~(kPageBytes - 1);
  const uint64_t start = mapping.start;
  const uint64_t end = start + mapping.length_bytes;
  if (mapping.length_bytes == 0 || end < start) {
    return;  // the kernel refuses such an mmap; nothing was mapped
  }
  // Cut [start, end) out of the earlier mappings. The one that starts
  // before `start` may reach into the range, so begin there.
  auto it = by_start_.lower_bound(start);
  if (it != by_start_.begin()) {
    --it;
  }
  while (it != by_start_.end() && it->first < end) {
    const diag::MappedModule old = it->second;
    const uint64_t old_end = old.start + old.length_bytes;
    if (old_end <= start) {
      ++it;
      continue;
    }
    it = by_start_.erase(it);
    if (old.start < start) {
      diag::MappedModule left = old;
      left.length_bytes = start - old.start;
      by_start_.emplace(left.start, std::move(left));
    }
    if (old_end > end) {
      diag::MappedModule right = old;
      right.start = end;
      right.length_bytes = old_end - end;
      right.file_offset += end - old.start;
      by_start_.emplace(right.start, std::move(right));
    }
  }
  by_start_.insert_or_assign(start, std::move(mapping));
}

std::vector<diag::MappedModule> MappedFiles::modules() const {
  std::vector<diag::MappedModule> list;
  list.reserve(by_start_.size());
  for (const auto& [start, mapping] : by_start_) {
    list.push_back(mapping);
  }
  return list;
}

}  // namespace repro::replayer
