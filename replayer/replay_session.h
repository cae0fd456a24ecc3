#pragma once
// ReplaySession: re-executes a recorded program from its trace.
//
// Why it is built this way (docs/replaying.md has the long form):
// - The trace is one ordered stream of events, each belonging to one thread.
//   Replay takes them in order and, for each, runs only that thread up to
//   the point the event names; every other thread stays in a ptrace-stop.
//   So the recorded interleaving is enforced with no clock and no counter.
// - Syscalls are answered from the trace (result and memory written) unless
//   they shape the process (memory maps, clone, exec, exit, signal state),
//   which run for real at the recorded addresses. The outside world is
//   never touched: no file is opened or written, no socket connected; the
//   program's stdout and stderr bytes are printed from the trace.
// - Every syscall's number and arguments are compared with the trace; a
//   preemption point is found again by breakpoint plus registers plus a hash
//   of writable memory. Any mismatch stops replay with a DivergenceReport.
//
// Not thread-safe. One session replays one trace once.

#include <sys/types.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/status.h"
#include "core/format/event.h"
#include "core/format/trace_reader.h"
#include "core/os/isolation.h"
#include "core/os/proc_maps.h"
#include "core/patch/conditional_trap.h"
#include "core/patch/instruction.h"
#include "core/patch/rdtsc_patcher.h"
#include "replayer/exec_paths.h"
#include "replayer/mapped_files.h"
#include "replayer/memory_difference.h"
#include "replayer/pipe_streams.h"
#include "replayer/replay_thread.h"
#include "replayer/replay_watcher.h"

namespace repro::replayer {

struct ReplayOptions {
  std::string trace_dir;
  bool allow_incomplete = false;    // replay the valid prefix of an unfinished trace
  bool allow_cpu_mismatch = false;  // replay a trace from another CPU (warns)
  /// Called with each event before it is replayed (`--events`).
  std::function<void(uint64_t index, const format::Event&)> on_event;
  /// Called with a warning line (CPU mismatch, ...).
  std::function<void(const std::string&)> on_warning;
  /// Stop after replaying the event of this index (`--stop-at`): the
  /// outcome says where each thread stands, and the program is ended.
  std::optional<uint64_t> stop_after_event;
};

struct ReplayOutcome {
  int wait_status = 0;           // raw wait status of the replayed first process
  int recorded_wait_status = 0;  // what the trace says it was
  uint64_t event_count = 0;
  /// Non-empty if the recording ended in a deadlock (kDeadlock): what each
  /// replayed thread stood at when replay reached it, with backtraces.
  std::string deadlock;
  /// With stop_after_event, if replay got there: each thread's place and
  /// backtrace at that point.
  std::string stopped_at;
};

class ReplaySession {
 public:
  /// Opens and checks the trace (complete, same CPU) without starting
  /// anything. Errors: not_found, corruption, version_mismatch, unsupported.
  static Result<std::unique_ptr<ReplaySession>> open(const ReplayOptions& options);
  ~ReplaySession();

  /// Replays to the end of the trace. Errors: divergence (with report),
  /// corruption, unsupported (a syscall whose effects were not recorded).
  Result<ReplayOutcome> run();

  // Event by event, for a driver that looks at the replay between events
  // (gdb_server.h): begin(), replay_next() until it returns false, then
  // finish(). run() is exactly that loop.

  /// Starts the program; it stands before its first instruction, thread
  /// t0 parked. Errors as run().
  Status begin();
  /// Replays the next event. False (and nothing done) at the end of the
  /// trace. Errors as run().
  Result<bool> replay_next();
  /// After the last event: waits for the program's end and compares its
  /// status with the recorded one. Errors as run().
  Result<ReplayOutcome> finish();
  /// Shows the replay to `watcher` from now on (nullptr: to nobody). The
  /// watcher must outlive the session or be unset first.
  void set_watcher(ReplayWatcher* watcher) { watcher_ = watcher; }

