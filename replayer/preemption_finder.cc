// Finding a recorded preemption point again without hardware counters.
//
// Between two events only one thread runs, so its state evolves
// deterministically from the last event. The recorder named the point by
// the registers, a hash of the FPU/SSE state and a hash of writable memory.
// Replay stops at the first visit of the recorded instruction whose state
// matches all three: an identical state has an identical future, so the
// first match is as good as the recorded one.
//
// A visit is found with a breakpoint (int3) at the instruction: one ptrace
// stop per visit. When the instruction can be moved (the recorder prefers
// such points, see core/patch/instruction.h), the breakpoint becomes a
// trampoline that compares the general registers inside the program and
// stops only when they all match, so a point deep in a hot loop costs no
// more than a few instructions per turn of the loop.

#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>

#include "core/format/content_id.h"
#include "core/os/memory_hash.h"
#include "core/os/proc_maps.h"
#include "core/patch/conditional_trap.h"
#include "core/patch/instruction.h"
#include "core/syscalls/syscall_table.h"
#include "replayer/divergence.h"
#include "replayer/memory_difference.h"
#include "replayer/replay_session.h"
#ifdef REPRO_HAVE_DIAG
#include "core/diag/data_address.h"
#endif

namespace repro::replayer {
namespace {

constexpr uint64_t kPage = os::kPageBytes;
static_assert(patch::kTrampolinePageBytes <= kPage);

// A free page within reach of a rel32 jump from `target` (and of the
// rip-relative operands near it), or 0. Reads /proc/PID/maps.
uint64_t free_page_near(pid_t pid, uint64_t target) {
  auto maps = os::read_mappings(pid);
  if (!maps.is_ok()) {
    return 0;
  }
  // Stay well inside +-2 GiB: the moved instruction's operand may point a
  // little further than the instruction itself.
  constexpr uint64_t kReach = uint64_t{1} << 30;
  uint64_t best = 0;
  uint64_t best_distance = ~uint64_t{0};
  auto consider = [&](uint64_t page) {
    uint64_t distance = page > target ? page - target : target - page;
    if (page >= kPage && distance < kReach && distance < best_distance) {
      best = page;
      best_distance = distance;
    }
  };
  uint64_t previous_end = kPage * 16;  // keep clear of the zero page
  for (const os::Mapping& mapping : *maps) {
    if (mapping.start > previous_end) {  // a gap [previous_end, start)
      consider(mapping.start - kPage);   // its top page
      consider(previous_end);            // its bottom page
    }
    previous_end = std::max<uint64_t>(previous_end, mapping.end);
  }
  return best;
}

// The content id of the file at `path`, which replay executed: its name
// when that is one (the trace's files/), else the hash of its bytes (the
// private executable copy ExecPaths made, or a file that is not the
// trace's, whose id then names nothing); "" if it cannot be read.
std::string content_id_of_file(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  if (format::is_valid_content_id(name)) {
    return name;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return "";
  }
  format::ContentHasher hasher;
  char buffer[1 << 16];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    hasher.update(buffer, static_cast<size_t>(file.gcount()));
  }
  return hasher.content_id();
}

}  // namespace

Result<int64_t> ReplaySession::inject_syscall_at(ReplayThread& t, uint64_t scratch_code, int number,
                                                 const std::array<uint64_t, 6>& args) {
  HiddenFromWatcher hidden(this);  // replay's own code, not the program's
  // Requires: t is stopped outside any syscall. The three bytes at
  // `scratch_code` become "syscall; int3" for the call and are put back.
  REPRO_ASSIGN_OR_RETURN(os::Registers saved, os::get_registers(t.tid));
  REPRO_ASSIGN_OR_RETURN(bool sigtrap_blocked, os::sigtrap_blocked(t.tid));
  uint64_t original = 0;
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, scratch_code, &original, sizeof original));
  uint64_t code = (original & ~uint64_t{0xffffff}) | 0xcc050f;
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, scratch_code, &code, sizeof code));
  os::Registers regs = saved;
  regs.rip = scratch_code;
  regs.rax = static_cast<uint64_t>(number);
  os::set_syscall_args(regs, args);
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
  REPRO_RETURN_IF_ERROR(resume(t));
  int64_t result = 0;
  while (true) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
    int event_code = static_cast<int>(static_cast<unsigned>(status) >> 16);
    if (WIFSTOPPED(status) && event_code == PTRACE_EVENT_SECCOMP) {
      REPRO_RETURN_IF_ERROR(resume(t));  // our filter traces it: let it run
      continue;
    }
    if (!WIFSTOPPED(status) || event_code != 0 || WSTOPSIG(status) != SIGTRAP) {
      stashed_stops_[t.tid].push_front(status);
      return Status::error(StatusCode::kIoError,
                           fmt::format("injected {} in thread t{} did not come back",
                                       syscalls::syscall_name(number), t.index));
    }
    REPRO_ASSIGN_OR_RETURN(regs, os::get_registers(t.tid));
    result = static_cast<int64_t>(regs.rax);
    break;
  }
  t.where = ReplayThread::Where::kParked;
  if (sigtrap_blocked) {
    REPRO_RETURN_IF_ERROR(os::block_sigtrap(t.tid));  // the int3's trap unblocked it
  }
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, scratch_code, &original, sizeof original));
  REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, saved));
  return result;
}

