/* librepro_preload.so: the in-process syscall fast path.
 *
 * Loaded into every recorded program that uses the dynamic loader (the
 * recorder sets LD_PRELOAD), it stands in for a few libc functions whose
 * syscalls are frequent and never block: it makes the syscall itself,
 * through the one instruction the seccomp filter lets pass without a
 * ptrace stop, and logs the number, arguments, result and the bytes the
 * kernel wrote into a per-thread buffer that the recorder drains at the
 * thread's next stop (core/fastpath/fastpath_abi.h). Reads and writes go
 * this way only to regular files and to sockets that cannot block (an
 * fstat, logged too, tells, and for a socket its flags; writes never to
 * the recording's own stdout and stderr, nor into /proc), polls only with
 * a zero timeout, opens only of directories and of regular files for
 * reading, and closes only of directories and regular files; lseek,
 * readlink, fcntl's flag
 * and copy commands, access, the stat family and the extended attribute
 * reads
 * never wait for another process (a record of a call given a path carries
 * the path, and an attribute's name, so the trace keeps them). A stat of
 * a file on a FUSE file system served by a recorded process would hold
 * the CPU until it returns (a read or a close too): the one way these can
 * wait. During replay the same
 * code runs, and the replayer answers each of those syscalls from the
 * trace: inside the program, from its replay queue, or at a stop.
 *
 * Calls libc makes inside itself (readdir's getdents64, opendir's open
 * and fstat, closedir's close, stdio's reads) never reach an exported
 * function. For those the recorder patches the syscall instruction of
 * libc's wrappers, one site at a time as the program first runs it, into
 * a jump to a stub in this library's stub area, which enters
 * repro_site_syscall below (core/patch/syscall_sites.h says which sites
 * qualify and how a stub looks).
 *
 * Freestanding: no libc call that could make a syscall or take a lock
 * (only __errno_location, to report failures as libc would), its own
 * syscall instructions, no stack protector, no red zone (the untraced
 * syscall is reached by a call from inline assembly). Anything it cannot
 * do safely goes to the slow path: the same syscall, traced as before. */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "core/fastpath/fastpath_abi.h"

#define EXPORT __attribute__((visibility("default")))

/* The few constants of <sys/mman.h>, <sys/stat.h> and <fcntl.h> used here;
 * those headers declare libc functions this file must not call. */
#define FP_PROT_READ 0x1
#define FP_PROT_WRITE 0x2
#define FP_PROT_EXEC 0x4
#define FP_MAP_PRIVATE 0x02
#define FP_MAP_ANONYMOUS 0x20
#define FP_MAP_FIXED_NOREPLACE 0x100000
#define FP_S_IFMT 0170000
#define FP_S_IFREG 0100000
#define FP_S_IFDIR 0040000
#define FP_S_IFSOCK 0140000
#define FP_PAGE_BYTES 4096
/* struct stat on x86-64: 144 bytes, st_mode at offset 24. */
#define FP_STAT_BYTES 144
#define FP_STAT_MODE_OFFSET 24
#define FP_STAT_DEV_INDEX 0 /* st_dev, the first u64 */
#define FP_STAT_INO_INDEX 1 /* st_ino, the second */
#define FP_STATX_BYTES 256
#define FP_EFAULT 14
#define FP_ENOENT 2
#define FP_ENOTDIR 20

extern int* __errno_location(void);
/* libc's own read and pread64, for the reads the fast path leaves alone:
 * they are cancellation points (pthread_cancel of a thread blocked in a
 * pipe read acts only inside libc's syscall wrapper), which a raw syscall
 * here would not be. */
extern long __read(int fd, void* buf, unsigned long count);
extern long __pread64(int fd, void* buf, unsigned long count, long offset);
extern int __close(int fd);
/* And libc's write and pwrite64, for the same reason (a pipe write may
 * block). writev and pwritev have no such name: libc's own reach the fast
 * path through their patched syscall sites only. */
extern long __write(int fd, const void* buf, unsigned long count);
extern long __pwrite64(int fd, const void* buf, unsigned long count, long offset);
extern int __openat64_2(int dirfd, const char* path, int flags);
extern int __fcntl(int fd, int command, ...);

static long traced_syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  long result;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "0"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory", "cc");
  return result;
}

/* The instruction at REPRO_FASTPATH_PAGE_ADDRESS: no ptrace stop while
 * recording, a stop at the replayer during replay. */
static long untraced_syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6) {
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  long result;
  __asm__ volatile("call *%[entry]"
                   : "=a"(result)
                   : "0"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9),
                     [entry] "r"(REPRO_FASTPATH_PAGE_ADDRESS)
                   : "rcx", "r11", "memory", "cc");
  return result;
}

static int is_error(long result) { return result < 0 && result > -4096; }

static long libc_result(long result) {
  if (is_error(result)) {
    *__errno_location() = (int)-result;
    return -1;
  }
  return result;
}

/* The code a patched syscall site reaches (fastpath_abi.h): one entry per
 * kind of compare the site's `syscall` was followed by, 128 bytes apart,
 * then the stub area the recorder writes one stub per site into. A stub
 * moves rsp below the red zone and 8 more, stores the address after the
 * site's compare there as a return address, and jumps to its entry. The
 * entry saves the argument registers, calls repro_site_syscall with them
 * (number first), restores them, makes the compare on the result and
 * returns past the site with `ret $128`, which also pops the red zone's
 * room. Its unwind table says so, so a backtrace from inside the call goes
 * on into libc. rcx and r11 come back changed, as a syscall leaves them;
 * this file uses no SSE register (-mgeneral-regs-only), so no other
 * register does. */
long repro_site_syscall(const long* registers);
void repro_record_published(void);

#define REPRO_SITE_ENTRY(compare)                                          \
  "  .balign 128\n"                                                       \
  "  .cfi_startproc\n"                                                    \
  "  .cfi_def_cfa_offset 136\n"                                           \
  "  .cfi_offset 16, -136\n"                                              \
  "  pushq %r9\n  .cfi_adjust_cfa_offset 8\n"                            \
  "  pushq %r8\n  .cfi_adjust_cfa_offset 8\n"                            \
  "  pushq %r10\n  .cfi_adjust_cfa_offset 8\n"                           \
  "  pushq %rdx\n  .cfi_adjust_cfa_offset 8\n"                           \
  "  pushq %rsi\n  .cfi_adjust_cfa_offset 8\n"                           \
  "  pushq %rdi\n  .cfi_adjust_cfa_offset 8\n"                           \
  "  pushq %rax\n  .cfi_adjust_cfa_offset 8\n"                           \
  "  pushq %rbx\n  .cfi_adjust_cfa_offset 8\n  .cfi_rel_offset %rbx, 0\n" \
  "  movq %rsp, %rbx\n  .cfi_def_cfa_register %rbx\n"                    \
  "  leaq 8(%rsp), %rdi\n"                                                \
  "  andq $-16, %rsp\n"                                                   \
  "  call repro_site_syscall\n"                                           \
  "  movq %rbx, %rsp\n  .cfi_def_cfa_register %rsp\n"                    \
  "  popq %rbx\n  .cfi_adjust_cfa_offset -8\n  .cfi_restore %rbx\n"      \
  "  leaq 8(%rsp), %rsp\n  .cfi_adjust_cfa_offset -8\n"                  \
  "  popq %rdi\n  .cfi_adjust_cfa_offset -8\n"                           \
  "  popq %rsi\n  .cfi_adjust_cfa_offset -8\n"                           \
  "  popq %rdx\n  .cfi_adjust_cfa_offset -8\n"                           \
  "  popq %r10\n  .cfi_adjust_cfa_offset -8\n"                           \
  "  popq %r8\n  .cfi_adjust_cfa_offset -8\n"                            \
  "  popq %r9\n  .cfi_adjust_cfa_offset -8\n"                            \
  "  " compare "\n"                                                       \
  "  ret $128\n"                                                          \
  "  .cfi_endproc\n"

