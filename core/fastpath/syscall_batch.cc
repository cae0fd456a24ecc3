#include "core/fastpath/syscall_batch.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "core/fastpath/fastpath_abi.h"

namespace repro::fastpath {

static_assert(sizeof(repro_fastpath_record) == REPRO_FASTPATH_RECORD_HEADER_BYTES);
static_assert(sizeof(repro_fastpath_header) == 16);

Result<std::vector<BatchedSyscall>> parse_syscall_batch(std::string_view data) {
  std::vector<BatchedSyscall> syscalls;
  size_t offset = 0;
  while (offset < data.size()) {
    repro_fastpath_record record;
    if (data.size() - offset < sizeof record) {
      return Status::error(StatusCode::kCorruption,
                           fmt::format("syscall batch: record {} at byte {} is cut short",
                                       syscalls.size(), offset));
    }
    std::memcpy(&record, data.data() + offset, sizeof record);
    if (record.record_bytes < sizeof record + record.output_bytes + record.input_bytes ||
        record.input_arg >= 6 || record.second_input_arg >= 6 || record.record_bytes % 8 != 0 ||
        record.record_bytes > data.size() - offset) {
      return Status::error(StatusCode::kCorruption,
                           fmt::format("syscall batch: record {} at byte {} has a bad length {}",
                                       syscalls.size(), offset, record.record_bytes));
    }
    BatchedSyscall& syscall = syscalls.emplace_back();
    syscall.syscall_number = record.syscall_number;
    std::memcpy(syscall.args.data(), record.args, sizeof record.args);
    syscall.result = record.result;
    syscall.output_address = record.output_address;
    syscall.output.assign(data.data() + offset + sizeof record, record.output_bytes);
    std::string_view input(data.data() + offset + sizeof record + record.output_bytes,
                           record.input_bytes);
    if (record.second_input_arg != 0) {
      size_t end = std::min(input.find('\0'), input.size());
      if (end != 0) {
        syscall.inputs.push_back({record.input_arg, std::string(input.substr(0, end))});
      }
      if (end + 1 < input.size()) {
        syscall.inputs.push_back({record.second_input_arg, std::string(input.substr(end + 1))});
      }
    } else if (!input.empty()) {
      syscall.inputs.push_back({record.input_arg, std::string(input)});
    }
    syscall.record_offset = offset;
    syscall.record_bytes = record.record_bytes;
    offset += record.record_bytes;
  }
  return syscalls;
}

void to_syscall_event(const BatchedSyscall& syscall, uint32_t thread, format::Event* event) {
  event->clear();
  event->kind = format::EventKind::kSyscall;
  event->thread = thread;
  event->syscall_number = syscall.syscall_number;
  event->args = syscall.args;
  event->result = syscall.result;
  event->syscall_flags = format::kSyscallFastPath;
  if (!syscall.output.empty()) {
    event->writes.push_back({syscall.output_address, syscall.output});
  }
  event->inputs = syscall.inputs;
}

}  // namespace repro::fastpath
