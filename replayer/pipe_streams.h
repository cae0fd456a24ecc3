#pragma once
// PipeStreams: the replay side of tracer/pipe_data_references.h. Data one
// recorded process wrote into a pipe and another read is stored once: the
// trace flags the writes (kSyscallFeedsPipe) and stores only the lengths
// of the reads (kSyscallReadsPipe, with their position in the pipe's
// stream). Replay does not run the writes, but the writer's memory holds
// the same bytes at its write as it did when recorded: PipeStreams appends
// them to the pipe's stream, and fills the reads from it.
//
// Keeps the last kMaxQueuedPipeBytes of each stream and the bytes after
// the last read, which covers every read the recorder referenced.
//
// Not thread-safe; owned by the ReplaySession.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/base/status.h"
#include "core/format/event.h"

namespace repro::replayer {

class PipeStreams {
 public:
  /// For an event flagged kSyscallFeedsPipe, at its syscall in thread
  /// `tid`: appends the bytes it writes to its pipe's stream. Other events:
  /// nothing. Errors: tracee_died.
  Status feed(pid_t tid, const format::Event& event);

  /// For an event flagged kSyscallReadsPipe: writes the stream's bytes at
  /// its position into thread `tid`'s memory at its writes' addresses.
  /// Errors: corruption (the stream does not hold them: a damaged trace),
  /// tracee_died.
  Status fill_read(pid_t tid, const format::Event& event);

 private:
  struct Stream {
    uint64_t front = 0;  // stream position of bytes[0]
    std::string bytes;
  };
  std::unordered_map<uint64_t, Stream> streams_;  // by pipe id
  std::string written_;                           // reused buffer
};

}  // namespace repro::replayer