__asm__(".pushsection .text.repro_sites,\"ax\",@progbits\n"
        "  .balign 4096\n"
        "  .globl repro_site_entries\n"
        "  .hidden repro_site_entries\n"
        "repro_site_entries:\n"
        REPRO_SITE_ENTRY("cmpq $-4096, %rax")
        REPRO_SITE_ENTRY("cmpq $-4095, %rax")
        REPRO_SITE_ENTRY("cmpl $-4096, %eax")
        REPRO_SITE_ENTRY("cmpl $-4095, %eax")
        "  .balign 4096\n"
        "  .globl repro_stub_area\n"
        "  .hidden repro_stub_area\n"
        "repro_stub_area:\n"
        "  .fill 65536, 1, 0xcc\n"
        ".popsection\n");
extern const char repro_site_entries[];
extern const char repro_stub_area[];
_Static_assert(REPRO_FASTPATH_STUB_AREA_BYTES == 65536u, "the .fill above");

/* Set once the page is in place; read-only afterwards. */
static int page_ready;
/* Set for good once the program installs a seccomp filter of its own:
 * its ERRNO or TRAP answers act before repro's filter, so during replay
 * such a syscall would never stop at the replayer to be answered from
 * the trace. From then on every syscall takes the slow path. */
static volatile int own_filter_installed;

/* Filled in by the recorder (REPRO_FASTPATH_OP_WRITE_EXCLUSIONS) before
 * the program's own code runs; all zeros (no write on the fast path)
 * without one. */
static struct repro_fastpath_write_exclusions write_exclusions;

#define DISABLED ((struct repro_fastpath_header*)1)
static __thread struct repro_fastpath_header* thread_buffer
    __attribute__((tls_model("initial-exec")));

/* An exported function that found its call not for the fast path passes
 * it on to libc's own (a cancellation point, as the call is), whose
 * syscall site may be patched: the call it names here then goes from that
 * site straight to the slow path instead of asking fstat once more. A
 * signal handler's call in between may take the mark away, which only
 * costs that second fstat. */
static __thread long slow_call_number __attribute__((tls_model("initial-exec"))) = -1;
static __thread long slow_call_fd __attribute__((tls_model("initial-exec")));

static void mark_slow_call(long number, long fd) {
  slow_call_fd = fd;
  slow_call_number = number;
}

/* Whether the call is the one mark_slow_call named (and forgets it). */
static int marked_slow_call(long number, long fd) {
  if (slow_call_number != number || slow_call_fd != fd) {
    return 0;
  }
  slow_call_number = -1;
  return 1;
}

/* libc's `call`, for the exported function whose syscall `number` on `fd`
 * takes the slow path. */
#define SLOW_CALL(number, fd, call)   \
  ({                                  \
    mark_slow_call(number, fd);       \
    long slow_result_ = (long)(call); \
    slow_call_number = -1;            \
    slow_result_;                     \
  })

__attribute__((constructor)) static void map_syscall_page(void) {
  long address = traced_syscall(SYS_mmap, (long)REPRO_FASTPATH_PAGE_ADDRESS, FP_PAGE_BYTES,
                                FP_PROT_READ | FP_PROT_WRITE,
                                FP_MAP_PRIVATE | FP_MAP_ANONYMOUS | FP_MAP_FIXED_NOREPLACE, -1, 0);
  if (address != (long)REPRO_FASTPATH_PAGE_ADDRESS) {
    if (!is_error(address)) {
      /* A kernel before 4.17 took the address as a hint only. */
      traced_syscall(SYS_munmap, address, FP_PAGE_BYTES, 0, 0, 0, 0);
    }
    return;
  }
  volatile unsigned char* code = (volatile unsigned char*)REPRO_FASTPATH_PAGE_ADDRESS;
  code[0] = 0x0f; /* syscall */
  code[1] = 0x05;
  code[2] = 0xc3; /* ret */
  if (traced_syscall(SYS_mprotect, address, FP_PAGE_BYTES, FP_PROT_READ | FP_PROT_EXEC, 0, 0,
                     0) == 0) {
    page_ready = 1;
    traced_syscall(REPRO_FASTPATH_CONTROL_SYSCALL, REPRO_FASTPATH_OP_SYSCALL_STUBS,
                   (long)repro_stub_area, REPRO_FASTPATH_STUB_AREA_BYTES,
                   (long)repro_site_entries, (long)repro_record_published, 0);
    traced_syscall(REPRO_FASTPATH_CONTROL_SYSCALL, REPRO_FASTPATH_OP_WRITE_EXCLUSIONS,
                   (long)&write_exclusions, sizeof write_exclusions, 0, 0, 0);
  }
  /* For replay (fastpath_abi.h); without it replay answers at stops. */
  long queue = traced_syscall(SYS_mmap, (long)REPRO_FASTPATH_REPLAY_QUEUE_ADDRESS,
                              REPRO_FASTPATH_REPLAY_QUEUE_BYTES, FP_PROT_READ | FP_PROT_WRITE,
                              FP_MAP_PRIVATE | FP_MAP_ANONYMOUS | FP_MAP_FIXED_NOREPLACE, -1, 0);
  if (!is_error(queue) && queue != (long)REPRO_FASTPATH_REPLAY_QUEUE_ADDRESS) {
    traced_syscall(SYS_munmap, queue, REPRO_FASTPATH_REPLAY_QUEUE_BYTES, 0, 0, 0, 0);
  }
}

/* The calling thread's buffer, mapped and registered with the recorder on
 * first use; NULL if the fast path is off for it (no recorder, no page). */
static struct repro_fastpath_header* buffer(void) {
  struct repro_fastpath_header* header = thread_buffer;
  if (header == DISABLED) {
    return NULL;
  }
  if (header != NULL) {
    return header;
  }
  if (!page_ready) {
    /* Called from another library's constructor, before this one's made
     * the page (libselinux's calls access): slow now, asked again later. */
    return NULL;
  }
  thread_buffer = DISABLED;
  long address = traced_syscall(SYS_mmap, 0, REPRO_FASTPATH_BUFFER_BYTES,
                                FP_PROT_READ | FP_PROT_WRITE, FP_MAP_PRIVATE | FP_MAP_ANONYMOUS,
                                -1, 0);
  if (is_error(address)) {
    return NULL;
  }
  header = (struct repro_fastpath_header*)address;
  header->magic = REPRO_FASTPATH_BUFFER_MAGIC;
  header->busy = 0;
  header->capacity = REPRO_FASTPATH_BUFFER_BYTES;
  header->end_offset = sizeof(struct repro_fastpath_header);
  if (traced_syscall(REPRO_FASTPATH_CONTROL_SYSCALL, REPRO_FASTPATH_OP_REGISTER, address, 0, 0, 0,
                     0) != 0) {
    traced_syscall(SYS_munmap, address, REPRO_FASTPATH_BUFFER_BYTES, 0, 0, 0, 0);
    return NULL;
  }
  thread_buffer = header;
  return header;
}

/* Called each time a record is published, past its busy mark: where the
 * recorder sets a breakpoint to run a thread out of a logged call (a signal
 * waits till then), instead of stepping through its output's copy. */
__attribute__((noinline)) void repro_record_published(void) { __asm__ volatile(""); }

