#pragma once
// The events of a trace: what one tracee thread did between two scheduling
// points, as the recorder saw it and as the replayer must reproduce it.
//
// The trace is one totally ordered stream. Exactly one tracee thread runs
// user code at a time, so an event of thread T means: "T ran from its
// previous event up to this point, and then this happened". Threads are
// named by a small index (`thread`) assigned in order of appearance by
// ThreadStart events; recorded kernel tids are kept only as data.
//
// Event is a plain struct with the fields of every kind; each kind documents
// which fields it uses and the encoder writes only those. Reuse one Event
// object in hot loops: clear() keeps the vectors' capacity.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace repro::format {

enum class EventKind : uint8_t {
  /// The thread stopped at a syscall and it completed: syscall_number, args,
  /// result, syscall_flags, writes (memory the kernel wrote, to restore on
  /// replay). If a SyscallEntered of the same thread came before, this event
  /// completes that syscall (the thread is already inside it).
  kSyscall = 1,
  /// The thread stopped at a syscall entry and was let into the kernel, where
  /// it may block; other threads ran meanwhile. syscall_number, args, and
  /// writes: memory the kernel wrote before it blocked (a PI futex word).
  kSyscallEntered = 2,
  /// A signal was delivered to the thread at this point: signal_number,
  /// signal_info (raw siginfo_t bytes), signal_flags.
  kSignal = 3,
  /// The thread was preempted in user code after its time slice: registers
  /// (raw user_regs_struct bytes), extended_registers_hash, memory_hash
  /// (of all writable memory), page_hashes (the same memory page by page,
  /// so a replay that differs can say where), and writes: copies of some
  /// of those pages (those that changed since their last copy, while the
  /// recording's snapshot budget lasts), so it can also say what the bytes
  /// were.
  kPreempt = 4,
  /// The thread executed rdtsc (or rdtscp) at `address` and got tsc (and
  /// tsc_aux).
  kRdtsc = 5,
  /// A new thread or process appeared: thread is the new index, parent_thread
  /// the creator, recorded_tid its kernel tid, clone_flags how it was made.
  kThreadStart = 6,
  /// The thread finished exec: path (the file name the kernel used, as in
  /// AT_EXECFN: "/dev/fd/N/..." for execveat of a dirfd or fd), content_id
  /// (the copy in the trace's files/ of the image that runs: the interpreter
  /// of a script), random_bytes (AT_RANDOM), data (the new image's argv
  /// strings, each followed by a NUL: for a script, as the kernel rewrote it).
  kExec = 7,
  /// The thread exited: exit_status is the raw wait status.
  kThreadExit = 8,
  /// The thread mapped a file: path, content_id (copy in files/), result is
  /// the mapping address; the Syscall event for the mmap follows.
  kMappedFile = 9,
  /// Batch of syscalls logged inside the tracee (reserved for the in-process
  /// fast path): data holds the batch bytes.
  kSyscallBatch = 10,
  /// rdtsc/rdtscp instructions of code the thread's process just made
  /// executable (exec, mmap, mprotect) were replaced by traps of the same
  /// length (patching mode, for hosts that cannot make rdtsc fault): path
  /// names the file the code came from; writes has one entry per site, its
  /// address and the original instruction's bytes. Replay patches the same
  /// sites at the same point.
  kRdtscPatch = 11,
  /// The recording ended in a deadlock: every live thread was asleep in a
  /// wait only another recorded thread could end (each at its
  /// kSyscallEntered, or stopped for its emulated tracer), and repro ended
  /// the run; the kThreadExit events of SIGKILL follow. data: the recorder's
  /// report (what each thread waited for, with backtraces).
  kDeadlock = 12,
  /// The thread is about to die of a fatal signal (the kSignal event just
  /// before it, whose action terminates the process): data holds a
  /// FailureStacks (failure_stacks.h) with the faulting instruction and a
  /// backtrace of every thread of the process. Replay has nothing to do
  /// for it; `repro report` reads it.
  kFailureStacks = 13,
  /// The thread's syscall just logged came from a syscall site the
  /// recorder then patched (core/patch/syscall_sites.h): path names the
  /// file the code came from, address is the site, data its original
  /// bytes (the syscall and the compare after it); writes holds the stub
  /// and then the jump that replaces the site. The thread, which stood
  /// past the syscall, goes on past the site with the compare's flags.
  /// Replay makes the same writes and moves the thread the same way.
  kSyscallPatch = 14,
};
constexpr uint8_t kMaxEventKind = 14;