  /// The index of the next event to replay (the number replayed so far).
  uint64_t next_event_index() const { return event_index_; }
  /// The next event to replay, read ahead; nullptr at the end of the trace.
  Result<const format::Event*> peek_next_event();
  /// The thread of the last event replayed (t0 before any).
  uint32_t last_event_thread() const { return last_event_thread_; }
  /// The replay's threads by index, gone ones included.
  const std::map<uint32_t, ReplayThread>& threads() const { return threads_; }
  /// The live pid of the program's first process (0 before begin()).
  pid_t root_pid() const { return root_pid_; }
  /// Waits for the first stop of a thread just created, so it can be
  /// inspected; nothing to do for any other thread.
  Status settle_thread(uint32_t index) { return ensure_started(thread(index)); }
  /// One line per live thread (where it stands), each with its backtrace.
  std::string describe_threads();

 private:
  ReplaySession(const ReplayOptions& options, std::unique_ptr<format::TraceReader> reader,
                ExecPaths paths);
  /// How this replay meets rdtsc: trap it, patch the sites the trace
  /// lists, or find and patch them itself (trace_dir's header, REPRO_TSC,
  /// and whether this host can trap rdtsc).
  Status choose_tsc_handling();
  /// Whether the program runs isolated (REPRO_REPLAY_ISOLATION), and the
  /// test hook REPRO_REPLAY_EXECUTE_FOR_REAL (replay_isolation.cc).
  Status choose_isolation();
  /// After the spawn: warns that isolation is off or not enforced here, or
  /// fails if REPRO_REPLAY_ISOLATION=namespace asked for it.
  Status check_isolation(const os::IsolationFailure& failure);
  /// The test hook: runs the syscall for real, as an emulation bug would,
  /// and diverges if its result is not the recorded one.
  Status execute_for_real(ReplayThread& t, const format::Event& event);
  Status start();
  /// Pins repro (and so the program it starts) to the recording's CPU.
  void pin_like_the_recording(int recorded_cpu);
  /// The next event, from the lookahead buffer or the trace.
  Result<bool> next_event(format::Event* event);
  /// The next event of `thread` that is not a preemption, reading ahead as
  /// far as needed; nullptr if the trace ends first.
  Result<const format::Event*> peek_next_of_thread(uint32_t thread);
  Status replay_event(const format::Event& event);

  // Events.
  Status on_thread_start(const format::Event& event);
  Status on_exec(const format::Event& event);
  Status on_syscall_entered(const format::Event& event);
  Status on_syscall(const format::Event& event);
  /// Answers the syscalls of a kSyscallBatch one by one (replay_fast_path.cc).
  Status on_syscall_batch(const format::Event& event);
  /// Answers one syscall the preloaded library made without a stop, at
  /// the library's syscall instruction.
  Status answer_fast_path_syscall(ReplayThread& t, const format::Event& answer);
  /// Puts the batch `data` into the replay queue of t's process, the
  /// answering code in its page first if it is not there yet; false where
  /// the process has no queue (then each call is answered at a stop).
  Result<bool> queue_fast_path_batch(ReplayThread& t, const std::string& data);
  /// After an event of t: the queued batch must have been used up.
  Status check_fast_path_queue_used(ReplayThread& t);
  /// At a syscall stop: a call the answering code passed on to a real
  /// syscall while records were queued is a divergence from the first.
  Status check_fast_path_fallback(ReplayThread& t);
  Status on_signal(const format::Event& event);
  Status on_preempt(const format::Event& event);
  Status on_rdtsc(const format::Event& event);
  Status on_rdtsc_patch(const format::Event& event);
  // kSyscallPatch: the same writes, and the thread past the site.
  Status on_syscall_patch(const format::Event& event);
  /// When replay patches rdtsc itself (a trace recorded in trapping mode,
  /// replayed where rdtsc cannot be trapped): patches the code of t's
  /// process made executable in [start, end).
  Status scan_new_code(ReplayThread& t, uint64_t start, uint64_t end);
  /// After t's syscall `event` was answered: scan_new_code for what an
  /// mmap or mprotect made executable.
  Status scan_code_made_executable(ReplayThread& t, const format::Event& event);
  Status on_thread_exit(const format::Event& event);
  /// The recording ended in a deadlock here: notes where each thread
  /// stands (the kThreadExit events of its SIGKILL follow).
  Status on_deadlock(const format::Event& event);