/* How many of the bytes at the output address a syscall wrote. */
enum output_kind {
  OUTPUT_NONE,
  OUTPUT_RESULT_BYTES, /* as many as the result says (read) */
  OUTPUT_WHOLE_ON_SUCCESS, /* all `output_capacity` when the result is 0 (fstat) */
  OUTPUT_WHOLE_UNLESS_ERROR, /* all `output_capacity` when the result is 0 or more (poll) */
  OUTPUT_EPOLL_EVENTS /* result events of FP_EPOLL_EVENT_BYTES (epoll_wait) */
};
/* struct epoll_event on x86-64: packed, u32 events then u64 data. */
#define FP_EPOLL_EVENT_BYTES 12
/* struct pollfd: int fd, short events, short revents. */
#define FP_POLLFD_BYTES 8

static uint32_t round_up8(uint32_t n) { return (n + 7u) & ~7u; }

/* memcpy, which this library cannot call: `rep movsb`, which copies a
 * read's 4 KiB several times faster than a byte loop (one of the costs of
 * a logged read). A signal may interrupt it, and the recorder may run the
 * thread out of it (the record is busy). */
static void copy_bytes(char* to, const char* from, uint32_t count) {
  unsigned long n = count;
  __asm__ volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(n) : : "memory");
}

/* The length of string `s`, at most `limit`. */
static uint32_t bounded_length(const char* s, uint32_t limit) {
  uint32_t n = 0;
  while (n < limit && s[n] != '\0') {
    ++n;
  }
  return n;
}

#define FP_ENODATA 61
#define FP_ERANGE 34
#define FP_EOPNOTSUPP 95

/* Whether an extended attribute call got as far as reading its name: the
 * kernel looks the path or descriptor up first, and a name never read may
 * not be readable here either. */
static int xattr_name_was_read(long result) {
  return result >= 0 || result == -FP_ENODATA || result == -FP_ERANGE ||
         result == -FP_EOPNOTSUPP;
}

/* Makes the syscall without a stop and logs it, with the strings it was
 * given: argument `path_arg` (-1: none), and `name_arg` (-1: none), an
 * extended attribute's name, after the path. The caller has checked that
 * it cannot block and that output_capacity is within
 * REPRO_FASTPATH_MAX_OUTPUT_BYTES. Returns the raw result (-errno). */
static long logged_syscall_with_strings(struct repro_fastpath_header* header, long number,
                                        long a1, long a2, long a3, long a4, long a5, long a6,
                                        uint64_t output_address, uint32_t output_capacity,
                                        enum output_kind kind, int path_arg, int name_arg) {
  header->busy = 1;
  __asm__ volatile("" ::: "memory");
  uint32_t input_capacity = path_arg >= 0 ? REPRO_FASTPATH_MAX_INPUT_BYTES : 0;
  if (name_arg >= 0) {
    input_capacity += 1 + REPRO_FASTPATH_MAX_SECOND_INPUT_BYTES;
  }
  uint32_t needed = REPRO_FASTPATH_RECORD_HEADER_BYTES + round_up8(output_capacity + input_capacity);
  if (header->end_offset + needed > header->capacity) {
    /* The recorder drains the buffer at this stop and sets end_offset
     * back to the start itself: a reset made here, after the call, would
     * leave a window in which a stop sees records drained already. */
    traced_syscall(REPRO_FASTPATH_CONTROL_SYSCALL, REPRO_FASTPATH_OP_FLUSH, 0, 0, 0, 0, 0);
  }
  long result = untraced_syscall(number, a1, a2, a3, a4, a5, a6);
  uint32_t output_bytes = 0;
  if (kind == OUTPUT_RESULT_BYTES && result > 0) {
    output_bytes = (uint64_t)result < output_capacity ? (uint32_t)result : output_capacity;
  } else if ((kind == OUTPUT_WHOLE_ON_SUCCESS && result == 0) ||
             (kind == OUTPUT_WHOLE_UNLESS_ERROR && result >= 0)) {
    output_bytes = output_capacity;
  } else if (kind == OUTPUT_EPOLL_EVENTS && result > 0) {
    uint64_t bytes = (uint64_t)result * FP_EPOLL_EVENT_BYTES;
    output_bytes = bytes < output_capacity ? (uint32_t)bytes : output_capacity;
  }
  /* The path, once the kernel has read it (EFAULT: it could not, and
   * neither could this). One thread runs at a time: nobody changed it. */
  const char* path = NULL;
  const char* name = NULL;
  uint32_t path_bytes = 0;
  uint32_t name_bytes = 0;
  long args[6] = {a1, a2, a3, a4, a5, a6};
  if (path_arg >= 0 && result != -FP_EFAULT) {
    path = (const char*)args[path_arg];
    path_bytes = bounded_length(path, REPRO_FASTPATH_MAX_INPUT_BYTES);
  }
  if (name_arg >= 0 && xattr_name_was_read(result)) {
    name = (const char*)args[name_arg];
    name_bytes = bounded_length(name, REPRO_FASTPATH_MAX_SECOND_INPUT_BYTES);
  }
  uint32_t separator_bytes = path != NULL && name != NULL ? 1 : 0;
  uint32_t input_bytes = path_bytes + separator_bytes + name_bytes;
  char* at = (char*)header + header->end_offset;
  struct repro_fastpath_record* record = (struct repro_fastpath_record*)at;
  record->record_bytes = REPRO_FASTPATH_RECORD_HEADER_BYTES + round_up8(output_bytes + input_bytes);
  record->syscall_number = (int32_t)number;
  record->args[0] = (uint64_t)a1;
  record->args[1] = (uint64_t)a2;
  record->args[2] = (uint64_t)a3;
  record->args[3] = (uint64_t)a4;
  record->args[4] = (uint64_t)a5;
  record->args[5] = (uint64_t)a6;
  record->result = result;
  record->output_address = output_address;
  record->output_bytes = output_bytes;
  record->input_bytes = (uint16_t)input_bytes;
  /* A name alone goes first, as the only input; after a path, as the
   * second one, after a NUL. */
  record->input_arg = (uint8_t)(path != NULL ? path_arg : name != NULL ? name_arg : 0);
  record->second_input_arg = (uint8_t)(path != NULL && name != NULL ? name_arg : 0);
  volatile char* out = at + REPRO_FASTPATH_RECORD_HEADER_BYTES;
  copy_bytes((char*)out, (const char*)output_address, output_bytes);
  uint32_t i = output_bytes;
  for (uint32_t j = 0; j < path_bytes; ++i, ++j) {
    out[i] = path[j];
  }
  if (separator_bytes != 0) {
    out[i++] = '\0';
  }
  for (uint32_t j = 0; j < name_bytes; ++i, ++j) {
    out[i] = name[j];
  }
  for (; i < round_up8(output_bytes + input_bytes); ++i) {
    out[i] = 0;
  }
  /* Published last: a stop before this line leaves the record unseen. */
  __asm__ volatile("" ::: "memory");
  header->end_offset += record->record_bytes;
  __asm__ volatile("" ::: "memory");
  header->busy = 0;
  repro_record_published();
  return result;
}

static long logged_syscall(struct repro_fastpath_header* header, long number, long a1, long a2,
                           long a3, long a4, long a5, long a6, uint64_t output_address,
                           uint32_t output_capacity, enum output_kind kind) {
  return logged_syscall_with_strings(header, number, a1, a2, a3, a4, a5, a6, output_address,
                                     output_capacity, kind, -1, -1);
}

/* The thread's buffer, unless a record is being written into it (this is
 * a signal handler that interrupted the library). */
static struct repro_fastpath_header* usable_buffer(void) {
  if (own_filter_installed) {
    return NULL;
  }
  struct repro_fastpath_header* header = buffer();
  return header != NULL && !*(volatile uint32_t*)&header->busy ? header : NULL;
}

static long id_syscall(long number) {
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL) {
    return traced_syscall(number, 0, 0, 0, 0, 0, 0);
  }
  return logged_syscall(header, number, 0, 0, 0, 0, 0, 0, 0, 0, OUTPUT_NONE);
}

