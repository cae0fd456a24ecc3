/* uname() names Linux on x86_64 (printed), with release/version/hostname
 * printed with "~ "; sysinfo() reports plausible uptime, memory and process
 * counts (printed with "~ "); gethostname matches uname's nodename. */
#include "test_util.h"

#include <sys/sysinfo.h>
#include <sys/utsname.h>

int main(void) {
  test_init();
  struct utsname u;
  check(uname(&u) == 0);
  check(strcmp(u.sysname, "Linux") == 0);
  check(strcmp(u.machine, "x86_64") == 0);
  check(u.release[0] >= '2' && u.release[0] <= '9');
  struct line l;
  line_init(&l);
  line_str(&l, "sysname=");
  line_str(&l, u.sysname);
  line_str(&l, " machine=");
  line_str(&l, u.machine);
  line_say(&l);
  line_init(&l);
  line_str(&l, "release=");
  line_str(&l, u.release);
  line_str(&l, " version=");
  line_str(&l, u.version);
  line_str(&l, " nodename=");
  line_str(&l, u.nodename);
  line_say_nondet(&l);

  char host[256];
  check(gethostname(host, sizeof host) == 0);
  check(strcmp(host, u.nodename) == 0);
  say("gethostname == uname nodename\n");

  struct sysinfo si;
  memset(&si, 0, sizeof si);
  check(sysinfo(&si) == 0);
  check(si.uptime > 0);
  check(si.mem_unit >= 1);
  check(si.totalram > 0 && si.freeram <= si.totalram);
  check(si.procs >= 1);
  say("sysinfo: uptime > 0, freeram <= totalram, procs >= 1\n");
  line_init(&l);
  line_str(&l, "uptime=");
  line_num(&l, si.uptime);
  line_str(&l, " totalram=");
  line_udec(&l, (unsigned long long)si.totalram * si.mem_unit);
  line_str(&l, " freeram=");
  line_udec(&l, (unsigned long long)si.freeram * si.mem_unit);
  line_str(&l, " procs=");
  line_num(&l, si.procs);
  line_str(&l, " load1=");
  line_udec(&l, si.loads[0]);
  line_say_nondet(&l);
  finish();
  return 0;
}