std::vector<uint64_t> ReplaySession::stack_pointers(const ReplayThread& t, uint64_t rsp) {
  // As the recorder computed them (RecordSession::stack_pointers).
  std::vector<uint64_t> pointers;
  for (const auto& [index, other] : threads_) {
    if (other.pid != t.pid || other.where == ReplayThread::Where::kGone) {
      continue;
    }
    if (other.index == t.index) {
      pointers.push_back(rsp);
    } else if (other.where == ReplayThread::Where::kInSyscall ||
               other.where == ReplayThread::Where::kExiting ||
               other.where == ReplayThread::Where::kStarting) {
      pointers.push_back(other.entry_regs.rsp);
    } else if (auto regs = os::get_registers(other.tid); regs.is_ok()) {
      pointers.push_back(regs->rsp);
    }
  }
  return pointers;
}

Status ReplaySession::find_preemption_point(ReplayThread& t, const format::Event& event) {
  os::Registers recorded;
  if (event.registers.size() != sizeof recorded) {
    return Status::error(StatusCode::kCorruption,
                         fmt::format("event #{} has registers of {} bytes", event_index_,
                                     event.registers.size()));
  }
  std::memcpy(&recorded, event.registers.data(), sizeof recorded);

  uint64_t trampoline = 0;  // page mapped in the tracee, once in use
  // How the state differed where the search began and at the last checked
  // visit, for the report if none matches; for memory, where it differed.
  std::string start_difference;
  std::string last_difference;
  std::optional<MemoryFinding> start_memory;
  std::optional<MemoryFinding> last_memory;
  uint64_t checked_visits = 0;
  // The page that differed at the last visit whose registers matched, and
  // that finding. In a loop whose registers repeat (an interpreter's), the
  // next visits usually differ there too, and one page costs far less to
  // check than all writable memory. Only a page that holds no dead stack,
  // whose hash is then the one hash_writable_memory gives it.
  std::optional<uint64_t> quick_page;
  std::optional<MemoryFinding> quick_finding;
  std::optional<std::vector<os::Mapping>> mappings;  // the process's, read once
  auto may_check_alone = [&](uint64_t page, const std::vector<uint64_t>& stack_pointers) {
    if (!mappings) {
      auto read = os::read_mappings(t.pid);
      if (!read.is_ok()) {
        return false;
      }
      mappings = std::move(*read);
    }
    for (const os::Mapping& mapping : *mappings) {
      if (page >= mapping.start && page < mapping.end) {
        return std::none_of(stack_pointers.begin(), stack_pointers.end(), [&](uint64_t sp) {
          return sp >= mapping.start && sp <= mapping.end && page + os::kRedZoneBytes < sp;
        });
      }
    }
    return false;
  };
  // True if the page's hash is known to differ from the recorded one.
  auto page_still_differs = [&](uint64_t page) {
    auto recorded_page = std::lower_bound(
        event.page_hashes.begin(), event.page_hashes.end(), page,
        [](const format::PageHash& entry, uint64_t address) { return entry.address < address; });
    auto bytes = os::read_memory(t.tid, page, kPage);
    if (!bytes.is_ok()) {
      return false;  // the full check says what is the matter
    }
    // A page of zeros may be left out of the list.
    uint64_t want = recorded_page == event.page_hashes.end() || recorded_page->address != page
                        ? os::zero_page_hash()
                        : recorded_page->hash;
    return want != os::page_hash(bytes->data());
  };
  // Hashes all writable memory at a visit with registers `regs`: how it
  // differs ("" if it does not), with last_memory and, where that page can
  // be checked alone, quick_page set.
  auto memory_difference = [&](const os::Registers& regs) -> Result<std::string> {
    std::vector<uint64_t> pointers = stack_pointers(t, regs.rsp);
    REPRO_ASSIGN_OR_RETURN(os::WritableMemory memory,
                           os::hash_writable_memory(t.pid, pointers, trampoline));
    quick_page.reset();
    if (memory.hash == event.memory_hash) {
      return std::string();
    }
    // Found now, named only if replay diverges: most visits that differ
    // are followed by one that matches.
    if (event.page_hashes.empty()) {
      return fmt::format("writable memory (hash {:#x}; the trace has no page hashes)", memory.hash);
    }
    last_memory = find_memory_difference(t, event, memory);
    if (last_memory->difference.kind == MemoryDifference::Kind::kPage &&
        may_check_alone(last_memory->difference.start, pointers)) {
      quick_page = last_memory->difference.start;
      quick_finding = last_memory;
    }
    return std::string("writable memory");
  };
  // Visits told apart by the FPU/SSE registers only, which a trampoline
  // does not compare, may differ in memory too, which it can (a word, see
  // word_that_differs): memory is hashed at such visits until a page that
  // differs is found, or three times in vain.
  int vain_memory_probes = 0;
  // `regs` are the thread's registers as they would be at the target.
  auto matches = [&](const os::Registers& regs) -> Result<bool> {
    std::string difference;
    last_memory.reset();
    if (!os::same_user_state(regs, recorded)) {
      difference = "registers: " + os::describe_register_differences(regs, recorded);
    } else {
      REPRO_ASSIGN_OR_RETURN(uint64_t xstate_hash, os::hash_extended_registers(t.tid));
      if (xstate_hash != event.extended_registers_hash) {
        difference = "FPU/SSE registers";
        if (trampoline != 0 && vain_memory_probes < 3 &&
            !(quick_page && page_still_differs(*quick_page))) {
          REPRO_ASSIGN_OR_RETURN(std::string in_memory, memory_difference(regs));
          vain_memory_probes += quick_page ? 0 : 1;
          (void)in_memory;  // the FPU/SSE registers are what the report names
          last_memory.reset();
        }
      } else if (quick_page && page_still_differs(*quick_page)) {
        difference = "writable memory";
        last_memory = quick_finding;  // as found where that page last differed
      } else {
        REPRO_ASSIGN_OR_RETURN(difference, memory_difference(regs));
      }
    }
    last_difference = difference;
    return difference.empty();
  };
  auto described = [&](const std::string& difference, const std::optional<MemoryFinding>& memory) {
    return memory ? difference + describe_memory(t, *memory) : difference;
  };

  // A thread parked at a seccomp stop has not returned from its syscall yet;
  // the skip it will take leaves the registers as they are now, bar orig_rax.
  {
    REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
    REPRO_ASSIGN_OR_RETURN(bool already, matches(regs));
    if (already) {
      return Status::ok();
    }
    start_difference = std::exchange(last_difference, "");
    start_memory = std::exchange(last_memory, std::nullopt);
  }
  const uint64_t target = recorded.rip;
  // Each trap of ours (a step, int3) unblocks SIGTRAP: block it again after
  // each, as the recorder does (os::sigtrap_blocked).
  REPRO_ASSIGN_OR_RETURN(const bool sigtrap_blocked, os::sigtrap_blocked(t.tid));
  auto reblock_sigtrap = [&]() -> Status {
    return sigtrap_blocked ? os::block_sigtrap(t.tid) : Status::ok();
  };
  uint8_t code[patch::kRunCodeBytes] = {};
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, target, code, sizeof code));
  const std::string original(reinterpret_cast<const char*>(code), sizeof code);
  const std::vector<patch::Instruction> run = patch::displaceable_run(code, sizeof code, target);
  uint64_t run_length = 0;
  for (const patch::Instruction& instruction : run) {
    run_length += instruction.length;
  }
  // A run of one instruction can always be moved; a longer one only once a
  // turn of the loop was seen not to jump into it (step_through_loop).
  enum class RunState { kUnchecked, kUsable, kUnusable };
  RunState run_state = run.empty()        ? RunState::kUnusable
                       : run.size() == 1 ? RunState::kUsable
                                         : RunState::kUnchecked;
  auto put_back = [&] { return os::write_memory(t.tid, target, original.data(), original.size()); };
  // A rep movs/stos/lods: the point may lie inside it (see advance_in_string).
  const std::optional<patch::RepeatedString> string_op =
      patch::repeated_string_at(code, sizeof code);

  auto visit_note = [&]() -> std::string {
    if (checked_visits == 0) {
      return "; it never reached that rip; where it stood it differed in " +
             described(start_difference, start_memory);
    }
    return fmt::format("; at the last of {} visits whose state was checked it differed in {}",
                       checked_visits, described(last_difference, last_memory));
  };
  const std::string expected = fmt::format("a preemption at rip {:#x}", target);
  // Where the thread stands when it stopped elsewhere than at the point.
  auto stopped_otherwise = [&](int status) -> Status {
    stashed_stops_[t.tid].push_front(status);
    (void)put_back();
    int event_code = static_cast<int>(static_cast<unsigned>(status) >> 16);
    if (WIFSTOPPED(status) && event_code == PTRACE_EVENT_SECCOMP) {
      stashed_stops_[t.tid].pop_front();
      t.where = ReplayThread::Where::kParked;
      REPRO_ASSIGN_OR_RETURN(os::Registers r, os::get_registers(t.tid));
      return diverged(t, expected,
                      describe_syscall(static_cast<int>(r.orig_rax),
                                       {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9}) +
                          " before reaching it" + visit_note());
    }
    return diverged(t, expected, "the thread stopped otherwise before reaching it" + visit_note());
  };

  // Steps the thread, stopped at `target` with the original code in place,
  // through one turn of its loop, checking each visit of `target` on the
  // way. Sets `found` if a visit matched; otherwise decides run_state: usable
  // if the turn came back to `target` and no jump landed inside the run.
  // Gives up (unusable) at an instruction it must not step or after
  // kMaxSteps; the thread is then wherever stepping left it.
  auto step_through_loop = [&](bool* found) -> Status {
    constexpr int kMaxSteps = 4096;
    *found = false;
    run_state = RunState::kUnusable;
    uint64_t previous_end = 0;  // where sequential flow from the last step goes
    for (int steps = 0; steps < kMaxSteps; ++steps) {
      REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
      bool inside = regs.rip > target && regs.rip < target + run_length;
      if (steps > 0 && inside && regs.rip != previous_end) {
        return Status::ok();  // a jump into the run: it cannot be replaced
      }
      if (steps > 0 && regs.rip == target) {
        ++checked_visits;
        REPRO_ASSIGN_OR_RETURN(*found, matches(regs));
        auto read = [&](uint64_t address, uint8_t* out, size_t size) {
          return os::read_memory(t.tid, address, out, size).is_ok();
        };
        if (!*found && !patch::may_be_entered_inside(read, target, target + run_length)) {
          run_state = RunState::kUsable;
        }
        return Status::ok();
      }
      uint8_t next[16] = {};
      REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, regs.rip, next, sizeof next));
      patch::Instruction instruction = patch::decode_instruction(next, sizeof next, regs.rip);
      if (instruction.kind == patch::InstructionKind::kStop) {
        return Status::ok();
      }
      previous_end = regs.rip + instruction.length;
      REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SINGLESTEP));
      REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
      if (!os::is_sigtrap_stop(status)) {
        return stopped_otherwise(status);
      }
      t.where = ReplayThread::Where::kParked;
      REPRO_RETURN_IF_ERROR(reblock_sigtrap());
    }
    return Status::ok();
  };

  // Runs the string instruction at `target` to its end from `regs` (t
  // stopped there, the original code in place), with a breakpoint after
  // it: stepped, it would stop after every iteration. Returns the
  // registers there.
  auto run_string_to_end = [&](const os::Registers& regs) -> Result<os::Registers> {
    const uint64_t end = target + string_op->length;
    uint64_t saved = 0;
    REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, end, &saved, sizeof saved));
    uint64_t trap = os::with_breakpoint(saved);
    REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, end, &trap, sizeof trap));
    REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
    REPRO_RETURN_IF_ERROR(resume(t));
    while (true) {
      REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
      if (!WIFSTOPPED(status) || (static_cast<unsigned>(status) >> 16) != 0) {
        (void)os::write_memory(t.tid, end, &saved, sizeof saved);
        return stopped_otherwise(status);
      }
      t.where = ReplayThread::Where::kParked;
      REPRO_ASSIGN_OR_RETURN(os::Registers after, os::get_registers(t.tid));
      if (WSTOPSIG(status) == SIGTRAP && after.rip == end + 1) {
        REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, end, &saved, sizeof saved));
        after.rip = end;
        REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, after));
        return after;
      }
      REPRO_RETURN_IF_ERROR(resume(t));  // a signal not in the trace here
    }
  };
  // At a visit of a string instruction that did not match: the recorded
  // point may lie inside it, k iterations on, if the registers differ only
  // by the progress of k iterations (rcx down by k, rsi and rdi moved by k
  // elements; lods also loads rax). Runs exactly those k iterations (rcx
  // set to k, run to the end) and puts the remaining count back in rcx:
  // the state of the instruction stopped after k iterations. Sets `regs`
  // to it and returns whether it matches; otherwise the thread is back at
  // `regs` as given.
  auto advance_in_string = [&](os::Registers* regs) -> Result<bool> {
    if (regs->rcx <= recorded.rcx) {
      return false;
    }
    const uint64_t k = regs->rcx - recorded.rcx;
    const uint64_t distance = k * string_op->element_bytes;
    const bool down = regs->eflags & 0x400;  // DF
    os::Registers expected = *regs;
    expected.rcx = recorded.rcx;
    if (string_op->uses_rdi) {
      expected.rdi = down ? regs->rdi - distance : regs->rdi + distance;
    }
    if (string_op->uses_rsi) {
      expected.rsi = down ? regs->rsi - distance : regs->rsi + distance;
    }
    if (!string_op->uses_rdi) {
      expected.rax = recorded.rax;  // lods: checked once loaded
    }
    if (!os::same_user_state(expected, recorded)) {
      return false;
    }
    os::Registers counted = *regs;
    counted.rcx = k;
    REPRO_ASSIGN_OR_RETURN(os::Registers after, run_string_to_end(counted));
    after.rip = target;
    after.rcx = recorded.rcx;
    REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, after));
    *regs = after;
    ++checked_visits;
    return matches(after);
  };

  // First visit: a plain breakpoint.
  uint64_t trap_word;
  std::memcpy(&trap_word, code, sizeof trap_word);
  trap_word = os::with_breakpoint(trap_word);
  auto insert = [&] { return os::write_memory(t.tid, target, &trap_word, sizeof trap_word); };
  REPRO_RETURN_IF_ERROR(insert());
  REPRO_RETURN_IF_ERROR(resume(t));
  patch::TrampolineCode trap_code;
  trap_code.trap_rip = target + 1;
  // What the trampoline was built from, to build it again with a word of
  // memory to compare as well.
  patch::TrampolineRequest trampoline_request;
  const std::string run_bytes = original.substr(0, run_length);
  // Writes the trampoline again, comparing `word` too (or no word). The
  // old code stays if the new one cannot be built.
  auto rebuild_trampoline = [&](std::optional<patch::WatchedWord> word) -> Result<bool> {
    patch::TrampolineRequest request = trampoline_request;
    request.word = word;
    auto built = patch::conditional_trap_code(request);
    if (!built.is_ok()) {
      return false;
    }
    REPRO_RETURN_IF_ERROR(
        os::write_memory(t.tid, trampoline, built->bytes.data(), built->bytes.size()));
    trampoline_request = request;
    trap_code = std::move(*built);
    return true;
  };
  // After a visit whose registers matched and whose memory differed in a
  // page the trace holds a copy of: its first word that differs now. The
  // trampoline compares it too, so the next visits that differ there (a
  // helper called in a loop on the same buffer: the same registers each
  // time) cost no stop. Only a page without dead stack (quick_page), whose
  // bytes are the ones hashed. The word stays readable: only this thread
  // runs, and where a munmap or mprotect (which run without a stop) takes
  // its page away, the fault is caught below.
  auto word_that_differs = [&]() -> std::optional<patch::WatchedWord> {
    if (!quick_page || !quick_finding || !quick_finding->recorded_page ||
        quick_finding->difference.start != *quick_page) {
      return std::nullopt;
    }
    auto now = os::read_memory(t.tid, *quick_page, kPage);
    const std::string& recorded_page = *quick_finding->recorded_page;
    if (!now.is_ok() || recorded_page.size() != kPage) {
      return std::nullopt;
    }
    for (size_t offset = 0; offset + sizeof(uint64_t) <= kPage; offset += sizeof(uint64_t)) {
      uint64_t want = 0;
      uint64_t have = 0;
      std::memcpy(&want, recorded_page.data() + offset, sizeof want);
      std::memcpy(&have, now->data() + offset, sizeof have);
      if (want != have) {
        return patch::WatchedWord{*quick_page + offset, want};
      }
    }
    return std::nullopt;
  };
  auto found_here = [&](os::Registers regs) -> Status {
    REPRO_RETURN_IF_ERROR(put_back());
    regs.rip = target;
    REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
    if (trampoline != 0) {
      REPRO_ASSIGN_OR_RETURN(int64_t unmapped,
                             inject_syscall_at(t, target, SYS_munmap, {trampoline, kPage}));
      (void)unmapped;  // a page left behind is harmless: nothing hashes it
    }
    return Status::ok();
  };
  while (true) {
    REPRO_ASSIGN_OR_RETURN(int status, wait_stop(t));
    if (!WIFSTOPPED(status) || (static_cast<unsigned>(status) >> 16) != 0) {
      return stopped_otherwise(status);
    }
    if (WSTOPSIG(status) == SIGSEGV && trap_code.word_load != 0) {
      REPRO_ASSIGN_OR_RETURN(os::Registers live, os::get_registers(t.tid));
      if (live.rip == trap_code.word_load) {
        // The watched word's page is gone: not the point (it had the page).
        // Back out of the compares, with rax and rcx as the program had
        // them, to the moved instruction; watch no word from now on.
        if (trap_code.saved_rax != 0) {
          REPRO_RETURN_IF_ERROR(
              os::read_memory(t.tid, trap_code.saved_rax, &live.rax, sizeof live.rax));
        }
        if (trap_code.saved_rcx != 0) {
          REPRO_RETURN_IF_ERROR(
              os::read_memory(t.tid, trap_code.saved_rcx, &live.rcx, sizeof live.rcx));
        }
        REPRO_ASSIGN_OR_RETURN(bool rebuilt, rebuild_trampoline(std::nullopt));
        (void)rebuilt;  // if not, the old code runs on from the moved instruction too
        live.rip = trap_code.moved_addresses.front();
        REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, live));
        REPRO_RETURN_IF_ERROR(resume(t));
        continue;
      }
    }
    if (WSTOPSIG(status) != SIGTRAP) {
      REPRO_RETURN_IF_ERROR(resume(t));  // a signal not in the trace here
      continue;
    }
    REPRO_RETURN_IF_ERROR(reblock_sigtrap());
    REPRO_ASSIGN_OR_RETURN(os::Registers regs, os::get_registers(t.tid));
    t.where = ReplayThread::Where::kParked;
    if (trampoline != 0 && regs.rip > target + 1 && regs.rip <= target + run_length) {
      // A jump landed on the int3 padding after the jump to the trampoline:
      // carry on with that instruction's copy there.
      uint64_t landed = regs.rip - 1;
      uint64_t offset = 0;
      size_t i = 0;
      while (i < run.size() && target + offset < landed) {
        offset += run[i++].length;
      }
      if (i == run.size() || target + offset != landed) {
        (void)put_back();
        return diverged(t, expected,
                        fmt::format("a jump to {:#x}, inside an instruction replay had moved",
                                    landed));
      }
      regs.rip = trap_code.moved_addresses[i];
      REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
      REPRO_RETURN_IF_ERROR(resume(t));
      continue;
    }
    if (regs.rip != trap_code.trap_rip) {
      REPRO_RETURN_IF_ERROR(resume(t));
      continue;
    }
    regs.rip = target;
    if (trap_code.changes_flags) {
      // Dead flags, which the trampoline's compares changed: the program
      // will not read them, so they are what the recording had.
      regs.eflags = (regs.eflags & ~patch::kArithmeticFlags) |
                    (recorded.eflags & patch::kArithmeticFlags);
    }
    ++checked_visits;
    REPRO_ASSIGN_OR_RETURN(bool found, matches(regs));
    if (found) {
      return found_here(regs);
    }
    if (trampoline != 0) {
      std::optional<patch::WatchedWord> word = word_that_differs();
      if (word && word != trampoline_request.word) {
        REPRO_ASSIGN_OR_RETURN(bool rebuilt, rebuild_trampoline(word));
        if (rebuilt) {  // from the new code's trap on
          REPRO_ASSIGN_OR_RETURN(os::Registers live, os::get_registers(t.tid));
          live.rip = trap_code.trap_rip;
          REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, live));
        }
      }
      // The trampoline goes on with the moved instructions after its trap.
      REPRO_RETURN_IF_ERROR(resume(t));
      continue;
    }
    REPRO_RETURN_IF_ERROR(put_back());
    REPRO_RETURN_IF_ERROR(os::set_registers(t.tid, regs));
    if (string_op) {
      REPRO_ASSIGN_OR_RETURN(found, advance_in_string(&regs));
      if (found) {
        return found_here(regs);
      }
      // Not in this run of it: to its end at once, then the trap again.
      REPRO_ASSIGN_OR_RETURN(regs, run_string_to_end(regs));
      REPRO_RETURN_IF_ERROR(insert());
      REPRO_RETURN_IF_ERROR(resume(t));
      continue;
    }
    if (run_state == RunState::kUnchecked) {
      REPRO_RETURN_IF_ERROR(step_through_loop(&found));
      REPRO_ASSIGN_OR_RETURN(regs, os::get_registers(t.tid));
      if (found) {
        return found_here(regs);
      }
      if (regs.rip != target) {
        // Stepping gave up somewhere else: back to breakpoints.
        REPRO_RETURN_IF_ERROR(insert());
        REPRO_RETURN_IF_ERROR(resume(t));
        continue;
      }
    }
    if (run_state == RunState::kUsable) {
      // More visits to come: move the check into the program.
      REPRO_ASSIGN_OR_RETURN(trampoline, install_trampoline(t, target, recorded, run_bytes, run,
                                                            &trap_code, &trampoline_request));
      if (trampoline != 0) {
        REPRO_RETURN_IF_ERROR(resume(t));
        continue;
      }
      run_state = RunState::kUnusable;
    }
    // Not yet: execute the real instruction, then set the trap again.
    REPRO_RETURN_IF_ERROR(resume(t, PTRACE_SINGLESTEP));
    REPRO_ASSIGN_OR_RETURN(int step_status, wait_stop(t));
    if (!WIFSTOPPED(step_status) || (static_cast<unsigned>(step_status) >> 16) != 0) {
      return stopped_otherwise(step_status);
    }
    REPRO_RETURN_IF_ERROR(reblock_sigtrap());
    REPRO_RETURN_IF_ERROR(insert());
    REPRO_RETURN_IF_ERROR(resume(t));
  }
}