/* What the fast path asks of a descriptor before a call on it. */
struct fp_file {
  uint32_t type;   /* st_mode & S_IFMT */
  uint64_t device; /* encoded as struct stat's st_dev */
  uint64_t inode;
};

/* statx(2) on x86-64: the fields of struct statx the probe reads. */
#define FP_AT_EMPTY_PATH 0x1000
#define FP_STATX_TYPE 0x1u
#define FP_STATX_INO 0x100u
#define FP_STATX_SIZE 0x200u
#define FP_STATX_MODE_OFFSET 0x1c
#define FP_STATX_INO_OFFSET 0x20
#define FP_STATX_DEV_MAJOR_OFFSET 0x88
#define FP_STATX_DEV_MINOR_OFFSET 0x8c
#define FP_EPERM 1
#define FP_ENOSYS 38

/* Set once statx answered ENOSYS (a kernel before 4.11) or EPERM (a
 * container's seccomp policy): the probe uses fstat from then on. */
static int statx_refused;

static uint32_t stat_file_type(const uint64_t stat_buffer[FP_STAT_BYTES / 8]) {
  return *(const uint32_t*)((const char*)stat_buffer + FP_STAT_MODE_OFFSET) & FP_S_IFMT;
}

/* st_dev as glibc's makedev builds it from a major and a minor number. */
static uint64_t device_number(uint64_t major, uint64_t minor) {
  return ((major & 0xfffff000u) << 32) | ((major & 0xfffu) << 8) |
         ((minor & 0xffffff00u) << 12) | (minor & 0xffu);
}

/* Learns what `fd` is, with a syscall logged too: during replay the probe
 * must see the same answer. statx asking for no time stamps, because on a
 * kernel with multigrain time stamps (6.13 on) a stat that reads them
 * makes the file's next write update them finely, dirtying the inode on
 * every write: an fstat before each 4 KiB pwrite doubled its cost. The
 * recorder reads the file's identity and size from this record too
 * (tracer/record_fast_path.cc). Returns 0 or the negative errno. */
static long logged_probe(struct repro_fastpath_header* header, long fd, struct fp_file* file) {
  if (!statx_refused) {
    uint64_t statx_buffer[FP_STATX_BYTES / 8];
    long result = logged_syscall(header, SYS_statx, fd, (long)"", FP_AT_EMPTY_PATH,
                                 FP_STATX_TYPE | FP_STATX_INO | FP_STATX_SIZE,
                                 (long)statx_buffer, 0, (uint64_t)statx_buffer, FP_STATX_BYTES,
                                 OUTPUT_WHOLE_ON_SUCCESS);
    if (result == 0) {
      const char* bytes = (const char*)statx_buffer;
      file->type = *(const uint16_t*)(bytes + FP_STATX_MODE_OFFSET) & FP_S_IFMT;
      file->inode = *(const uint64_t*)(bytes + FP_STATX_INO_OFFSET);
      file->device = device_number(*(const uint32_t*)(bytes + FP_STATX_DEV_MAJOR_OFFSET),
                                   *(const uint32_t*)(bytes + FP_STATX_DEV_MINOR_OFFSET));
      return 0;
    }
    if (result != -FP_ENOSYS && result != -FP_EPERM) {
      return result;
    }
    statx_refused = 1;
  }
  uint64_t stat_buffer[FP_STAT_BYTES / 8];
  long result = logged_syscall(header, SYS_fstat, fd, (long)stat_buffer, 0, 0, 0, 0,
                               (uint64_t)stat_buffer, FP_STAT_BYTES, OUTPUT_WHOLE_ON_SUCCESS);
  if (result == 0) {
    file->type = stat_file_type(stat_buffer);
    file->device = stat_buffer[FP_STAT_DEV_INDEX];
    file->inode = stat_buffer[FP_STAT_INO_INDEX];
  }
  return result;
}

/* The file type of `fd` (its st_mode & S_IFMT), 0 if the probe fails. */
static uint32_t file_type(struct repro_fastpath_header* header, long fd) {
  struct fp_file file;
  return logged_probe(header, fd, &file) == 0 ? file.type : 0;
}

#define FP_F_GETFL 3
#define FP_O_NONBLOCK 04000
#define FP_MSG_DONTWAIT 0x40

/* Whether a call on socket `fd` cannot block: it asks not to wait
 * (MSG_DONTWAIT in `message_flags`), or the socket is non-blocking (its
 * flags, an fcntl logged too, tell). A call that may block stays on the
 * slow path, so that the scheduler sees it wait. */
static int socket_never_waits(struct repro_fastpath_header* header, long fd,
                              long message_flags) {
  if (message_flags & FP_MSG_DONTWAIT) {
    return 1;
  }
  long flags = logged_syscall(header, SYS_fcntl, fd, FP_F_GETFL, 0, 0, 0, 0, 0, 0, OUTPUT_NONE);
  return flags >= 0 && (flags & FP_O_NONBLOCK);
}

#define FP_S_IFIFO 0010000
#define FP_RWF_NOWAIT 0x8
#define FP_EAGAIN 11

/* Whether a file of `type` is a pipe the caller can take the fast path
 * for (it passed `pipe`, and the recorder allows pipes), noted in *pipe. */
static int is_fast_pipe(uint32_t type, int* pipe) {
  if (pipe == NULL || type != FP_S_IFIFO || !write_exclusions.pipes_nowait) {
    return 0;
  }
  *pipe = 1;
  return 1;
}

/* struct iovec */
struct fp_iovec {
  uint64_t base;
  uint64_t length;
};

/* A read (SYS_preadv2) or write (SYS_pwritev2) of `count` bytes at `buf`
 * on pipe `fd` that does not wait: RWF_NOWAIT at the current position.
 * Its result, -EAGAIN where the call would have waited for the other end,
 * -EOPNOTSUPP where the kernel does not take RWF_NOWAIT for this pipe (a
 * FIFO, on some kernels): then the slow path makes it (pipe_call_refused),
 * at a stop. A write may also take only part (a full pipe), and the slow
 * path the rest: what a write that does not wait cannot do, a blocking one
 * on a pipe must. */
static long pipe_call(struct repro_fastpath_header* header, long number, long fd, long buf,
                      unsigned long count) {
  struct fp_iovec iov = {(uint64_t)buf, count};
  int reading = number == SYS_preadv2;
  return logged_syscall(header, number, fd, (long)&iov, 1, -1, 0, FP_RWF_NOWAIT,
                        reading ? (uint64_t)buf : 0, reading ? (uint32_t)count : 0,
                        reading ? OUTPUT_RESULT_BYTES : OUTPUT_NONE);
}

/* Whether pipe_call's `result` leaves the whole call to the slow path. */
static int pipe_call_refused(long result) {
  return result == -FP_EAGAIN || result == -FP_EOPNOTSUPP;
}

/* How many of a pipe write's `count` bytes the fast part (pipe_call's
 * result `done`) left to the slow path: 0 when it wrote them all or
 * failed otherwise. */
static unsigned long pipe_write_left(long done, unsigned long count) {
  if (pipe_call_refused(done)) {
    return count;
  }
  return done >= 0 && (unsigned long)done < count ? count - (unsigned long)done : 0;
}

/* The result of a pipe write whose first `done` bytes went on the fast
 * path and whose rest gave `rest` at the slow path (negative: an error,
 * which after some bytes written leaves a short write). */
static long pipe_write_total(unsigned long done, long rest) {
  if (done == 0) {
    return rest;
  }
  return rest < 0 ? (long)done : (long)done + rest;
}

