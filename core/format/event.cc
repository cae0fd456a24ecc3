#include "core/format/event.h"

namespace repro::format {

void Event::clear() {
  kind = EventKind::kSyscall;
  thread = 0;
  syscall_number = 0;
  args = {};
  result = 0;
  syscall_flags = 0;
  writes.clear();
  inputs.clear();
  signal_number = 0;
  signal_flags = 0;
  signal_info.clear();
  registers.clear();
  extended_registers_hash = 0;
  memory_hash = 0;
  page_hashes.clear();
  tsc = 0;
  tsc_aux = 0;
  address = 0;
  parent_thread = 0;
  recorded_tid = 0;
  clone_flags = 0;
  path.clear();
  content_id.clear();
  file_offset = 0;
  pipe_id = 0;
  random_bytes.clear();
  exit_status = 0;
  data.clear();
}

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::kSyscall:
      return "syscall";
    case EventKind::kSyscallEntered:
      return "syscall-entered";
    case EventKind::kSignal:
      return "signal";
    case EventKind::kPreempt:
      return "preempt";
    case EventKind::kRdtsc:
      return "rdtsc";
    case EventKind::kThreadStart:
      return "thread-start";
    case EventKind::kExec:
      return "exec";
    case EventKind::kThreadExit:
      return "thread-exit";
    case EventKind::kMappedFile:
      return "mapped-file";
    case EventKind::kSyscallBatch:
      return "syscall-batch";
    case EventKind::kRdtscPatch:
      return "rdtsc-patch";
    case EventKind::kDeadlock:
      return "deadlock";
    case EventKind::kFailureStacks:
      return "failure-stacks";
    case EventKind::kSyscallPatch:
      return "syscall-patch";
  }
  return "unknown";
}

std::vector<std::string> split_exec_argv(const std::string& data) {
  std::vector<std::string> argv;
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\0', start);
    if (end == std::string::npos) {
      end = data.size();
    }
    argv.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

}  // namespace repro::format
