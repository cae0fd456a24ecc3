#pragma once
// Where a replay's writable memory first differs from the recording's at a
// preemption point, and how, for the divergence report.
//
// A preempt event names its point partly by a hash of writable memory, and
// keeps the hash of every page (docs/trace-format.md, "preempt pages"), and
// copies of some pages. When replay's memory hash differs, comparing the
// page lists gives the first difference in address order: a run of pages
// one side has and the other lacks (a mapping that is missing, extra, or
// not writable on one side), or a page whose content differs. For that
// page the recorded bytes are known when the trace holds a copy whose hash
// is the recorded page hash, or when that hash is the one of a page of
// zeros; the report then shows the differing bytes side by side.
//
// Pure functions on values: nothing here reads a process (the caller
// passes the page bytes and the naming callbacks), so all of it is unit
// tested (tests/unit/replayer/memory_difference_test.cc).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/format/event.h"
#include "core/os/memory_hash.h"

namespace repro::replayer {

/// The first difference between two page lists (both in address order).
struct MemoryDifference {
  enum class Kind {
    kNone,     // the same pages with the same hashes
    kMissing,  // the recording had non-zero pages [start, end) that replay does not
    kExtra,    // replay has non-zero pages [start, end) that the recording did not
    kPage,     // the page at `start` (end = start + page) has another hash
  };
  Kind kind = Kind::kNone;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t recorded_hash = 0;  // kPage only
  bool operator==(const MemoryDifference&) const = default;
};

/// Compares the recorded page hashes with replay's. A missing or extra
/// range runs from the first page one side lacks to the end of that
/// side's run of contiguous pages, or to the next page the other side has,
/// whichever comes first.
MemoryDifference first_memory_difference(const std::vector<format::PageHash>& recorded,
                                         const std::vector<os::PageHash>& replayed);

/// How one page's recorded and replayed bytes differ.
struct ByteDifference {
  size_t first_offset = 0;     // of the first differing byte, in the page
  size_t differing_bytes = 0;  // in the whole page
  // The bytes from first_offset to the last differing byte among the next
  // kByteWindow, on each side.
  std::string recorded;
  std::string replayed;
};

/// How many bytes a report shows from the first difference: enough for a
/// few adjacent variables (a struct's fields, a small array), few enough
/// for one line. Too small shows as a window cut inside a pointer.
constexpr size_t kByteWindow = 32;

/// The difference between two byte strings of the same length; nullopt if
/// they are equal (or their lengths differ).
std::optional<ByteDifference> compare_bytes(std::string_view recorded, std::string_view replayed);

/// "3a 1f 02": each byte as two lowercase hex digits, separated by spaces.
std::string hex_bytes(std::string_view bytes);

/// What replay found when a preemption point's memory differed: the first
/// difference and, for a page, its bytes on both sides where known.
struct MemoryFinding {
  MemoryDifference difference;
  std::optional<std::string> recorded_page;  // kPage: the recorded bytes, if the trace has them
  std::string replayed_page;                 // kPage: replay's bytes (empty if unreadable)
};

/// Names addresses for describe_memory_finding(); the replayer reads the
/// live process (diag::describe_data_address, /proc/PID/maps), tests fake it.
struct AddressNamer {
  /// "relocate_time+0x0 in /lib/ld.so (.bss)", "in [heap]", ...; "" if unknown.
  std::function<std::string(uint64_t address)> name_address;
  /// What replay has mapped in [start, end), as "/lib/libc.so.6 r--p" or
  /// "[heap] rw-p" (several joined by ", "); "" if nothing.
  std::function<std::string(uint64_t start, uint64_t end)> name_range;
};

/// The report's text for `finding`, to follow "differed in writable memory":
/// ": first at 0x7ffff7ffe0c8, relocate_time+0x0 in /lib/ld.so (.bss):
/// recorded 3a 1f 02, replayed 9c 44 01 (3 bytes of the page differ)".
std::string describe_memory_finding(const MemoryFinding& finding, const AddressNamer& namer);

}  // namespace repro::replayer
