/* Syscalls whose command or arguments decide what they write: keyctl
 * (KEYCTL_GET_KEYRING_ID, KEYCTL_DESCRIBE, KEYCTL_READ into a short and a
 * long buffer, KEYCTL_CAPABILITIES, KEYCTL_SEARCH, KEYCTL_REVOKE),
 * get_mempolicy (mode and node mask; MPOL_F_ADDR), set_mempolicy and mbind
 * (MPOL_DEFAULT), syslog (SIZE_BUFFER, READ_ALL), sysinfo, getsockopt
 * (SO_TYPE, SO_RCVBUF, SO_DOMAIN, a short buffer) and process_vm_readv from
 * this process into split local buffers. A call this host refuses prints
 * its errno, the same on every run here. */
#include "test_util.h"

#include <linux/keyctl.h>
#include <linux/mempolicy.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>

static int refused(const char *what, long result) {
  if (result >= 0) return 0;
  say(what);
  say(": errno ");
  say(tu_errno_text(errno));
  say("\n");
  return 1;
}

static void keys(void) {
  long id = syscall(SYS_add_key, "user", "repro:test", "payload-12345", 13,
                    KEY_SPEC_PROCESS_KEYRING);
  if (refused("add_key", id)) return;
  long ring = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0);
  check(ring > 0);
  say("KEYCTL_GET_KEYRING_ID: the process keyring\n");
  char text[256];
  memset(text, 0, sizeof text);
  long n = syscall(SYS_keyctl, KEYCTL_DESCRIBE, id, text, sizeof text);
  check(n > 0 && n <= (long)sizeof text);
  /* "type;uid;gid;perm;description": the type and description. */
  const char *last = strrchr(text, ';');
  check(last != NULL && strncmp(text, "user;", 5) == 0);
  say("KEYCTL_DESCRIBE: user, ");
  say(last + 1);
  say("\n");
  char small[7];
  memset(small, '.', sizeof small);
  n = syscall(SYS_keyctl, KEYCTL_READ, id, small, sizeof small);
  check(n == 13);
  struct line l;
  line_init(&l);
  line_str(&l, "KEYCTL_READ into 7 bytes: length 13, got ");
  line_bytes(&l, small, sizeof small);
  line_str(&l, "\n");
  line_say(&l);
  char payload[32];
  memset(payload, 0, sizeof payload);
  n = syscall(SYS_keyctl, KEYCTL_READ, id, payload, sizeof payload);
  check(n == 13);
  say("KEYCTL_READ: ");
  say(payload);
  say("\n");
  unsigned char caps[16];
  memset(caps, 0, sizeof caps);
  n = syscall(SYS_keyctl, KEYCTL_CAPABILITIES, caps, sizeof caps);
  if (!refused("KEYCTL_CAPABILITIES", n)) {
    check(caps[0] & KEYCTL_CAPS0_CAPABILITIES);
    say("KEYCTL_CAPABILITIES: says it is there\n");
  }
  long found = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_PROCESS_KEYRING, "user", "repro:test", 0);
  check(found == id);
  say("KEYCTL_SEARCH: the same key\n");
  check(syscall(SYS_keyctl, KEYCTL_REVOKE, id) == 0);
  errno = 0;
  check(syscall(SYS_keyctl, KEYCTL_READ, id, payload, sizeof payload) == -1 && errno == EKEYREVOKED);
  say("KEYCTL_READ after KEYCTL_REVOKE: EKEYREVOKED\n");
}

static void numa(void) {
  int mode = -1;
  unsigned long mask[16];
  memset(mask, 0xee, sizeof mask);
  long r = syscall(SYS_get_mempolicy, &mode, mask, 16 * 64, NULL, 0);
  if (refused("get_mempolicy", r)) return;
  say_num("get_mempolicy mode", mode);
  check(mask[0] != 0xeeeeeeeeeeeeeeeeul);
  say_nondet_hex("get_mempolicy nodes", mask[0]);
  check(syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0) == 0);
  char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check(page != MAP_FAILED);
  page[0] = 1;
  check(syscall(SYS_mbind, page, 4096, MPOL_DEFAULT, NULL, 0, 0) == 0);
  mode = -1;
  check(syscall(SYS_get_mempolicy, &mode, NULL, 0, page, MPOL_F_ADDR) == 0);
  say_num("get_mempolicy of an mbind page", mode);
  check(munmap(page, 4096) == 0);
}

static void kernel_log(void) {
  long size = syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
  if (refused("syslog SIZE_BUFFER", size)) return;
  check(size > 0);
  say("syslog SIZE_BUFFER: positive\n");
  static char log[1 << 16];
  long n = syscall(SYS_syslog, 3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof log);
  if (refused("syslog READ_ALL", n)) return;
  check(n >= 0 && n <= (long)sizeof log);
  say_nondet_num("syslog READ_ALL bytes", n);
  say_nondet_bytes("syslog READ_ALL starts", log, n < 16 ? (size_t)n : 16);
}

static void system_info(void) {
  struct sysinfo info;
  memset(&info, 0, sizeof info);
  check(sysinfo(&info) == 0);
  check(info.mem_unit >= 1 && info.totalram > 0 && info.procs > 0);
  say("sysinfo: plausible\n");
  say_nondet_num("sysinfo uptime", info.uptime);
}

static void socket_options(void) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  check(s >= 0);
  int value = -1;
  socklen_t len = sizeof value;
  check(getsockopt(s, SOL_SOCKET, SO_TYPE, &value, &len) == 0 && len == sizeof value);
  say_num("SO_TYPE is SOCK_STREAM", value == SOCK_STREAM);
  len = sizeof value;
  check(getsockopt(s, SOL_SOCKET, SO_DOMAIN, &value, &len) == 0);
  say_num("SO_DOMAIN is AF_INET", value == AF_INET);
  int want = 65536;
  check(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &want, sizeof want) == 0);
  len = sizeof value;
  check(getsockopt(s, SOL_SOCKET, SO_RCVBUF, &value, &len) == 0);
  say_num("SO_RCVBUF after asking 65536 (doubled)", value);
  /* A 2-byte buffer: the kernel writes 2 bytes and says so. */
  unsigned char two[4] = {0xee, 0xee, 0xee, 0xee};
  len = 2;
  check(getsockopt(s, SOL_SOCKET, SO_TYPE, two, &len) == 0);
  say_num("SO_TYPE into 2 bytes: optlen", len);
  say_num("SO_TYPE into 2 bytes: byte 2 untouched", two[2] == 0xee);
  close(s);
}

static void vm_read(void) {
  static const char source[] = "process_vm_readv reads our own memory";
  char first[8], second[64];
  memset(first, 0, sizeof first);
  memset(second, 0, sizeof second);
  struct iovec local[2] = {{first, sizeof first}, {second, sizeof second}};
  struct iovec remote = {(void *)source, sizeof source};
  long n = syscall(SYS_process_vm_readv, getpid(), local, 2, &remote, 1, 0);
  if (refused("process_vm_readv", n)) return;
  check(n == (long)sizeof source);
  check(memcmp(first, source, 8) == 0);
  say("process_vm_readv: ");
  say(second);
  say("\n");
}

int main(void) {
  test_init();
  keys();
  numa();
  kernel_log();
  system_info();
  socket_options();
  vm_read();
  finish();
  return 0;
}
