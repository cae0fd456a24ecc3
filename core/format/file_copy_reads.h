#pragma once
// FileCopyReads: fills in the bytes of reads the trace stores by reference
// (kSyscallReadsFileCopy): the recorder kept one copy of the file in files/
// and only the addresses and lengths in the event, so a file read many
// times, or by many processes, costs its size once.
//
// Each copy is checked against its content id the first time it is used
// (file_copy_check.h), so a damaged copy is reported as damage rather than
// replayed as wrong bytes. Copies stay open while the reader lives.
//
// Not thread-safe; owned by one TraceReader.

#include <map>
#include <string>

#include "core/base/scoped_fd.h"
#include "core/base/status.h"
#include "core/format/event.h"

namespace repro::format {

class FileCopyReads {
 public:
  explicit FileCopyReads(std::string files_dir) : files_dir_(std::move(files_dir)) {}

  /// For an event with kSyscallReadsFileCopy: overwrites its writes' bytes
  /// (already sized) with the copy's bytes from event->file_offset on.
  /// Other events are left alone. Errors: corruption (no such copy, a
  /// damaged copy, a range past its end), io_error.
  Status fill(Event* event);

 private:
  Result<int> open_copy(const std::string& content_id);

  std::string files_dir_;
  std::map<std::string, ScopedFd> copies_;  // by content id, checked
};

}  // namespace repro::format