Result<uint64_t> ReplaySession::install_trampoline(ReplayThread& t, uint64_t target,
                                                   const os::Registers& want,
                                                   const std::string& original,
                                                   const std::vector<patch::Instruction>& run,
                                                   patch::TrampolineCode* code,
                                                   patch::TrampolineRequest* request_out) {
  // Requires: t stopped at `target` with the original code in place.
  // Returns the trampoline's page, or 0 when none could be placed (the
  // caller falls back to breakpoints).
  uint64_t page = free_page_near(t.pid, target);
  if (page == 0) {
    return uint64_t{0};
  }
  patch::TrampolineRequest request{.trampoline = page, .target = target, .want = want,
                                   .run = run, .original = original};
  REPRO_ASSIGN_OR_RETURN(request.now, os::get_registers(t.tid));
  // Compares may change the flags where the program overwrites them before
  // reading them (followed in the original code, past the run's end).
  uint8_t code_here[patch::kRunCodeBytes] = {};
  REPRO_RETURN_IF_ERROR(os::read_memory(t.tid, target, code_here, sizeof code_here));
  request.flags_dead = patch::arithmetic_flags_dead(code_here, sizeof code_here, target);
  request.loop = patch::movable_loop_at(
      [&](uint64_t address, uint8_t* out, size_t size) {
        return os::read_memory(t.tid, address, out, size).is_ok();
      },
      target);
  auto built = patch::conditional_trap_code(request);
  if (!built.is_ok() && request.loop) {
    request.loop.reset();  // out of reach: move just the run
    built = patch::conditional_trap_code(request);
  }
  auto jump = patch::jump_to_trampoline(target, page, original.size());
  if (!built.is_ok() || !jump.is_ok()) {
    return uint64_t{0};
  }
  REPRO_ASSIGN_OR_RETURN(
      int64_t mapped,
      inject_syscall_at(t, target, SYS_mmap,
                        {page, kPage, PROT_READ | PROT_WRITE | PROT_EXEC,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                         static_cast<uint64_t>(-1), 0}));
  if (static_cast<uint64_t>(mapped) != page) {
    if (mapped > 0) {
      REPRO_ASSIGN_OR_RETURN(int64_t unmapped,
                             inject_syscall_at(t, target, SYS_munmap,
                                               {static_cast<uint64_t>(mapped), kPage}));
      (void)unmapped;
    }
    return uint64_t{0};
  }
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, page, built->bytes.data(), built->bytes.size()));
  REPRO_RETURN_IF_ERROR(os::write_memory(t.tid, target, jump->data(), jump->size()));
  *code = std::move(*built);
  *request_out = std::move(request);
  return page;
}

