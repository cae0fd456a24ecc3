/* For the unknown_effects_warning scenario: sets up two Linux AIO contexts
 * and destroys them (io_setup and io_destroy, whose effects repro does not
 * record). With --probe it only says whether io_setup works here. */
#include "test_util.h"

#include <linux/aio_abi.h>

int main(int argc, char **argv) {
  aio_context_t first = 0, second = 0;
  long r = syscall(SYS_io_setup, 4, &first);
  if (argc > 1 && strcmp(argv[1], "--probe") == 0) {
    if (r != 0) {
      say("io_setup: ");
      say(tu_errno_text(errno));
      say("\n");
      return 1;
    }
    syscall(SYS_io_destroy, first);
    return 0;
  }
  check(r == 0);
  check(syscall(SYS_io_setup, 4, &second) == 0);
  check(syscall(SYS_io_destroy, first) == 0);
  check(syscall(SYS_io_destroy, second) == 0);
  say("two AIO contexts set up and destroyed\n");
  finish();
  return 0;
}