  // Syscalls (replay_syscalls.cc).
  Status answer_syscall(ReplayThread& t, const format::Event& event);
  Status emulate(ReplayThread& t, const format::Event& event);
  Status execute(ReplayThread& t, const format::Event& event);
  Status execute_mmap(ReplayThread& t, const format::Event& event);
  Status execute_shared_file_mmap(ReplayThread& t, const format::Event& event,
                                  const std::string& content_id);
  Status execute_private_file_mmap(ReplayThread& t, const format::Event& event,
                                   const std::string& content_id);
  /// An mmap of /dev/zero (kDevZeroContentId): maps /dev/zero itself.
  Status execute_dev_zero_mmap(ReplayThread& t, const format::Event& event);
  /// Maps the file at `path` (opened with `open_flags`) for real as the
  /// mmap `event` did, in place of that mmap, at whose entry t is stopped.
  /// Returns mmap's result (or a failed open's); t is then parked at the
  /// syscall's exit.
  Result<int64_t> map_file_in_tracee(ReplayThread& t, const format::Event& event,
                                     const std::string& path, int open_flags);
  /// Writes `length` bytes of the file at `path` from `offset` into t's
  /// memory at `address`.
  Status copy_file_into(ReplayThread& t, const std::string& path, uint64_t offset, uint64_t address,
                        uint64_t length);
  Status finish_executed_mmap(ReplayThread& t, uint64_t address);
  /// The path of the trace's copy `content_id` of the file the program
  /// knew as `recorded_path`, checked against its content id the first time
  /// it is asked for (file_copy_check.h): replay never maps or executes
  /// wrong bytes. Corruption, naming both paths, if the copy is damaged or
  /// missing; the verdict is kept, so each copy is read once per replay.
  Result<std::string> stored_copy(const std::string& content_id, const std::string& recorded_path);
  /// The scratch copy that shared mappings of recorded `path` map, made to
  /// hold stored file `content_id` (mapped by an mmap of `length` bytes at
  /// `offset`) if it held other content.
  Result<std::string> shared_file_for(const std::string& path, const std::string& content_id,
                                      uint64_t offset, uint64_t length);
  /// Runs one syscall of our choosing in the tracee. Requires: t is at a
  /// syscall-exit stop. Returns the syscall's result.
  Result<int64_t> inject_syscall(ReplayThread& t, int number, const std::array<uint64_t, 6>& args);
  Status finish_clone(ReplayThread& t, const format::Event& event);
  Status emit_output(const format::Event& event);
  /// The program's output guard: the bytes the replayed program hands to an
  /// output syscall must be the ones recorded, or replay would print what
  /// the program did not write. Divergence if they differ.
  Status check_output(ReplayThread& t, const format::Event& event);
  Status apply_write_to_shared_file(ReplayThread& t, const format::Event& event);
  /// The bytes the write (write, pwrite64, writev, pwritev) in `event` took
  /// from t's memory, as many as its result says.
  Result<std::string> written_bytes(ReplayThread& t, const format::Event& event);
  Status wait_syscall_exit(ReplayThread& t);
  Status write_recorded_memory(ReplayThread& t, const format::Event& event);
  /// Runs the syscall `substitute` describes (at a seccomp stop) in place of
  /// the recorded one, then puts back the recorded number, arguments and
  /// result at its exit.
  Status run_in_place(ReplayThread& t, const format::Event& event, const os::Registers& substitute);
  /// The signal mask a syscall installs while it waits (rt_sigsuspend,
  /// ppoll, pselect6, epoll_pwait, epoll_pwait2), if it was given one.
  struct SignalMask {
    uint64_t address = 0;
    uint64_t size = 0;
  };
  Result<std::optional<SignalMask>> temporary_signal_mask(const ReplayThread& t,
                                                          const format::Event& event);
  Status wait_under_temporary_mask(ReplayThread& t, const format::Event& event,
                                   const SignalMask& mask);