// ---------------------------------------------------------------------------
// Saying where memory differs

void ReplaySession::note_for_memory_reports(const format::Event& event) {
  auto it = threads_.find(event.thread);
  if (event.kind == format::EventKind::kExec) {
    exec_paths_by_content_[event.content_id] = event.path;
  }
  if (it == threads_.end()) {
    return;
  }
  const pid_t pid = it->second.pid;
  switch (event.kind) {
    case format::EventKind::kPreempt: {
      auto& copies = page_copies_[pid];
      for (const format::MemoryWrite& copy : event.writes) {
        if (copy.bytes.size() == kPage) {
          copies[copy.address] = copy.bytes;
        }
      }
      break;
    }
    case format::EventKind::kExec:
      page_copies_.erase(pid);
      break;
    case format::EventKind::kThreadExit: {
      // The last thread of a process: its pid may be reused by another.
      bool others = std::any_of(threads_.begin(), threads_.end(), [&](const auto& entry) {
        return entry.first != event.thread && entry.second.pid == pid &&
               entry.second.where != ReplayThread::Where::kGone;
      });
      if (!others) {
        page_copies_.erase(pid);
      }
      break;
    }
    default:
      break;
  }
}

MemoryFinding ReplaySession::find_memory_difference(const ReplayThread& t,
                                                    const format::Event& event,
                                                    const os::WritableMemory& memory) {
  MemoryFinding finding;
  finding.difference = first_memory_difference(event.page_hashes, memory.pages);
  if (finding.difference.kind != MemoryDifference::Kind::kPage) {
    return finding;
  }
  const uint64_t page = finding.difference.start;
  const uint64_t recorded_hash = finding.difference.recorded_hash;
  if (recorded_hash == os::zero_page_hash()) {
    finding.recorded_page = std::string(kPage, '\0');  // the recorder copies no page of zeros
  } else if (auto process = page_copies_.find(t.pid); process != page_copies_.end()) {
    auto copy = process->second.find(page);
    if (copy != process->second.end() && os::page_hash(copy->second.data()) == recorded_hash) {
      finding.recorded_page = copy->second;
    }
  }
  auto bytes = os::read_memory(t.tid, page, kPage);
  if (bytes.is_ok()) {
    finding.replayed_page = std::move(*bytes);
  }
  return finding;
}