/* The buffer for a write to `fd` on the fast path; NULL for the slow
 * path. A regular file (whose writes never wait for another process),
 * not of /proc, in a process that maps no file shared; a socket whose
 * writes cannot block (with `message_flags`, send's); or, for a caller
 * that passes `pipe`, a pipe (then *pipe is 1: see pipe_call). Never the
 * recording's own stdout or stderr. */
static struct repro_fastpath_header* write_buffer_of(long fd, long message_flags, int* pipe) {
  if (!write_exclusions.known) {
    return NULL;
  }
  struct repro_fastpath_header* header = usable_buffer();
  struct fp_file file;
  if (header == NULL || logged_probe(header, fd, &file) != 0) {
    return NULL;
  }
  uint32_t type = file.type;
  uint64_t device = file.device;
  uint64_t inode = file.inode;
  for (uint32_t i = 0; i < write_exclusions.output_count && i < REPRO_FASTPATH_MAX_OUTPUT_FILES;
       ++i) {
    if (device == write_exclusions.output_device[i] && inode == write_exclusions.output_inode[i]) {
      return NULL;
    }
  }
  if (type == FP_S_IFREG) {
    int mapped = *(volatile uint32_t*)&write_exclusions.shared_file_mapped;
    return mapped || device == write_exclusions.procfs_device ? NULL : header;
  }
  if (type == FP_S_IFSOCK && socket_never_waits(header, fd, message_flags)) {
    return header;
  }
  return is_fast_pipe(type, pipe) ? header : NULL;
}

static struct repro_fastpath_header* write_buffer(long fd) { return write_buffer_of(fd, 0, NULL); }

/* A write on the fast path: its result is all the trace needs (replay
 * answers it without writing anything). */
static long logged_write(struct repro_fastpath_header* header, long number, long a1, long a2,
                         long a3, long a4, long a5) {
  return logged_syscall(header, number, a1, a2, a3, a4, a5, 0, 0, 0, OUTPUT_NONE);
}

/* The buffer for a read of `count` bytes from `fd` on the fast path: a
 * regular file, with `sockets` a socket whose reads cannot block (with
 * `message_flags`, recv's), or for a caller that passes `pipe` a pipe
 * (then *pipe is 1: see pipe_call); at most
 * REPRO_FASTPATH_MAX_OUTPUT_BYTES; NULL for the slow path. */
static struct repro_fastpath_header* read_buffer_of(long fd, unsigned long count, int sockets,
                                                    long message_flags, int* pipe) {
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL || count > REPRO_FASTPATH_MAX_OUTPUT_BYTES) {
    return NULL;
  }
  uint32_t type = file_type(header, fd);
  if (type == FP_S_IFREG ||
      (sockets && type == FP_S_IFSOCK && socket_never_waits(header, fd, message_flags))) {
    return header;
  }
  return is_fast_pipe(type, pipe) ? header : NULL;
}

/* For read (regular files, sockets and, with `pipe`, pipes) and pread64
 * (regular files). */
static struct repro_fastpath_header* read_buffer(long number, long fd, unsigned long count,
                                                 int* pipe) {
  return read_buffer_of(fd, count, number == SYS_read, 0, number == SYS_read ? pipe : NULL);
}

static long logged_read(struct repro_fastpath_header* header, long number, long fd, long address,
                        long count, long offset) {
  return logged_syscall(header, number, fd, address, count, offset, 0, 0, (uint64_t)address,
                        (uint32_t)count, OUTPUT_RESULT_BYTES);
}

/* clock_gettime and gettimeofday: with rdtsc trapped, the vDSO's clock
 * read costs a fault the recorder emulates; one logged syscall is cheaper. */
static long clock_syscall(long number, long a1, long a2, uint64_t output_address) {
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL || (a2 != 0 && number == SYS_gettimeofday)) {
    return traced_syscall(number, a1, a2, 0, 0, 0, 0);
  }
  return logged_syscall(header, number, a1, a2, 0, 0, 0, 0, output_address, 16,
                        OUTPUT_WHOLE_ON_SUCCESS);
}

/* Syscalls that never block, whose only output is `output_bytes` at
 * `output_address` on success: lseek, access, the stat family. */
static long plain_syscall(long number, long a1, long a2, long a3, long a4,
                          uint64_t output_address, uint32_t output_bytes) {
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL) {
    return traced_syscall(number, a1, a2, a3, a4, 0, 0);
  }
  return logged_syscall(header, number, a1, a2, a3, a4, 0, 0, output_address, output_bytes,
                        output_bytes != 0 ? OUTPUT_WHOLE_ON_SUCCESS : OUTPUT_NONE);
}

#define FP_AT_FDCWD -100
#define FP_AT_SYMLINK_NOFOLLOW 0x100

EXPORT int getpid(void) { return (int)id_syscall(SYS_getpid); }
EXPORT int getppid(void) { return (int)id_syscall(SYS_getppid); }
EXPORT int gettid(void) { return (int)id_syscall(SYS_gettid); }

EXPORT long read(int fd, void* buf, unsigned long count) {
  int pipe = 0;
  struct repro_fastpath_header* header = read_buffer(SYS_read, fd, count, &pipe);
  if (header != NULL && pipe) {
    long result = pipe_call(header, SYS_preadv2, fd, (long)buf, count);
    if (!pipe_call_refused(result)) {
      return libc_result(result);
    }
    header = NULL;
  }
  if (header == NULL) {
    return SLOW_CALL(SYS_read, fd, __read(fd, buf, count));
  }
  return libc_result(logged_read(header, SYS_read, fd, (long)buf, (long)count, 0));
}

EXPORT long pread64(int fd, void* buf, unsigned long count, long offset) {
  struct repro_fastpath_header* header = read_buffer(SYS_pread64, fd, count, NULL);
  if (header == NULL) {
    return SLOW_CALL(SYS_pread64, fd, __pread64(fd, buf, count, offset));
  }
  return libc_result(logged_read(header, SYS_pread64, fd, (long)buf, (long)count, offset));
}

EXPORT long pread(int fd, void* buf, unsigned long count, long offset) {
  return pread64(fd, buf, count, offset);
}

EXPORT long write(int fd, const void* buf, unsigned long count) {
  int pipe = 0;
  struct repro_fastpath_header* header = write_buffer_of(fd, 0, &pipe);
  if (header != NULL && pipe) {
    long done = pipe_call(header, SYS_pwritev2, fd, (long)buf, count);
    unsigned long left = pipe_write_left(done, count);
    if (left == 0) {
      return libc_result(done);
    }
    unsigned long written = count - left;
    long rest = SLOW_CALL(SYS_write, fd, __write(fd, (const char*)buf + written, left));
    return pipe_write_total(written, rest);  /* errno is libc's when rest failed */
  }
  if (header == NULL) {
    return SLOW_CALL(SYS_write, fd, __write(fd, buf, count));
  }
  return libc_result(logged_write(header, SYS_write, fd, (long)buf, (long)count, 0, 0));
}

EXPORT long pwrite64(int fd, const void* buf, unsigned long count, long offset) {
  struct repro_fastpath_header* header = write_buffer(fd);
  if (header == NULL) {
    return SLOW_CALL(SYS_pwrite64, fd, __pwrite64(fd, buf, count, offset));
  }
  return libc_result(logged_write(header, SYS_pwrite64, fd, (long)buf, (long)count, offset, 0));
}

EXPORT long pwrite(int fd, const void* buf, unsigned long count, long offset) {
  return pwrite64(fd, buf, count, offset);
}

EXPORT int clock_gettime(int clock, void* ts) {
  return (int)libc_result(clock_syscall(SYS_clock_gettime, clock, (long)ts, (uint64_t)ts));
}

