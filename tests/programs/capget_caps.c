/* Capabilities: capget with version 3 (two data structs) and version 1 (one:
 * the second stays untouched), the version probe (null data: the kernel
 * writes its version into the header and succeeds), an unknown version
 * (EINVAL, and the kernel's version in the header), capset of the current
 * sets, capset with an unknown version, and a permitted-set drop seen by the
 * next capget. */
#include "test_util.h"

#include <linux/capability.h>

static long capget_raw(struct __user_cap_header_struct *h, struct __user_cap_data_struct *d) {
  return syscall(SYS_capget, h, d);
}

static long capset_raw(struct __user_cap_header_struct *h, struct __user_cap_data_struct *d) {
  return syscall(SYS_capset, h, d);
}

static void say_sets(const char *label, const struct __user_cap_data_struct *d, int n) {
  struct line l;
  line_init(&l);
  line_str(&l, label);
  for (int i = 0; i < n; ++i) {
    line_str(&l, " eff=");
    line_hex(&l, d[i].effective);
    line_str(&l, " prm=");
    line_hex(&l, d[i].permitted);
    line_str(&l, " inh=");
    line_hex(&l, d[i].inheritable);
  }
  line_str(&l, "\n");
  line_say(&l);
}

int main(void) {
  test_init();
  struct __user_cap_header_struct h;
  struct __user_cap_data_struct d[2];

  /* The probe: null data, version 0. */
  h.version = 0;
  h.pid = 0;
  check(capget_raw(&h, NULL) == 0);
  say_hex("probe: kernel version", h.version);
  check(h.version == _LINUX_CAPABILITY_VERSION_3);

  /* Version 3: two structs (64-bit sets). */
  memset(d, 0xa5, sizeof d);
  h.version = _LINUX_CAPABILITY_VERSION_3;
  h.pid = 0;
  check(capget_raw(&h, d) == 0);
  say_sets("v3:", d, 2);
  struct __user_cap_data_struct v3[2];
  memcpy(v3, d, sizeof v3);

  /* Version 1: one struct; the second keeps its bytes. */
  memset(d, 0x5a, sizeof d);
  h.version = _LINUX_CAPABILITY_VERSION_1;
  h.pid = 0;
  check(capget_raw(&h, d) == 0);
  say_sets("v1:", d, 1);
  check(d[0].effective == v3[0].effective && d[0].permitted == v3[0].permitted);
  check(d[1].effective == 0x5a5a5a5au && d[1].permitted == 0x5a5a5a5au &&
        d[1].inheritable == 0x5a5a5a5au);
  say("v1: second struct untouched\n");

  /* An unknown version: EINVAL, and the kernel's version in the header. */
  h.version = 0x12345678;
  h.pid = 0;
  errno = 0;
  check(capget_raw(&h, d) == -1 && errno == EINVAL);
  say_hex("capget bad version: EINVAL, header now", h.version);

  /* Another process's sets: our parent's (pid 1 may be anything). */
  h.version = _LINUX_CAPABILITY_VERSION_3;
  h.pid = -1;
  errno = 0;
  check(capget_raw(&h, d) == -1 && errno == EINVAL);
  say("capget pid -1: EINVAL\n");

  /* capset with an unknown version: EINVAL and the kernel's version. */
  h.version = 0x1;
  h.pid = 0;
  memcpy(d, v3, sizeof d);
  errno = 0;
  check(capset_raw(&h, d) == -1 && errno == EINVAL);
  say_hex("capset bad version: EINVAL, header now", h.version);

  /* capset of the sets we have changes nothing. */
  h.version = _LINUX_CAPABILITY_VERSION_3;
  h.pid = 0;
  memcpy(d, v3, sizeof d);
  check(capset_raw(&h, d) == 0);
  say("capset same sets: ok\n");

  /* Dropping one permitted (and effective) capability, when we have it. */
  const int cap = CAP_SYS_NICE;
  if (v3[0].permitted & (1u << cap)) {
    memcpy(d, v3, sizeof d);
    d[0].permitted &= ~(1u << cap);
    d[0].effective &= ~(1u << cap);
    d[0].inheritable &= ~(1u << cap);
    check(capset_raw(&h, d) == 0);
    memset(d, 0, sizeof d);
    check(capget_raw(&h, d) == 0);
    check(!(d[0].permitted & (1u << cap)) && !(d[0].effective & (1u << cap)));
    /* Raising it again is refused: permitted only shrinks. */
    d[0].permitted |= 1u << cap;
    errno = 0;
    check(capset_raw(&h, d) == -1 && errno == EPERM);
    say("CAP_SYS_NICE dropped; raising it again: EPERM\n");
  } else {
    say("CAP_SYS_NICE not permitted: nothing to drop\n");
  }
  finish();
  return 0;
}
