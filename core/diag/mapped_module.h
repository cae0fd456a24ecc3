#pragma once
// MappedModule: one file mapping of a tracee that the kernel cannot name.
//
// Replay maps the files a program maps (libc, ld.so's dlopens, ...) as
// anonymous memory filled from the trace's copies, so /proc/PID/maps shows
// no file there and a backtrace could neither unwind through that code nor
// name it. The replayer keeps one MappedModule per such mapping and hands
// the list to diag::backtrace(), which reads symbols and unwind tables from
// `file_path` as if the file were mapped at `start`. A plain value type.

#include <cstdint>
#include <string>

namespace repro::diag {

struct MappedModule {
  uint64_t start = 0;         // first address of the mapping in the tracee
  uint64_t length_bytes = 0;  // whole pages, as the kernel maps them
  uint64_t file_offset = 0;   // offset in the file of the byte at `start`
  std::string recorded_path;  // the path the program mapped; shown in reports
  std::string file_path;      // a local file with the mapped bytes (the trace's copy)
};

}  // namespace repro::diag