EXPORT int gettimeofday(void* tv, void* tz) {
  if (tv == NULL) {
    return (int)libc_result(traced_syscall(SYS_gettimeofday, 0, (long)tz, 0, 0, 0, 0));
  }
  return (int)libc_result(clock_syscall(SYS_gettimeofday, (long)tv, (long)tz, (uint64_t)tv));
}

EXPORT long lseek(int fd, long offset, int whence) {
  return libc_result(plain_syscall(SYS_lseek, fd, offset, whence, 0, 0, 0));
}
EXPORT long lseek64(int fd, long offset, int whence) { return lseek(fd, offset, whence); }

/* Syscalls given a path that never block (the stat family, access): their
 * record carries the path too, which the trace keeps as the syscall's
 * input (dump, report --effects and the export show it), as on the slow
 * path. Only the output on success is logged. */
static long path_syscall(long number, long a1, long a2, long a3, long a4, long a5, int path_arg,
                         uint64_t output_address, uint32_t output_bytes) {
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL) {
    return traced_syscall(number, a1, a2, a3, a4, a5, 0);
  }
  return logged_syscall_with_strings(header, number, a1, a2, a3, a4, a5, 0, output_address,
                                     output_bytes,
                                     output_bytes != 0 ? OUTPUT_WHOLE_ON_SUCCESS : OUTPUT_NONE,
                                     path_arg, -1);
}

EXPORT int access(const char* path, int mode) {
  if (path == NULL) {
    return (int)libc_result(traced_syscall(SYS_access, (long)path, mode, 0, 0, 0, 0));
  }
  return (int)libc_result(path_syscall(SYS_access, (long)path, mode, 0, 0, 0, 0, 0, 0));
}

EXPORT int fstat(int fd, void* st) {
  return (int)libc_result(
      plain_syscall(SYS_fstat, fd, (long)st, 0, 0, (uint64_t)st, FP_STAT_BYTES));
}
EXPORT int fstat64(int fd, void* st) { return fstat(fd, st); }

EXPORT int fstatat(int dirfd, const char* path, void* st, int flags) {
  if (path == NULL) {
    return (int)libc_result(traced_syscall(SYS_newfstatat, dirfd, (long)path, (long)st, flags,
                                           0, 0));
  }
  return (int)libc_result(path_syscall(SYS_newfstatat, dirfd, (long)path, (long)st, flags, 0, 1,
                                       (uint64_t)st, FP_STAT_BYTES));
}
EXPORT int fstatat64(int dirfd, const char* path, void* st, int flags) {
  return fstatat(dirfd, path, st, flags);
}
EXPORT int stat(const char* path, void* st) { return fstatat(FP_AT_FDCWD, path, st, 0); }
EXPORT int stat64(const char* path, void* st) { return stat(path, st); }
EXPORT int lstat(const char* path, void* st) {
  return fstatat(FP_AT_FDCWD, path, st, FP_AT_SYMLINK_NOFOLLOW);
}
EXPORT int lstat64(const char* path, void* st) { return lstat(path, st); }

EXPORT int statx(int dirfd, const char* path, int flags, unsigned int mask, void* stx) {
  if (path == NULL) {
    return (int)libc_result(
        traced_syscall(SYS_statx, dirfd, (long)path, flags, mask, (long)stx, 0));
  }
  return (int)libc_result(path_syscall(SYS_statx, dirfd, (long)path, flags, mask, (long)stx, 1,
                                       (uint64_t)stx, FP_STATX_BYTES));
}

/* Reads of an extended attribute (ls -l asks two of every file: its
 * SELinux context, its ACL), which never block: the path (unless by
 * descriptor) and the name go into the record, the value out of it. A
 * value buffer larger than a record holds takes the slow path. */
static long xattr_syscall(long number, long target, const char* name, void* value,
                          unsigned long size, int by_path) {
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL || name == NULL || (by_path && target == 0) ||
      size > REPRO_FASTPATH_MAX_OUTPUT_BYTES) {
    return traced_syscall(number, target, (long)name, (long)value, (long)size, 0, 0);
  }
  return logged_syscall_with_strings(header, number, target, (long)name, (long)value, (long)size,
                                     0, 0, (uint64_t)value, (uint32_t)size, OUTPUT_RESULT_BYTES,
                                     by_path ? 0 : -1, 1);
}

EXPORT long getxattr(const char* path, const char* name, void* value, unsigned long size) {
  return libc_result(xattr_syscall(SYS_getxattr, (long)path, name, value, size, 1));
}
EXPORT long lgetxattr(const char* path, const char* name, void* value, unsigned long size) {
  return libc_result(xattr_syscall(SYS_lgetxattr, (long)path, name, value, size, 1));
}
EXPORT long fgetxattr(int fd, const char* name, void* value, unsigned long size) {
  return libc_result(xattr_syscall(SYS_fgetxattr, fd, name, value, size, 0));
}

#define FP_SEEK_CUR 1
#define FP_FD_LINK_BYTES 4096

/* close of a directory (find closes one at every step of its walk) or of a
 * regular file (tar closes every file it read), which never wait for
 * another process; the last close of a pipe or a socket may wake one, or
 * wait (SO_LINGER): those, and any other kind of file, take the slow path,
 * libc's close. Before a regular file's close the library logs where its
 * descriptor stands (lseek) and what /proc/self/fd/N names (readlinkat),
 * so that the recorder, draining the buffer after the descriptor is gone,
 * can still store the file's fast-path reads by reference
 * (tracer/record_fast_path.cc). */
static int closes_without_waiting(uint32_t type) {
  return type == FP_S_IFDIR || type == FP_S_IFREG;
}

static long logged_close(struct repro_fastpath_header* header, long fd, uint32_t type) {
  if (type == FP_S_IFREG) {
    logged_syscall(header, SYS_lseek, fd, 0, FP_SEEK_CUR, 0, 0, 0, 0, 0, OUTPUT_NONE);
    static const char prefix[] = "/proc/self/fd/";
    char link[sizeof prefix + 12];
    char digits[12];
    int n = 0;
    unsigned long value = (unsigned long)fd;
    do {
      digits[n++] = (char)('0' + value % 10);
      value /= 10;
    } while (value != 0 && n < (int)sizeof digits);
    size_t at = 0;
    for (; prefix[at] != 0; ++at) {
      link[at] = prefix[at];
    }
    while (n > 0) {
      link[at++] = digits[--n];
    }
    link[at] = 0;
    char target[FP_FD_LINK_BYTES];
    logged_syscall_with_strings(header, SYS_readlinkat, FP_AT_FDCWD, (long)link, (long)target,
                                sizeof target, 0, 0, (uint64_t)target, sizeof target,
                                OUTPUT_RESULT_BYTES, 1, -1);
  }
  return logged_syscall(header, SYS_close, fd, 0, 0, 0, 0, 0, 0, 0, OUTPUT_NONE);
}

EXPORT int close(int fd) {
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL) {
    return __close(fd);
  }
  uint32_t type = file_type(header, fd);
  if (!closes_without_waiting(type)) {
    return (int)SLOW_CALL(SYS_close, fd, __close(fd));
  }
  return (int)libc_result(logged_close(header, fd, type));
}

#define FP_O_CREAT 0100
#define FP_O_DIRECTORY 0200000
#define FP_O_TMPFILE_BIT 020000000

#define FP_O_ACCMODE 03
#define FP_O_TRUNC 01000
#define FP_O_NOFOLLOW 0400000

/* Whether openat(dirfd, path, flags) may take the fast path: an open of a
 * directory (find's walk opens each one so, as gnulib's fts does: nothing
 * but a directory opens then), or one for reading only, without O_TRUNC,
 * of what a logged fstatat of the path says is a regular file or a
 * directory outside /proc (tar and the compilers open every file they
 * read so), or is not there (a compiler looks for each header in every
 * directory of its search path; setlocale for its files). Neither
 * waits for another process, as the open of a FIFO would, nor has the
 * effects a device's open may have; and the recorder need not see it: a
 * file of /proc, which it must (a write to /proc/PID/mem changes memory),
 * opens at a stop. The file could change kind between the two calls only
 * by the hand of a process outside the recording. */
