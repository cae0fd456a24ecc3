#include "core/patch/rdtsc_sites.h"

#include <algorithm>
#include <map>

#include "core/patch/elf_code.h"
#include "core/patch/instruction.h"

namespace repro::patch {

Result<RdtscScan> scan_for_rdtsc(const std::string& path) {
  RdtscScan scan;
  REPRO_ASSIGN_OR_RETURN(std::optional<ElfCode> elf, ElfCode::open(path));
  if (!elf) {
    return scan;
  }
  std::vector<uint64_t> candidates;  // vaddrs
  for (const CodeSegment& segment : elf->segments()) {
    for (size_t offset :
         rdtsc_byte_patterns(elf->file() + segment.file_offset, segment.file_bytes)) {
      candidates.push_back(segment.vaddr + offset);
    }
  }
  if (candidates.empty()) {
    return scan;  // most programs: no function needs decoding
  }
  std::sort(candidates.begin(), candidates.end());
  REPRO_ASSIGN_OR_RETURN(std::vector<FunctionRange> ranges, elf->function_ranges());

  // Decode each range that holds a candidate, once, from its start.
  std::map<uint64_t, uint8_t> found;  // vaddr of each site -> its length
  for (const FunctionRange& range : ranges) {
    auto first = std::lower_bound(candidates.begin(), candidates.end(), range.start);
    if (first == candidates.end() || *first >= range.end) {
      continue;
    }
    size_t size = 0;
    const uint8_t* code = elf->code_at(range.start, range.end, &size);
    if (code == nullptr) {
      continue;
    }
    for (const TscInstruction& instruction : find_rdtsc_instructions(code, size, range.start)) {
      if (found.emplace(instruction.address, instruction.length).second) {
        uint64_t offset = static_cast<uint64_t>(code - elf->file()) +
                          (instruction.address - range.start);
        scan.sites.push_back({offset, instruction.address, instruction.length, instruction.rdtscp});
      }
    }
  }
  std::sort(scan.sites.begin(), scan.sites.end(),
            [](const RdtscSite& a, const RdtscSite& b) { return a.file_offset < b.file_offset; });
  for (uint64_t candidate : candidates) {
    // A site with prefixes starts before its 0f byte.
    auto after = found.upper_bound(candidate);
    bool confirmed = after != found.begin() &&
                     candidate < std::prev(after)->first + std::prev(after)->second;
    scan.unconfirmed += confirmed ? 0 : 1;
  }
  return scan;
}

std::vector<size_t> rdtsc_byte_patterns(const uint8_t* bytes, size_t size) {
  std::vector<size_t> offsets;
  for (size_t i = 0; i + 1 < size; ++i) {
    if (bytes[i] != 0x0f) {
      continue;
    }
    if (bytes[i + 1] == 0x31 || (i + 2 < size && bytes[i + 1] == 0x01 && bytes[i + 2] == 0xf9)) {
      offsets.push_back(i);
    }
  }
  return offsets;
}

std::string rdtsc_trap_bytes(size_t length) {
  std::string bytes(length, '\x90');
  bytes[0] = '\x0f';
  bytes[1] = '\x0b';
  return bytes;
}

bool is_rdtsc_instruction(const std::string& bytes, bool* rdtscp) {
  const auto* code = reinterpret_cast<const uint8_t*>(bytes.data());
  std::vector<TscInstruction> found = find_rdtsc_instructions(code, bytes.size(), 0);
  if (found.size() != 1 || found[0].address != 0 || found[0].length != bytes.size()) {
    return false;
  }
  *rdtscp = found[0].rdtscp;
  return true;
}

}  // namespace repro::patch
