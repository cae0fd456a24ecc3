#include "cli/event_json.h"

#include <fmt/core.h>

#include <csignal>
#include <cstring>

#include "analysis/failure_report.h"
#include "core/format/failure_stacks.h"
#include "cli/event_printer.h"
#include "core/fastpath/syscall_batch.h"
#include "core/syscalls/syscall_table.h"

namespace repro::cli {
namespace {

using Json = nlohmann::ordered_json;

// What of a write's bytes a JSON line shows: enough to recognise them.
constexpr size_t kPreviewBytes = 32;

std::string hex(const std::string& bytes, size_t limit) {
  std::string text;
  for (size_t i = 0; i < bytes.size() && i < limit; ++i) {
    text += fmt::format("{:02x}", static_cast<unsigned char>(bytes[i]));
  }
  return text;
}

Json writes_json(const std::vector<format::MemoryWrite>& writes) {
  Json list = Json::array();
  for (const format::MemoryWrite& write : writes) {
    list.push_back({{"address", write.address},
                    {"bytes", write.bytes.size()},
                    {"first_bytes_hex", hex(write.bytes, kPreviewBytes)}});
  }
  return list;
}

// Each input as its argument index, its bytes as text (a path, mostly;
// bytes that are not UTF-8 are replaced when the line is written) and in
// hex, which keeps them exactly.
Json inputs_json(const std::vector<format::SyscallInput>& inputs) {
  Json list = Json::array();
  for (const format::SyscallInput& input : inputs) {
    list.push_back({{"arg", input.arg_index},
                    {"bytes", input.bytes.size()},
                    {"text", input.bytes},
                    {"hex", hex(input.bytes, input.bytes.size())}});
  }
  return list;
}

Json syscall_flags_json(uint32_t flags) {
  Json names = Json::array();
  const std::pair<uint32_t, const char*> known[] = {
      {format::kSyscallEffectsUnknown, "effects-unknown"},
      {format::kSyscallExecuted, "executed"},
      {format::kSyscallDenied, "answered-by-repro"},
      {format::kSyscallOutputStdout, "stdout"},
      {format::kSyscallOutputStderr, "stderr"},
      {format::kSyscallWritesMappedFile, "writes-mapped-file"},
      {format::kSyscallReadsFileCopy, "reads-file-copy"},
      {format::kSyscallFeedsPipe, "feeds-pipe"},
      {format::kSyscallReadsPipe, "reads-pipe"},
      {format::kSyscallFastPath, "fast-path"}};
  for (const auto& [bit, name] : known) {
    if (flags & bit) {
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace

Json event_json(uint64_t index, const format::Event& e) {
  Json j = {{"index", index},
            {"thread", e.thread},
            {"kind", format::event_kind_name(e.kind)},
            {"text", describe_event(index, e)}};
  switch (e.kind) {
    case format::EventKind::kSyscall:
    case format::EventKind::kSyscallEntered:
      j["syscall"] = syscalls::syscall_name(e.syscall_number);
      j["number"] = e.syscall_number;
      j["args"] = e.args;
      if (e.kind == format::EventKind::kSyscall) {
        j["result"] = e.result;
        j["flags"] = syscall_flags_json(e.syscall_flags);
        if (e.syscall_flags & format::kSyscallReadsFileCopy) {
          j["file_copy"] = {{"content_id", e.content_id}, {"offset", e.file_offset}};
        }
        if (e.syscall_flags & (format::kSyscallFeedsPipe | format::kSyscallReadsPipe)) {
          j["pipe"] = {{"id", e.pipe_id}};
        }
        if (e.syscall_flags & format::kSyscallReadsPipe) {
          j["pipe"]["position"] = e.file_offset;
        }
        j["inputs"] = inputs_json(e.inputs);
      }
      j["writes"] = writes_json(e.writes);
      break;
    case format::EventKind::kSignal: {
      const char* name = sigabbrev_np(e.signal_number);
      j["signal"] = name != nullptr ? fmt::format("SIG{}", name) : std::to_string(e.signal_number);
      j["number"] = e.signal_number;
      j["synchronous"] = (e.signal_flags & format::kSignalSynchronous) != 0;
      break;
    }
    case format::EventKind::kPreempt: {
      uint64_t rip = 0;
      if (e.registers.size() >= 17 * 8) {  // user_regs_struct: rip is the 17th field
        std::memcpy(&rip, e.registers.data() + 16 * 8, 8);
      }
      j["rip"] = rip;
      j["memory_hash"] = e.memory_hash;
      j["pages"] = e.page_hashes.size();
      j["page_copies"] = e.writes.size();
      break;
    }
    case format::EventKind::kRdtsc:
      j["address"] = e.address;
      j["tsc"] = e.tsc;
      j["tsc_aux"] = e.tsc_aux;
      break;
    case format::EventKind::kThreadStart:
      j["parent_thread"] = e.parent_thread;
      j["recorded_tid"] = e.recorded_tid;
      j["clone_flags"] = e.clone_flags;
      break;
    case format::EventKind::kExec:
      j["path"] = e.path;
      j["content_id"] = e.content_id;
      break;
    case format::EventKind::kThreadExit:
      j["wait_status"] = e.exit_status;
      break;
    case format::EventKind::kMappedFile:
      j["path"] = e.path;
      j["content_id"] = e.content_id;
      j["address"] = e.result;
      break;
    case format::EventKind::kRdtscPatch:
      j["path"] = e.path;
      j["sites"] = writes_json(e.writes);
      break;
    case format::EventKind::kSyscallPatch:
      j["path"] = e.path;
      j["site"] = e.address;
      j["writes"] = writes_json(e.writes);
      break;
    case format::EventKind::kSyscallBatch: {
      j["bytes"] = e.data.size();
      auto syscalls = fastpath::parse_syscall_batch(e.data);
      if (!syscalls.is_ok()) {
        j["error"] = syscalls.status().message();
        break;
      }
      Json list = Json::array();
      for (const fastpath::BatchedSyscall& syscall : *syscalls) {
        Json entry = {{"syscall", syscalls::syscall_name(syscall.syscall_number)},
                      {"number", syscall.syscall_number},
                      {"args", syscall.args},
                      {"result", syscall.result},
                      {"output_address", syscall.output_address},
                      {"output_bytes", syscall.output.size()}};
        if (!syscall.inputs.empty()) {
          entry["inputs"] = inputs_json(syscall.inputs);
        }
        list.push_back(std::move(entry));
      }
      j["syscalls"] = std::move(list);
      break;
    }
    case format::EventKind::kDeadlock:
      j["report"] = e.data;
      break;
    case format::EventKind::kFailureStacks: {
      Result<format::FailureStacks> stacks = format::decode_failure_stacks(e.data);
      if (stacks.is_ok()) {
        j["failure"] = analysis::failure_stacks_json(*stacks);
      } else {
        j["error"] = stacks.status().message();
      }
      break;
    }
  }
  return j;
}

std::string json_line(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json header_json(const format::TraceHeader& h, bool complete) {
  return {{"kind", "header"},
          {"format_version", h.format_version},
          {"complete", complete},
          {"arch", h.arch},
          {"kernel", h.kernel_release},
          {"repro_version", h.repro_version},
          {"exe", h.exe_path},
          {"argv", h.argv},
          {"cwd", h.cwd},
          {"seed", h.seed},
          {"scheduler", h.scheduler.policy},
          {"tsc_mode", format::tsc_mode_name(h.tsc_mode)}};
}

}  // namespace repro::cli