std::vector<diag::MappedModule> ReplaySession::report_modules(
    pid_t pid, const std::vector<os::Mapping>& maps, std::map<std::string, std::string>* exec_names) {
  std::vector<diag::MappedModule> modules = mapped_files_.modules();
  // The kernel mapped the executable from the trace's copy (or a private
  // copy of it): name it by the path the recording executed. An exec the
  // replay loop did not see is the first, which start() made.
  std::error_code error;
  std::string exe = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", pid), error);
  if (!error) {
    auto recorded = exec_paths_by_content_.find(content_id_of_file(exe));
    std::string name = recorded != exec_paths_by_content_.end() ? recorded->second
                                                                : reader_->header().exe_path;
    if (exec_names != nullptr) {
      (*exec_names)[exe] = name;
    }
    diag::MappedModule module{.recorded_path = name, .file_path = exe};
    uint64_t end = 0;
    for (const os::Mapping& line : maps) {
      if (line.name != exe) {
        continue;
      }
      if (line.file_offset == 0 && module.start == 0) {
        module.start = line.start;
      }
      end = std::max(end, line.end);
    }
    if (module.start != 0 && end > module.start) {
      module.length_bytes = end - module.start;
      modules.push_back(std::move(module));
    }
  }
  std::sort(modules.begin(), modules.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  return modules;
}

std::vector<diag::MappedModule> ReplaySession::report_modules(pid_t pid) {
  auto maps = os::read_mappings(pid);
  return report_modules(pid, maps.is_ok() ? *maps : std::vector<os::Mapping>{}, nullptr);
}

std::string ReplaySession::describe_memory(const ReplayThread& t, const MemoryFinding& finding) {
  // Empty if it cannot be read: the report then names less.
  auto read = os::read_mappings(t.pid);
  const std::vector<os::Mapping> maps = read.is_ok() ? std::move(*read) : std::vector<os::Mapping>{};
  std::map<std::string, std::string> exec_names;  // path in maps -> recorded path
  std::vector<diag::MappedModule> modules = report_modules(t.pid, maps, &exec_names);

  // A maps line's name: the recorded path of the file replay mapped there,
  // else the kernel's name for it.
  auto line_name = [&](const os::Mapping& line) -> std::string {
    for (const diag::MappedModule& module : mapped_files_.modules()) {
      if (line.start >= module.start && line.start < module.start + module.length_bytes &&
          (line.name.empty() || line.name == module.file_path)) {
        return module.recorded_path;
      }
    }
    auto exec = exec_names.find(line.name);
    if (exec != exec_names.end()) {
      return exec->second;
    }
    return line.name;
  };
  AddressNamer namer;
  namer.name_address = [&](uint64_t address) -> std::string {
#ifdef REPRO_HAVE_DIAG
    std::string symbol = diag::describe_data_address(t.pid, address, modules);
    if (!symbol.empty()) {
      return symbol;
    }
#endif
    for (const os::Mapping& line : maps) {
      if (address >= line.start && address < line.end) {
        std::string name = line_name(line);
        return name.empty() ? fmt::format("in anonymous memory {:#x}-{:#x}", line.start, line.end)
                            : "in " + name;
      }
    }
    return "";
  };
  namer.name_range = [&](uint64_t start, uint64_t end) -> std::string {
    std::string text;
    for (const os::Mapping& line : maps) {
      if (line.start < end && start < line.end) {
        std::string name = line_name(line);
        text += fmt::format("{}{} {}", text.empty() ? "" : ", ",
                            name.empty() ? "anonymous memory" : name, line.perms);
      }
    }
    return text;
  };
  return describe_memory_finding(finding, namer);
}

}  // namespace repro::replayer
