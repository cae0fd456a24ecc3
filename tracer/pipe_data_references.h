#pragma once
// PipeDataReferences: stores data one recorded process passes to another
// through a pipe once, not twice.
//
// Why: replay does not run writes, but the writer's memory at its write
// holds the same bytes as when it was recorded. So a write into a pipe is
// flagged kSyscallFeedsPipe (nothing stored), and a read that returned
// exactly the bytes such writes fed the pipe is flagged kSyscallReadsPipe
// with its position in the pipe's stream (only lengths stored). Replay
// appends what each flagged write writes to the pipe's stream and fills the
// reads from it (replayer/pipe_streams.h).
//
// Correct whatever happens to the pipe: the recorder keeps the bytes each
// flagged write fed (the last kMaxQueuedPipeBytes of each pipe) and only a
// read whose bytes match the queue becomes a reference: at its front, or
// further in when a write that blocked on a full pipe had its first bytes
// taken by an earlier read before it was logged (those are skipped). A read
// of bytes from elsewhere (a writer outside the recording, a splice, a
// write that blocked and finished after its first bytes were read) keeps
// its bytes and empties the queue, so the next write starts afresh.
//
// Not thread-safe; owned by the RecordSession.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/base/status.h"
#include "core/format/event.h"

namespace repro::tracer {

class PipeDataReferences {
 public:
  /// For a completed write, writev, read or readv in `event` (writes
  /// captured) by thread `tid` of process `pid`, on a pipe or FIFO: flags
  /// it as described above. Leaves every other event alone. Errors:
  /// tracee_died (its memory went away).
  Status note(pid_t tid, pid_t pid, format::Event* event);

  /// Bytes of reads turned into references so far.
  uint64_t referenced_bytes() const { return referenced_bytes_; }

 private:
  // The bytes the stream's recent flagged writes fed, from position
  // `front` on; bytes before `start` of `bytes` are consumed.
  struct Queue {
    uint64_t front = 0;
    uint64_t end = 0;  // the stream position after the last byte fed
    std::string bytes;
    size_t start = 0;
  };

  Status feed(pid_t tid, uint64_t pipe_id, format::Event* event);
  void match_read(uint64_t pipe_id, format::Event* event);

  std::unordered_map<uint64_t, Queue> queues_;  // by pipe id
  std::string written_;                         // reused buffer
  uint64_t referenced_bytes_ = 0;
};

}  // namespace repro::tracer
