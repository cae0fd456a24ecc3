#include "replayer/pipe_streams.h"

#include <fmt/format.h>
#include <sys/syscall.h>

#include "core/os/tracee.h"
#include "core/format/trace_format.h"

namespace repro::replayer {

Status PipeStreams::feed(pid_t tid, const format::Event& event) {
  if (!(event.syscall_flags & format::kSyscallFeedsPipe) || event.result <= 0) {
    return Status::ok();
  }
  uint64_t length = static_cast<uint64_t>(event.result);
  written_.clear();
  if (event.syscall_number == SYS_writev) {
    REPRO_RETURN_IF_ERROR(os::read_gathered(tid, event.args[1], event.args[2], length, &written_));
  } else {
    written_.resize(length);
    REPRO_RETURN_IF_ERROR(os::read_memory(tid, event.args[1], written_.data(), length));
  }
  Stream& stream = streams_[event.pipe_id];
  stream.bytes.append(written_);
  // Past the recorder's window, nothing can refer to it.
  if (stream.bytes.size() > 2 * format::kMaxQueuedPipeBytes) {
    uint64_t dropped = stream.bytes.size() - format::kMaxQueuedPipeBytes;
    stream.bytes.erase(0, dropped);
    stream.front += dropped;
  }
  return Status::ok();
}

Status PipeStreams::fill_read(pid_t tid, const format::Event& event) {
  auto found = streams_.find(event.pipe_id);
  uint64_t position = event.file_offset;
  uint64_t length = 0;
  for (const format::MemoryWrite& write : event.writes) {
    length += write.bytes.size();
  }
  if (found == streams_.end() || position < found->second.front ||
      position - found->second.front + length > found->second.bytes.size()) {
    return Status::error(
        StatusCode::kCorruption,
        fmt::format("a read refers to bytes {}..{} of pipe {}, which no recorded write fed it",
                    position, position + length, event.pipe_id));
  }
  Stream& stream = found->second;
  size_t at = position - stream.front;
  for (const format::MemoryWrite& write : event.writes) {
    REPRO_RETURN_IF_ERROR(
        os::write_memory(tid, write.address, stream.bytes.data() + at, write.bytes.size()));
    at += write.bytes.size();
  }
  // Reads consume the stream in order: what came before is done with.
  if (at > stream.bytes.size() / 2) {
    stream.bytes.erase(0, at);
    stream.front += at;
  }
  return Status::ok();
}

}  // namespace repro::replayer