  // Moving threads.
  Status advance_to_syscall(ReplayThread& t);
  /// Records, for a thread at a seccomp stop, which syscall it entered.
  Status note_syscall_entry(ReplayThread& t);
  Status check_syscall(ReplayThread& t, const format::Event& event);
  Status ensure_started(ReplayThread& t);
  Status resume(ReplayThread& t, int request = 0, int signal = 0);
  /// t's next stop, past the steps taken on a watcher's behalf.
  Result<int> wait_stop(ReplayThread& t);
  /// t's next stop as waitpid reports it (or as stashed).
  Result<int> wait_raw_stop(ReplayThread& t);
  // With a watcher (replay_watcher.h): shows it t before the instruction
  // at rip (unless it came there unstepped and the watcher saw it there
  // last), re-reading *regs if the watcher stopped there...
  Status show_to_watcher(ReplayThread& t, os::Registers* regs, ReplayWatcher::Arrival arrival);
  /// ... notes a pushf about to be stepped at `rip` ...
  Status prepare_watcher_step(ReplayThread& t, uint64_t rip);
  /// ... and clears the trap flag a stepped pushf pushed, or a stepped
  /// syscall put in r11 (at its entry stop, or after it), in *regs too.
  Status finish_watcher_step(ReplayThread& t, os::Registers* regs);
  /// Resumes t after a watcher's step: another step, or free running if
  /// the watcher no longer wants steps.
  Status continue_after_step(ReplayThread& t, const os::Registers& regs);
  Status deliver_signal(ReplayThread& t, int signal, const siginfo_t& info, bool synchronous);
  Status settle_after_step(ReplayThread& t);
  Status find_preemption_point(ReplayThread& t, const format::Event& event);
  /// The stack pointers of the threads of t's process, t's being `rsp`
  /// (os::hash_writable_memory leaves their dead stack out).
  std::vector<uint64_t> stack_pointers(const ReplayThread& t, uint64_t rsp);
  /// Keeps what a report on a preemption point's memory needs from `event`
  /// (its page copies, an executable's recorded path) and drops the copies
  /// of a process whose memory the event replaces (exec) or ends.
  void note_for_memory_reports(const format::Event& event);
  /// Where `memory` (t's process at a visit) first differs from `event`'s
  /// pages, with that page's bytes on both sides where known.
  MemoryFinding find_memory_difference(const ReplayThread& t, const format::Event& event,
                                       const os::WritableMemory& memory);
  /// The files mapped in process `pid` that reports must name by their
  /// recorded paths: the files replay maps as anonymous memory, and the
  /// executable, which runs from the trace's copy. With `exec_names`: also
  /// the executable's path in `maps` -> its recorded path.
  std::vector<diag::MappedModule> report_modules(pid_t pid, const std::vector<os::Mapping>& maps,
                                                 std::map<std::string, std::string>* exec_names);
  std::vector<diag::MappedModule> report_modules(pid_t pid);
  /// describe_memory_finding(), naming addresses in t's process.
  std::string describe_memory(const ReplayThread& t, const MemoryFinding& finding);
  /// Maps a conditional-trap trampoline for the instruction at `target`
  /// and jumps to it from there (see core/patch/conditional_trap.h); sets
  /// `*request` to what it was built from (`original` must outlive it).
  Result<uint64_t> install_trampoline(ReplayThread& t, uint64_t target, const os::Registers& want,
                                      const std::string& original,
                                      const std::vector<patch::Instruction>& run,
                                      patch::TrampolineCode* code,
                                      patch::TrampolineRequest* request);
  /// Runs one syscall of our choosing in a thread stopped outside any
  /// syscall, using the code bytes at `scratch_code` (put back after).
  Result<int64_t> inject_syscall_at(ReplayThread& t, uint64_t scratch_code, int number,
                                    const std::array<uint64_t, 6>& args);
  Status restore_exec_state(ReplayThread& t, const format::Event& exec);
  /// Points the execve or execveat `t` stopped at to the trace's copy of
  /// the image that ran, with the recorded argv, both laid out in scratch
  /// memory below the stack; returns that memory's address and old bytes
  /// (for a parent that shares it), or a divergence if the exec is not the
  /// recorded one.
  Result<std::pair<uint64_t, std::string>> redirect_exec(ReplayThread& t,
                                                         const format::Event& event);