static int opens_without_waiting(struct repro_fastpath_header* header, long dirfd,
                                 const char* path, long flags) {
  if (path == NULL || (flags & (FP_O_CREAT | FP_O_TMPFILE_BIT))) {
    return 0;
  }
  if (flags & FP_O_DIRECTORY) {
    return 1;
  }
  if ((flags & (FP_O_ACCMODE | FP_O_TRUNC)) != 0 || !write_exclusions.known) {
    return 0;
  }
  uint64_t stat_buffer[FP_STAT_BYTES / 8];
  long at_flags = (flags & FP_O_NOFOLLOW) ? FP_AT_SYMLINK_NOFOLLOW : 0;
  long result = logged_syscall_with_strings(header, SYS_newfstatat, dirfd, (long)path,
                                            (long)stat_buffer, at_flags, 0, 0,
                                            (uint64_t)stat_buffer, FP_STAT_BYTES,
                                            OUTPUT_WHOLE_ON_SUCCESS, 1, -1);
  if (result == -FP_ENOENT || result == -FP_ENOTDIR) {
    return 1; /* nothing there: the open fails the same way */
  }
  uint32_t type = result == 0 ? stat_file_type(stat_buffer) : 0;
  return (type == FP_S_IFREG || type == FP_S_IFDIR) &&
         stat_buffer[FP_STAT_DEV_INDEX] != write_exclusions.procfs_device;
}

static long logged_open(struct repro_fastpath_header* header, long dirfd, const char* path,
                        long flags) {
  return logged_syscall_with_strings(header, SYS_openat, dirfd, (long)path, flags, 0, 0, 0, 0, 0,
                                     OUTPUT_NONE, 1, -1);
}

/* openat on the fast path where opens_without_waiting says so. Any other
 * open goes to libc's, __openat64_2 (a cancellation point, as openat is),
 * or, where a mode comes with it (O_CREAT, O_TMPFILE), to a traced
 * syscall. The record carries the path. */
static int open_at(int dirfd, const char* path, int flags, long mode) {
  if (flags & (FP_O_CREAT | FP_O_TMPFILE_BIT)) {
    return (int)libc_result(traced_syscall(SYS_openat, dirfd, (long)path, flags, mode, 0, 0));
  }
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL || !opens_without_waiting(header, dirfd, path, flags)) {
    return (int)SLOW_CALL(SYS_openat, dirfd, __openat64_2(dirfd, path, flags));
  }
  return (int)libc_result(logged_open(header, dirfd, path, flags));
}

EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  long mode = 0;
  if (flags & (FP_O_CREAT | FP_O_TMPFILE_BIT)) {
    va_list list;
    va_start(list, flags);
    mode = va_arg(list, int);
    va_end(list);
  }
  return open_at(dirfd, path, flags, mode);
}
EXPORT int openat64(int dirfd, const char* path, int flags, ...) __attribute__((alias("openat")));

/* readlink and readlinkat (ls -l reads every symlink's target): a path in,
 * the target out, never waiting for another process. */
static long readlink_syscall(long number, long a1, long a2, long a3, long a4, int path_arg,
                             uint64_t output_address, unsigned long size) {
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL || size > REPRO_FASTPATH_MAX_OUTPUT_BYTES) {
    return traced_syscall(number, a1, a2, a3, a4, 0, 0);
  }
  return logged_syscall_with_strings(header, number, a1, a2, a3, a4, 0, 0, output_address,
                                     (uint32_t)size, OUTPUT_RESULT_BYTES, path_arg, -1);
}

EXPORT long readlink(const char* path, char* buf, unsigned long size) {
  return libc_result(
      readlink_syscall(SYS_readlink, (long)path, (long)buf, (long)size, 0, 0, (uint64_t)buf, size));
}
EXPORT long readlinkat(int dirfd, const char* path, char* buf, unsigned long size) {
  return libc_result(readlink_syscall(SYS_readlinkat, dirfd, (long)path, (long)buf, (long)size, 1,
                                      (uint64_t)buf, size));
}

#define FP_F_DUPFD 0
#define FP_F_GETFD 1
#define FP_F_SETFD 2
#define FP_F_DUPFD_CLOEXEC 1030

/* fcntl's commands that only read or set a descriptor's flags, or copy it. */
static int is_fast_fcntl(long command) {
  return command == FP_F_DUPFD || command == FP_F_DUPFD_CLOEXEC || command == FP_F_GETFD ||
         command == FP_F_SETFD || command == FP_F_GETFL;
}

/* fcntl's commands that only read or set a descriptor's flags, or copy
 * it: find's directory walk makes three of them per directory. The others
 * (locks, which may wait, leases, owners, pipe sizes...) go to libc's. */
EXPORT int fcntl(int fd, int command, ...) {
  va_list list;
  va_start(list, command);
  long arg = va_arg(list, long);
  va_end(list);
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL || !is_fast_fcntl(command)) {
    return __fcntl(fd, command, arg);
  }
  return (int)libc_result(
      logged_syscall(header, SYS_fcntl, fd, command, arg, 0, 0, 0, 0, 0, OUTPUT_NONE));
}
EXPORT int fcntl64(int fd, int command, ...) {
  va_list list;
  va_start(list, command);
  long arg = va_arg(list, long);
  va_end(list);
  return fcntl(fd, command, arg);
}

#define FP_PR_SET_SECCOMP 22

EXPORT int prctl(int option, ...) {
  va_list list;
  va_start(list, option);
  long a2 = va_arg(list, long);
  long a3 = va_arg(list, long);
  long a4 = va_arg(list, long);
  long a5 = va_arg(list, long);
  va_end(list);
  if (option == FP_PR_SET_SECCOMP) {
    own_filter_installed = 1;
  }
  return (int)libc_result(traced_syscall(SYS_prctl, option, a2, a3, a4, a5, 0));
}

/* getdents64 (readdir's only syscall), which never blocks: at most
 * REPRO_FASTPATH_MAX_OUTPUT_BYTES at a time (readdir asks for 32 KiB and
 * calls again for the rest), the entries logged as the output. */
static long getdents_syscall(long fd, long entries, long count) {
  struct repro_fastpath_header* header = usable_buffer();
  if (header == NULL) {
    return traced_syscall(SYS_getdents64, fd, entries, count, 0, 0, 0);
  }
  if ((unsigned long)count > REPRO_FASTPATH_MAX_OUTPUT_BYTES) {
    count = REPRO_FASTPATH_MAX_OUTPUT_BYTES;
  }
  return logged_syscall(header, SYS_getdents64, fd, entries, count, 0, 0, 0, (uint64_t)entries,
                        (uint32_t)count, OUTPUT_RESULT_BYTES);
}

/* A syscall from a patched site inside libc: the same choices as the
 * exported functions above make, on the raw syscall (result -errno).
 * `registers`: the number, then the six arguments. Whatever the recorder
 * patched but this does not take (a number it does not know) is made as
 * a traced syscall, from here. */
