#include "tracer/pipe_data_references.h"

#include <string_view>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/syscall.h>


#include "core/format/trace_format.h"
#include "core/os/tracee.h"

namespace repro::tracer {

namespace {

// How far into the queue a read may start (see match_read): one blocked
// write's worth at most, a pipe's default capacity and more.
constexpr size_t kMaxSkippedPipeBytes = 1 << 20;

// The pipe (or FIFO) descriptor `fd` of process `pid` refers to, by inode
// number, or 0 if it is not one.
uint64_t pipe_id(pid_t pid, int fd) {
  struct stat st;
  std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  if (::stat(path.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode)) {
    return 0;
  }
  return st.st_ino;
}

}  // namespace

Status PipeDataReferences::note(pid_t tid, pid_t pid, format::Event* event) {
  int number = event->syscall_number;
  bool writes = number == SYS_write || number == SYS_writev;
  bool reads = number == SYS_read || number == SYS_readv;
  if ((!writes && !reads) || event->result <= 0 ||
      (event->syscall_flags & ~(format::kSyscallOutputStdout | format::kSyscallOutputStderr))) {
    return Status::ok();
  }
  uint64_t id = pipe_id(pid, static_cast<int>(event->args[0]));
  if (id == 0) {
    return Status::ok();
  }
  if (writes) {
    return feed(tid, id, event);
  }
  match_read(id, event);
  return Status::ok();
}

Status PipeDataReferences::feed(pid_t tid, uint64_t id, format::Event* event) {
  // What the write wrote, from the buffers it wrote from.
  uint64_t left = static_cast<uint64_t>(event->result);
  written_.clear();
  if (event->syscall_number == SYS_write) {
    written_.resize(left);
    REPRO_RETURN_IF_ERROR(os::read_memory(tid, event->args[1], written_.data(), left));
  } else {
    REPRO_RETURN_IF_ERROR(os::read_gathered(tid, event->args[1], event->args[2], left, &written_));
  }
  event->syscall_flags |= format::kSyscallFeedsPipe;
  event->pipe_id = id;
  Queue& queue = queues_[id];
  queue.bytes.append(written_);
  queue.end += written_.size();
  // Keep the last format::kMaxQueuedPipeBytes; drop consumed bytes once they are
  // half the buffer, so each byte is moved at most once more.
  size_t kept = queue.bytes.size() - queue.start;
  if (kept > format::kMaxQueuedPipeBytes) {
    queue.start += kept - format::kMaxQueuedPipeBytes;
    queue.front += kept - format::kMaxQueuedPipeBytes;
  }
  if (queue.start > queue.bytes.size() / 2) {
    queue.bytes.erase(0, queue.start);
    queue.start = 0;
  }
  return Status::ok();
}

void PipeDataReferences::match_read(uint64_t id, format::Event* event) {
  auto found = queues_.find(id);
  if (found == queues_.end()) {
    return;
  }
  Queue& queue = found->second;
  uint64_t length = static_cast<uint64_t>(event->result);
  std::string read;
  for (const format::MemoryWrite& write : event->writes) {
    read += write.bytes;
  }
  // Usually the read starts at the queue's front. It may start further on,
  // inside the oldest queued write: that write blocked on a full pipe after
  // its first bytes went in, a read took those before the write was logged
  // (and kept them, matching nothing), and the write was queued whole when
  // it finished. Those first bytes are skipped, never referenced.
  std::string_view queued(queue.bytes);
  queued.remove_prefix(queue.start);
  size_t skip = read.size() == length && length > 0
                    ? queued.substr(0, kMaxSkippedPipeBytes + length).find(read)
                    : std::string_view::npos;
  if (skip == std::string_view::npos) {
    queue.bytes.clear();  // out of step with the pipe: start afresh
    queue.start = 0;
    queue.front = queue.end;
    return;
  }
  queue.front += skip;
  event->syscall_flags |= format::kSyscallReadsPipe;
  event->pipe_id = id;
  event->file_offset = queue.front;
  queue.start += skip + length;
  queue.front += length;
  referenced_bytes_ += length;
}

}  // namespace repro::tracer