  ReplayThread& thread(uint32_t index);
  ReplayThread* find_by_tid(pid_t tid);
  Status diverged(const ReplayThread& t, std::string expected, std::string observed);
  void note_exit(pid_t tid, int wait_status);
  void kill_all();
  void release_stashed_stops();

  ReplayOptions options_;
  std::unique_ptr<format::TraceReader> reader_;
  ExecPaths exec_paths_;
  std::map<uint32_t, ReplayThread> threads_;
  // Fast-path calls answered in the program from the replay queue
  // (fast_path_answers.h); REPRO_REPLAY_FAST_PATH=stop answers each at a
  // stop, the way replay takes where the queue is missing.
  bool answer_fast_path_in_process_ = true;
  std::map<pid_t, std::deque<int>> stashed_stops_;  // stops seen while waiting for another thread
  std::deque<format::Event> lookahead_;             // events read ahead of replay
  // Files mapped MAP_SHARED: recorded path -> (scratch copy, its content id).
  std::map<std::string, std::pair<std::string, std::string>> shared_files_;
  // Content id -> the verdict of checking its copy (stored_copy).
  std::map<std::string, Status> checked_copies_;
  MappedFiles mapped_files_;   // file mmaps replayed as anonymous memory, for backtraces
  PipeStreams pipe_streams_;  // data passed through pipes, stored once (pipe_streams.h)
  patch::RdtscPatcher patcher_;
  bool trap_rdtsc_ = true;        // rdtsc faults (PR_SET_TSC) in the replayed program
  bool scan_for_rdtsc_ = false;   // replay finds and patches rdtsc sites itself
  os::IsolationRequest isolation_ = os::IsolationRequest::kAuto;
  std::set<int> execute_for_real_;  // syscall numbers of REPRO_REPLAY_EXECUTE_FOR_REAL
  std::string mapped_path_;    // path of the last kMappedFile event
  int64_t mapped_offset_ = 0;  // and its result (address, or file offset of a write)
  // For memory divergence reports (preemption_finder.cc): the page copies
  // of preempt events per live process (page address -> bytes; a copy is
  // used only if its hash is the recorded page hash, so a stale one is
  // harmless), and the recorded path of each executable by content id.
  std::map<pid_t, std::unordered_map<uint64_t, std::string>> page_copies_;
  std::map<std::string, std::string> exec_paths_by_content_;
  uint64_t event_index_ = 0;
  pid_t root_pid_ = 0;
  bool root_reaped_ = false;
  int root_wait_status_ = 0;
  int recorded_root_status_ = 0;
  bool first_exec_done_ = false;
  std::string deadlock_report_;  // on_deadlock's
  ReplayWatcher* watcher_ = nullptr;
  // Set while replay runs code of its own in the program (an injected
  // syscall): the watcher is not shown those instructions.
  bool hide_from_watcher_ = false;
  /// Sets hide_from_watcher_ for its lifetime.
  class HiddenFromWatcher {
   public:
    explicit HiddenFromWatcher(ReplaySession* session)
        : session_(session), was_(session->hide_from_watcher_) {
      session->hide_from_watcher_ = true;
    }
    ~HiddenFromWatcher() { session_->hide_from_watcher_ = was_; }
    HiddenFromWatcher(const HiddenFromWatcher&) = delete;
    HiddenFromWatcher& operator=(const HiddenFromWatcher&) = delete;

   private:
    ReplaySession* session_;
    bool was_;
  };
  uint32_t last_event_thread_ = 0;
};

}  // namespace repro::replayer
