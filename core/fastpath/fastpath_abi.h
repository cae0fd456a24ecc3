#ifndef REPRO_CORE_FASTPATH_FASTPATH_ABI_H_
#define REPRO_CORE_FASTPATH_FASTPATH_ABI_H_
/* The in-process syscall fast path: what the preloaded library
 * (preload/librepro_preload.so), the recorder and the replayer agree on.
 *
 * Plain C, so the freestanding library can include it. The library maps
 * one page at REPRO_FASTPATH_PAGE_ADDRESS holding `syscall; ret`; the
 * seccomp filter lets a syscall whose instruction pointer (the address
 * after the instruction) is REPRO_FASTPATH_UNTRACED_IP through without a
 * stop while recording. Each thread logs those syscalls into its own
 * buffer (a header, then records back to back); the recorder copies the
 * records it has not seen yet into the trace, as one kSyscallBatch event,
 * at every stop of that thread. The batch's data is those records verbatim.
 * docs/trace-format.md describes the layout byte by byte. */

#include <stdint.h>

/* rr uses 0x70000000 for its page too: low enough to be free in every
 * x86-64 layout (executables load at 0x400000 or above 0x55..., libraries
 * near 0x7f...), and fixed so that the seccomp filter, installed before
 * exec, can name it. If something else is mapped there the library stays
 * on the slow path. */
#define REPRO_FASTPATH_PAGE_ADDRESS 0x70000000ull
/* `syscall` is 2 bytes long; seccomp reports the address after it. */
#define REPRO_FASTPATH_UNTRACED_IP (REPRO_FASTPATH_PAGE_ADDRESS + 2)

/* Replay only: a queue the replayer fills with the records of a batch, and
 * from which the code it writes into the page in place of `syscall; ret`
 * answers the library's calls in the program itself, with no stop
 * (replayer/fast_path_answers.h). The library maps it next to the page,
 * while recording too, where it stays untouched: zeros, which the memory
 * a preemption point is named by leaves out. The answering code zeroes
 * what it used, so it is zeros again once the batch has been made.
 * Layout: u32 offset of the next record (from the queue's start), u32
 * offset of the end of the records, two u64 slots the code saves rsi and
 * rdi in, then the records, as in a batch. */
#define REPRO_FASTPATH_REPLAY_QUEUE_ADDRESS 0x70001000ull
#define REPRO_FASTPATH_REPLAY_QUEUE_BYTES (260u * 1024u)
#define REPRO_FASTPATH_REPLAY_QUEUE_RECORDS 24u
/* Where the answering code makes a real syscall when the queue holds no
 * record for the call (the replayer answers it at a stop, as before);
 * seccomp reports the address after that `syscall`. */
#define REPRO_FASTPATH_REPLAY_FALLBACK_IP (REPRO_FASTPATH_PAGE_ADDRESS + 0x12)

/* The traced call through which the library talks to the recorder: an
 * unused syscall number the kernel answers with ENOSYS when no recorder
 * is there. args[0] is the operation, args[1] its argument. */
#define REPRO_FASTPATH_CONTROL_SYSCALL 0x5250 /* "RP" */
/* args[1]: the address of the calling thread's buffer. Result 0: logged
 * syscalls are drained from it from now on; anything else: stay slow. */
#define REPRO_FASTPATH_OP_REGISTER 1
/* The buffer is full: the recorder drains it at this stop and sets its
 * end_offset back to the first record (a memory write of the logged call,
 * so replay makes it at the same point). */
#define REPRO_FASTPATH_OP_FLUSH 2
/* Patched syscall sites (core/patch/syscall_sites.h): args[1] is the
 * library's stub area, args[2] its size in bytes, args[3] the address of
 * its entry for sites followed by `cmp $-4096,%rax` (the others follow it
 * at REPRO_FASTPATH_SITE_ENTRY_STRIDE apart, in the order of
 * enum repro_site_compare), args[4] the address of a function the library
 * calls each time it has published a record and cleared `busy` (below):
 * the recorder runs a thread that is inside a logged call to a breakpoint
 * there. Sent once per process image, by the library's constructor;
 * result 0 (-ENOSYS without a recorder). */
#define REPRO_FASTPATH_OP_SYSCALL_STUBS 3
/* Writes: args[1] is the address of the library's
 * struct repro_fastpath_write_exclusions (below), args[2] its size. The
 * recorder fills it in as a memory write of the logged call (so replay
 * makes the same write), result 0; -ENOSYS without a recorder, -EINVAL for
 * another size. Sent once per process image, after
 * REPRO_FASTPATH_OP_SYSCALL_STUBS; until it is answered, every write takes
 * the slow path. */
#define REPRO_FASTPATH_OP_WRITE_EXCLUSIONS 4
#define REPRO_FASTPATH_STUB_AREA_BYTES 65536u
#define REPRO_FASTPATH_SITE_ENTRY_STRIDE 128u
/* The instruction after a patchable `syscall`, which the entry runs in its
 * place before it returns: libc's test of the result for an error. */
