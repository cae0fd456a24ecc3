/* Scenario program for trace_privacy.sh and damaged_file_copies.sh: a small
 * dynamically linked program that says, for each variable named in argv,
 * whether it is set, never its value (so the value reaches no output, and no
 * trace through it). */
#include "test_util.h"

#include <stdlib.h>

int main(int argc, char **argv) {
  test_init();
  for (int i = 1; i < argc; ++i) {
    struct line l;
    line_init(&l);
    line_str(&l, argv[i]);
    line_str(&l, getenv(argv[i]) != NULL ? " is set\n" : " is not set\n");
    line_say(&l);
  }
  finish();
  return 0;
}
