#pragma once
// The records of a kSyscallBatch event, decoded: what the preloaded
// library (core/fastpath/fastpath_abi.h) logged of each syscall it made
// without a stop. Used by replay, which answers them, and by dump.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/format/event.h"

namespace repro::fastpath {

/// One syscall of a batch, as the recording saw it.
struct BatchedSyscall {
  int32_t syscall_number = 0;
  std::array<uint64_t, 6> args{};
  int64_t result = 0;
  uint64_t output_address = 0;  // where the kernel wrote `output`
  std::string output;           // the bytes it wrote (empty: none)
  // The strings it was given (a path, an attribute name), in argument order.
  std::vector<format::SyscallInput> inputs;
  size_t record_offset = 0;     // where its record starts in the batch's data
  size_t record_bytes = 0;      // and how long it is
};

/// Decodes a batch event's data. Returns the syscalls in the order they
/// were made, or kCorruption naming the first record that does not fit.
Result<std::vector<BatchedSyscall>> parse_syscall_batch(std::string_view data);

/// Sets `event` (cleared first) to `syscall` as the syscall event of thread
/// `thread` it stands for, its output as the one memory write: what dump
/// prints and replay answers.
void to_syscall_event(const BatchedSyscall& syscall, uint32_t thread, format::Event* event);

}  // namespace repro::fastpath