enum repro_site_compare {
  REPRO_SITE_CMP_RAX_4096 = 0, /* 48 3d 00 f0 ff ff  cmp $-4096,%rax */
  REPRO_SITE_CMP_RAX_4095 = 1, /* 48 3d 01 f0 ff ff  cmp $-4095,%rax */
  REPRO_SITE_CMP_EAX_4096 = 2, /* 3d 00 f0 ff ff     cmp $-4096,%eax */
  REPRO_SITE_CMP_EAX_4095 = 3  /* 3d 01 f0 ff ff     cmp $-4095,%eax */
};
/* A stub sets the return address below the red zone, then jumps to the
 * entry, which returns with `ret $REPRO_FASTPATH_SITE_RED_ZONE_BYTES`. */
#define REPRO_FASTPATH_SITE_RED_ZONE_BYTES 128u

#define REPRO_FASTPATH_BUFFER_MAGIC 0x31425052u /* "RPB1" */
/* 256 KiB per thread: 4,000+ getppid records between two stops, and
 * 15 reads or directory listings of REPRO_FASTPATH_MAX_OUTPUT_BYTES before
 * a flush stops the thread (find and ls -lR flushed 1,100 times with 64 KiB). */
#define REPRO_FASTPATH_BUFFER_BYTES (256u * 1024u)
/* Longer reads take the slow path. A read of 1 KiB or more from a regular
 * file goes into the trace by reference to the file's copy in files/ on
 * either path (tracer/file_read_references.h): the recorder takes such a
 * record out of its batch when it drains the buffer. */
#define REPRO_FASTPATH_MAX_OUTPUT_BYTES 16384u

/* At the start of each thread's buffer. */
struct repro_fastpath_header {
  uint32_t magic;        /* REPRO_FASTPATH_BUFFER_MAGIC */
  /* 1 from before the library's syscall until its record is published
   * (end_offset moved past it), then 0. The recorder neither preempts a
   * thread nor delivers it an asynchronous signal while 1: past the
   * syscall, replay could not reach that point without answering a
   * syscall the trace does not list yet (and the instructions around the
   * `ret` cannot tell before from after). 1 also keeps a signal
   * handler's syscalls off the buffer. */
  uint32_t busy;
  uint32_t capacity;     /* bytes of the whole buffer, header included */
  uint32_t end_offset;   /* where the next record goes (from the buffer start) */
};

/* One logged syscall; `output_bytes` bytes follow it (what the kernel wrote
 * at `output_address`), then `input_bytes` bytes (the string argument
 * `input_arg` named, without its NUL, for the trace's syscall inputs; with
 * a `second_input_arg`, that argument's string follows after a NUL),
 * padded so the next record starts 8-aligned: `record_bytes` covers the
 * padding. */
struct repro_fastpath_record {
  uint32_t record_bytes;
  int32_t syscall_number;
  uint64_t args[6];
  int64_t result;
  uint64_t output_address;
  uint32_t output_bytes;
  uint16_t input_bytes;  /* at most REPRO_FASTPATH_MAX_INPUT_BYTES */
  uint8_t input_arg;     /* the argument index of the input (0 without one) */
  /* The argument index of a second string input (getxattr's name, after
   * its path), 0 for none: a second input is never argument 0. */
  uint8_t second_input_arg;
};

/* The files a write must not reach on the fast path, even when they are
 * regular files (whose writes never wait for another process): the
 * recording's own stdout and stderr, whose bytes the trace keeps so that
 * replay can print them (the recorder reads them at a stop, from the
 * program's buffer), and any file of the recorder's /proc, where a write
 * to /proc/PID/mem changes memory that replay must change too. A file is
 * named by the st_dev and st_ino fstat gives it; procfs by its st_dev. */
#define REPRO_FASTPATH_MAX_OUTPUT_FILES 2u
struct repro_fastpath_write_exclusions {
  uint32_t known;        /* 1 once the recorder filled it in */
  uint32_t output_count; /* entries used in output_device and output_inode */
  uint64_t procfs_device;
  uint64_t output_device[REPRO_FASTPATH_MAX_OUTPUT_FILES];
  uint64_t output_inode[REPRO_FASTPATH_MAX_OUTPUT_FILES];
  /* Set by the recorder (a memory write of the mmap event) once the
   * process maps a file MAP_SHARED: from then on all its writes take the
   * slow path, where the recorder notes where each one went in the file,
   * for replay to apply to its copy of it, so that the mapping sees them
   * at the same point. */
  uint32_t shared_file_mapped;
  /* 1: reads and writes of pipes may take the fast path, tried first with
   * RWF_NOWAIT (preadv2, pwritev2), which fails with EAGAIN where the call
   * would wait, and then the slow path. The recorder sets it where the
   * kernel supports RWF_NOWAIT on pipes, outside chaos mode (whose
   * schedule counts the wake-ups of pipe writes) and unless
   * REPRO_FAST_PATH_PIPES=off. */
  uint32_t pipes_nowait;
};

/* A path longer than this is cut there, as on the slow path
 * (kMaxPathInputBytes, tracer/syscall_inputs.h). */
#define REPRO_FASTPATH_MAX_INPUT_BYTES 4096u
/* An extended attribute's name, the second input, is at most this long
 * (XATTR_NAME_MAX). */
#define REPRO_FASTPATH_MAX_SECOND_INPUT_BYTES 255u

#define REPRO_FASTPATH_RECORD_HEADER_BYTES 80u

#endif /* REPRO_CORE_FASTPATH_FASTPATH_ABI_H_ */