long repro_site_syscall(const long* registers) {
  long number = registers[0];
  long a1 = registers[1], a2 = registers[2], a3 = registers[3];
  long a4 = registers[4], a5 = registers[5], a6 = registers[6];
  struct repro_fastpath_header* header;
  int pipe;
  if (marked_slow_call(number, a1)) {
    return traced_syscall(number, a1, a2, a3, a4, a5, a6);
  }
  switch (number) {
    case SYS_getpid:
    case SYS_getppid:
    case SYS_gettid:
      return id_syscall(number);
    case SYS_read:
    case SYS_pread64:
      pipe = 0;
      header = read_buffer(number, a1, (unsigned long)a3, &pipe);
      if (header != NULL && pipe) {
        long result = pipe_call(header, SYS_preadv2, a1, a2, (unsigned long)a3);
        return !pipe_call_refused(result) ? result : traced_syscall(number, a1, a2, a3, 0, 0, 0);
      }
      return header == NULL ? traced_syscall(number, a1, a2, a3, a4, 0, 0)
                            : logged_read(header, number, a1, a2, a3, a4);
    case SYS_recvfrom:
      /* recv(2): no source address to fill in (a5, a6), which a record
       * could not hold beside the bytes. */
      if (a5 != 0) {
        break;
      }
      header = read_buffer_of(a1, (unsigned long)a3, 1, a4, NULL);
      if (header == NULL) {
        break;
      }
      return logged_syscall(header, number, a1, a2, a3, a4, 0, 0, (uint64_t)a2, (uint32_t)a3,
                            OUTPUT_RESULT_BYTES);
    case SYS_sendto:
      /* send(2): a connected socket, no address (a5) to keep as input. */
      if (a5 != 0) {
        break;
      }
      header = write_buffer_of(a1, a4, NULL);
      if (header == NULL) {
        break;
      }
      return logged_write(header, number, a1, a2, a3, a4, 0);
    case SYS_sendmsg:
      /* The message header, its iovecs, address and control data are the
       * kernel's to read (and to fail with EFAULT on): its result is all
       * the record holds, as for write. */
      header = write_buffer_of(a1, a3, NULL);
      if (header == NULL) {
        break;
      }
      return logged_write(header, number, a1, a2, a3, 0, 0);
    case SYS_write:
    case SYS_writev:
      pipe = 0;
      header = write_buffer_of(a1, 0, number == SYS_write ? &pipe : NULL);
      if (header == NULL) {
        break;
      }
      if (pipe) {
        long done = pipe_call(header, SYS_pwritev2, a1, a2, (unsigned long)a3);
        unsigned long left = pipe_write_left(done, (unsigned long)a3);
        if (left == 0) {
          return done;
        }
        unsigned long written = (unsigned long)a3 - left;
        return pipe_write_total(
            written, traced_syscall(SYS_write, a1, a2 + (long)written, (long)left, 0, 0, 0));
      }
      return logged_write(header, number, a1, a2, a3, 0, 0);
    case SYS_pwrite64:
      header = write_buffer(a1);
      if (header == NULL) {
        break;
      }
      return logged_write(header, number, a1, a2, a3, a4, 0);
    case SYS_pwritev:
      header = write_buffer(a1);
      if (header == NULL) {
        break;
      }
      return logged_write(header, number, a1, a2, a3, a4, a5);
    case SYS_poll:
      /* A poll that does not wait (timeout 0): the array comes back. */
      if ((int)a3 != 0 || (unsigned long)a2 > REPRO_FASTPATH_MAX_OUTPUT_BYTES / FP_POLLFD_BYTES) {
        break;
      }
      header = usable_buffer();
      if (header == NULL) {
        break;
      }
      return logged_syscall(header, number, a1, a2, 0, 0, 0, 0, (uint64_t)a1,
                            (uint32_t)a2 * FP_POLLFD_BYTES, OUTPUT_WHOLE_UNLESS_ERROR);
    case SYS_epoll_wait:
      /* An epoll_wait that does not wait (timeout 0). */
      if ((int)a4 != 0 || (int)a3 <= 0 ||
          (unsigned long)a3 > REPRO_FASTPATH_MAX_OUTPUT_BYTES / FP_EPOLL_EVENT_BYTES) {
        break;
      }
      header = usable_buffer();
      if (header == NULL) {
        break;
      }
      return logged_syscall(header, number, a1, a2, a3, 0, 0, 0, (uint64_t)a2,
                            (uint32_t)a3 * FP_EPOLL_EVENT_BYTES, OUTPUT_EPOLL_EVENTS);
    case SYS_lseek:
      return plain_syscall(number, a1, a2, a3, 0, 0, 0);
    case SYS_fstat:
      return plain_syscall(number, a1, a2, 0, 0, (uint64_t)a2, FP_STAT_BYTES);
    case SYS_newfstatat:
      if (a2 == 0) {
        break;
      }
      return path_syscall(number, a1, a2, a3, a4, 0, 1, (uint64_t)a3, FP_STAT_BYTES);
    case SYS_statx:
      if (a2 == 0) {
        break;
      }
      return path_syscall(number, a1, a2, a3, a4, a5, 1, (uint64_t)a5, FP_STATX_BYTES);
    case SYS_access:
      if (a1 == 0) {
        break;
      }
      return path_syscall(number, a1, a2, 0, 0, 0, 0, 0, 0);
    case SYS_getdents64:
      return getdents_syscall(a1, a2, a3);
    case SYS_close: {
      header = usable_buffer();
      uint32_t type = header == NULL ? 0 : file_type(header, a1);
      if (!closes_without_waiting(type)) {
        break;
      }
      return logged_close(header, a1, type);
    }
    case SYS_openat:
      header = usable_buffer();
      if (header == NULL || !opens_without_waiting(header, a1, (const char*)a2, a3)) {
        break;
      }
      return logged_open(header, a1, (const char*)a2, a3);
    case SYS_fcntl:
      header = usable_buffer();
      if (header == NULL || !is_fast_fcntl(a2)) {
        break;
      }
      return logged_syscall(header, SYS_fcntl, a1, a2, a3, 0, 0, 0, 0, 0, OUTPUT_NONE);
    case SYS_readlink:
      return readlink_syscall(number, a1, a2, a3, 0, 0, (uint64_t)a2, (unsigned long)a3);
    case SYS_readlinkat:
      return readlink_syscall(number, a1, a2, a3, a4, 1, (uint64_t)a3, (unsigned long)a4);
    case SYS_getxattr:
    case SYS_lgetxattr:
      return xattr_syscall(number, a1, (const char*)a2, (void*)a3, (unsigned long)a4, 1);
    case SYS_fgetxattr:
      return xattr_syscall(number, a1, (const char*)a2, (void*)a3, (unsigned long)a4, 0);
    default:
      break;
  }
  return traced_syscall(number, a1, a2, a3, a4, a5, a6);
}

/* syscall(2) for the numbers above; every other number is passed on,
 * traced, as libc's own syscall() would. */
EXPORT long syscall(long number, ...) {
  va_list list;
  va_start(list, number);
  long a1 = va_arg(list, long);
  long a2 = va_arg(list, long);
  long a3 = va_arg(list, long);
  long a4 = va_arg(list, long);
  long a5 = va_arg(list, long);
  long a6 = va_arg(list, long);
  va_end(list);
  switch (number) {
    case SYS_getpid:
    case SYS_getppid:
    case SYS_gettid:
      return libc_result(id_syscall(number));
    case SYS_read:
    case SYS_pread64: {
      struct repro_fastpath_header* header = read_buffer(number, a1, (unsigned long)a3, NULL);
      return libc_result(header == NULL ? traced_syscall(number, a1, a2, a3, a4, 0, 0)
                                        : logged_read(header, number, a1, a2, a3, a4));
    }
    case SYS_lseek:
      return libc_result(plain_syscall(number, a1, a2, a3, 0, 0, 0));
    case SYS_seccomp:
      own_filter_installed = 1;
      return libc_result(traced_syscall(number, a1, a2, a3, a4, a5, a6));
    default:
      return libc_result(traced_syscall(number, a1, a2, a3, a4, a5, a6));
  }
}
