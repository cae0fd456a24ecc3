#include "cli/event_printer.h"

#include <fmt/core.h>

#include <csignal>
#include <cstring>

#include "analysis/failure_report.h"
#include "analysis/syscall_decoder.h"
#include "core/fastpath/syscall_batch.h"
#include "core/format/failure_stacks.h"
#include "core/syscalls/syscall_table.h"

namespace repro::cli {
namespace {

std::string describe_writes(const format::Event& event) {
  if (event.writes.empty()) {
    return "";
  }
  size_t bytes = 0;
  for (const auto& w : event.writes) {
    bytes += w.bytes.size();
  }
  return fmt::format(" [writes {}: {} bytes]", event.writes.size(), bytes);
}

// The batch's head line, then one line per syscall the library made
// without a stop: "#57.0 t0 syscall getppid() = 4242 [fast path]".
std::string describe_batch(const std::string& head, uint64_t index, const format::Event& e) {
  auto syscalls = fastpath::parse_syscall_batch(e.data);
  if (!syscalls.is_ok()) {
    return fmt::format("{} {} bytes ({})", head, e.data.size(), syscalls.status().message());
  }
  std::string text = fmt::format("{} {} syscalls ({} bytes)", head, syscalls->size(), e.data.size());
  format::Event one;
  for (size_t i = 0; i < syscalls->size(); ++i) {
    const fastpath::BatchedSyscall& syscall = (*syscalls)[i];
    fastpath::to_syscall_event(syscall, e.thread, &one);
    text += fmt::format("\n#{}.{} t{} syscall {} = {}{} [fast path]", index, i, e.thread,
                        analysis::call_text(one), analysis::result_text(one), describe_writes(one));
  }
  return text;
}

std::string describe_flags(uint32_t flags) {
  std::string text;
  if (flags & format::kSyscallEffectsUnknown) {
    text += " [effects unknown]";
  }
  if (flags & format::kSyscallDenied) {
    text += " [answered by repro]";
  }
  if (flags & format::kSyscallFastPath) {
    text += " [fast path]";
  }
  return text;
}

// Where a read's bytes are stored when they are not in the event.
std::string describe_file_copy(const format::Event& event) {
  if (event.syscall_flags & format::kSyscallReadsFileCopy) {
    return fmt::format(" [from files/{} at {}]", event.content_id, event.file_offset);
  }
  if (event.syscall_flags & format::kSyscallReadsPipe) {
    return fmt::format(" [from pipe {} at {}]", event.pipe_id, event.file_offset);
  }
  if (event.syscall_flags & format::kSyscallFeedsPipe) {
    return fmt::format(" [feeds pipe {}]", event.pipe_id);
  }
  return "";
}

}  // namespace

std::string describe_event(uint64_t index, const format::Event& e) {
  std::string head = fmt::format("#{} t{} {}", index, e.thread, format::event_kind_name(e.kind));
  switch (e.kind) {
    case format::EventKind::kSyscall:
      return fmt::format("{} {} = {}{}{}{}", head, analysis::call_text(e),
                         analysis::result_text(e), describe_writes(e),
                         describe_flags(e.syscall_flags), describe_file_copy(e));
    case format::EventKind::kSyscallEntered:
      return fmt::format("{} {} <unfinished ...>{}", head, analysis::call_text(e),
                         describe_writes(e));
    case format::EventKind::kSignal:
      return fmt::format("{} --- {}{} ---", head, analysis::signal_text(e),
                         (e.signal_flags & format::kSignalSynchronous) ? " synchronous" : "");
    case format::EventKind::kPreempt: {
      uint64_t rip = 0;
      // user_regs_struct: rip is the 17th 8-byte field.
      if (e.registers.size() >= 17 * 8) {
        std::memcpy(&rip, e.registers.data() + 16 * 8, 8);
      }
      std::string snapshots;
      if (!e.writes.empty()) {
        snapshots = fmt::format(", {} page copies", e.writes.size());
      }
      return fmt::format("{} at rip {:#x} memory {:#018x} ({} pages{})", head, rip, e.memory_hash,
                         e.page_hashes.size(), snapshots);
    }
    case format::EventKind::kRdtsc:
      return fmt::format("{} at {:#x} tsc {} aux {}", head, e.address, e.tsc, e.tsc_aux);
    case format::EventKind::kRdtscPatch: {
      std::string sites;
      for (const format::MemoryWrite& site : e.writes) {
        sites += fmt::format(" {:#x}{}", site.address, site.bytes.size() == 3 ? "p" : "");
      }
      return fmt::format("{} {} site{} in {}:{}", head, e.writes.size(),
                         e.writes.size() == 1 ? "" : "s", e.path, sites);
    }
    case format::EventKind::kSyscallPatch:
      return fmt::format("{} site {:#x} in {} now jumps to a stub at {:#x}", head, e.address,
                         e.path, e.writes.empty() ? 0 : e.writes.front().address);
    case format::EventKind::kThreadStart:
      return fmt::format("{} parent t{} tid {} flags {:#x}", head, e.parent_thread, e.recorded_tid,
                         e.clone_flags);
    case format::EventKind::kExec:
      return fmt::format("{} {} (file {})", head, e.path, e.content_id);
    case format::EventKind::kThreadExit:
      return fmt::format("{} status {:#x}", head, e.exit_status);
    case format::EventKind::kMappedFile:
      return fmt::format("{} {} at {:#x} (file {})", head, e.path, static_cast<uint64_t>(e.result),
                         e.content_id);
    case format::EventKind::kSyscallBatch:
      return describe_batch(head, index, e);
    case format::EventKind::kDeadlock: {
      std::string report = prefix_lines("    ", e.data);
      report.pop_back();  // its last newline: the caller ends the line
      return fmt::format("{}\n{}", head, report);
    }
    case format::EventKind::kFailureStacks: {
      Result<format::FailureStacks> stacks = format::decode_failure_stacks(e.data);
      if (!stacks.is_ok()) {
        return fmt::format("{} ({})", head, stacks.status().message());
      }
      std::string report = analysis::describe_failure_stacks(*stacks, "    ");
      report.pop_back();  // its last newline: the caller ends the line
      return fmt::format("{}\n{}", head, report);
    }
  }
  return head;
}

std::string prefix_lines(const std::string& prefix, const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = std::min(text.find('\n', start), text.size());
    out += prefix + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace repro::cli
