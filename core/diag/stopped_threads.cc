#include "core/diag/stopped_threads.h"

#include <algorithm>
#include <array>

#include "core/os/tracee.h"

namespace repro::diag {
namespace {

pid_t next_thread(Dwfl* /*dwfl*/, void* dwfl_arg, void** thread_argp) {
  auto* threads = static_cast<StoppedThreads*>(dwfl_arg);
  if (*thread_argp == nullptr) {
    threads->next_index = 0;  // a new iteration
  }
  *thread_argp = threads;
  if (threads->next_index >= threads->tids.size()) {
    return 0;
  }
  return threads->tids[threads->next_index++];
}

bool get_thread(Dwfl* /*dwfl*/, pid_t tid, void* dwfl_arg, void** thread_argp) {
  auto* threads = static_cast<StoppedThreads*>(dwfl_arg);
  *thread_argp = threads;
  return std::find(threads->tids.begin(), threads->tids.end(), tid) != threads->tids.end();
}

bool memory_read(Dwfl* /*dwfl*/, Dwarf_Addr address, Dwarf_Word* result, void* dwfl_arg) {
  auto* threads = static_cast<StoppedThreads*>(dwfl_arg);
  return os::read_memory(threads->pid, address, result, sizeof *result).is_ok();
}

bool set_initial_registers(Dwfl_Thread* thread, void* thread_arg) {
  auto* threads = static_cast<StoppedThreads*>(thread_arg);
  pid_t tid = dwfl_thread_tid(thread);
  Result<os::Registers> regs = os::get_registers(tid);
  if (!regs.is_ok()) {
    return false;
  }
  uint64_t pc = regs->rip;
  uint64_t sp = regs->rsp;
  if (threads->from_return_address.contains(tid)) {
    Dwarf_Word return_address = 0;
    if (!os::read_memory(threads->pid, sp, &return_address, sizeof return_address).is_ok() ||
        dwfl_addrmodule(dwfl_thread_dwfl(thread), return_address) == nullptr) {
      return false;  // no code address on top of the stack: not a leaf
    }
    pc = return_address;
    sp += sizeof return_address;
  }
  // The x86-64 DWARF register numbers 0-16.
  std::array<Dwarf_Word, 17> dwarf = {regs->rax, regs->rdx, regs->rcx, regs->rbx, regs->rsi,
                                      regs->rdi, regs->rbp, sp,        regs->r8,  regs->r9,
                                      regs->r10, regs->r11, regs->r12, regs->r13, regs->r14,
                                      regs->r15, pc};
  if (!dwfl_thread_state_registers(thread, 0, dwarf.size(), dwarf.data())) {
    return false;
  }
  dwfl_thread_state_register_pc(thread, pc);
  return true;
}

const Dwfl_Thread_Callbacks kCallbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
    .detach = nullptr,
    .thread_detach = nullptr,
};

}  // namespace

bool attach_stopped_threads(Dwfl* dwfl, StoppedThreads* threads) {
  // A null Elf: libdw takes the architecture from the first module.
  return dwfl_attach_state(dwfl, nullptr, threads->pid, &kCallbacks, threads);
}

}  // namespace repro::diag