/// Bits of Event::syscall_flags.
enum SyscallFlag : uint32_t {
  /// The syscall tables do not know this syscall's memory effects: replay
  /// must refuse it by name rather than guess.
  kSyscallEffectsUnknown = 1u << 0,
  /// Replay executes this syscall for real (mmap, clone, ...), then checks or
  /// forces the recorded result.
  kSyscallExecuted = 1u << 1,
  /// The recorder changed the syscall (for example io_uring_setup answered
  /// ENOSYS without running it).
  kSyscallDenied = 1u << 2,
  /// The syscall wrote to the recording's own stdout (or stderr): `writes`
  /// holds the bytes written, in order, at the buffers they came from.
  /// Replay prints them (restoring them to memory is a no-op).
  kSyscallOutputStdout = 1u << 3,
  kSyscallOutputStderr = 1u << 4,
  /// The syscall wrote to a file the recording has mapped MAP_SHARED; the
  /// kMappedFile event just before names the file (path) and where the
  /// bytes went (result = file offset). Replay writes them to its copy.
  kSyscallWritesMappedFile = 1u << 5,
  /// The bytes a read (read, pread64, readv, preadv, preadv2) put into
  /// memory are those of the file copy `content_id` in files/, starting at
  /// `file_offset`: `writes` are filled from it in order, each as long as
  /// its bytes. The trace stores the addresses and lengths only; TraceReader
  /// fills the bytes in, so readers see the same event either way.
  kSyscallReadsFileCopy = 1u << 6,
  /// A write or writev into a pipe (or FIFO) `pipe_id` whose bytes a
  /// recorded process may read: replay appends the bytes it writes (from
  /// its own memory, as the program holds them) to that pipe's stream.
  kSyscallFeedsPipe = 1u << 7,
  /// A read or readv from pipe `pipe_id` that returned bytes a recorded
  /// write fed it: bytes `file_offset ..` of that pipe's stream (counted
  /// over its kSyscallFeedsPipe writes). Like kSyscallReadsFileCopy the
  /// trace stores the writes' addresses and lengths only; replay fills the
  /// bytes from the stream, so data passed through a pipe is stored once.
  kSyscallReadsPipe = 1u << 8,
  /// The preloaded library made this syscall without a stop (a record of
  /// its buffer, core/fastpath), like those of a kSyscallBatch event; the
  /// recorder took it out of its batch to store its bytes by reference
  /// (kSyscallReadsFileCopy). Replay answers it at the library's syscall.
  kSyscallFastPath = 1u << 10,
};

/// Bit of the encoded syscall_flags varint that says `inputs` follow
/// (docs/trace-format.md). The encoder sets it when Event::inputs is not
/// empty and the decoder clears it, so it never appears in
/// Event::syscall_flags.
inline constexpr uint32_t kSyscallInputsFollow = 1u << 9;

/// Bits of Event::signal_flags.
enum SignalFlag : uint32_t {
  kSignalSynchronous = 1u << 0,  // a fault caused by the instruction itself
};

/// One range of tracee memory written by the kernel during a syscall.
struct MemoryWrite {
  uint64_t address = 0;
  std::string bytes;
  bool operator==(const MemoryWrite&) const = default;
};

/// Bytes the kernel read from the program's memory for one argument of a
/// syscall, as they were when the syscall returned (at its entry for
/// execve/execveat, whose memory is gone after a successful exec): a path
/// (without its NUL), a socket address, or the first bytes of a buffer
/// written. Kept for readers of the trace (dump, reports); replay does not
/// use them. Bounded: see tracer/syscall_inputs.h.
struct SyscallInput {
  uint8_t arg_index = 0;  // 0..5; for sendmsg, 1 holds msg_name's bytes
  std::string bytes;
  bool operator==(const SyscallInput&) const = default;
};

/// The hash of one page of writable memory at a preemption point.
struct PageHash {
  uint64_t address = 0;
  uint64_t hash = 0;
  bool operator==(const PageHash&) const = default;
};

struct Event {
  EventKind kind = EventKind::kSyscall;
  uint32_t thread = 0;

  // kSyscall, kSyscallEntered
  int32_t syscall_number = 0;
  std::array<uint64_t, 6> args{};
  int64_t result = 0;  // also the address for kMappedFile
  uint32_t syscall_flags = 0;
  std::vector<MemoryWrite> writes;  // also of kSyscallEntered, kPreempt and kRdtscPatch
  std::vector<SyscallInput> inputs;  // kSyscall only; in argument order

  // kSignal
  int32_t signal_number = 0;
  uint32_t signal_flags = 0;
  std::string signal_info;

  // kPreempt (and writes)
  std::string registers;
  uint64_t extended_registers_hash = 0;
  uint64_t memory_hash = 0;
  std::vector<PageHash> page_hashes;  // in address order

  // kRdtsc
  uint64_t tsc = 0;
  uint32_t tsc_aux = 0;
  uint64_t address = 0;

  // kThreadStart
  uint32_t parent_thread = 0;
  int32_t recorded_tid = 0;
  uint64_t clone_flags = 0;

  // kExec, kMappedFile, kRdtscPatch (path); kExec, kMappedFile and
  // kSyscall with kSyscallReadsFileCopy (content_id)
  std::string path;
  std::string content_id;
  uint64_t file_offset = 0;  // kSyscall with kSyscallReadsFileCopy or kSyscallReadsPipe
  uint64_t pipe_id = 0;      // kSyscall with kSyscallFeedsPipe or kSyscallReadsPipe
  std::string random_bytes;

  // kThreadExit
  int32_t exit_status = 0;

  // kSyscallBatch, kExec, kDeadlock, kFailureStacks
  std::string data;

  /// Resets every field, keeping allocated capacity.
  void clear();
  bool operator==(const Event&) const = default;
};

/// "syscall", "syscall-entered", ...; "unknown" for a bad value.
const char* event_kind_name(EventKind kind);

/// The argv strings held by a kExec event's data (each followed by a NUL);
/// a last string missing its NUL is kept as it is.
std::vector<std::string> split_exec_argv(const std::string& data);

}  // namespace repro::format
