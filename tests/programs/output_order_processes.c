/* Processes sharing one stdout (a file or a pipe): three forked children
 * and the parent print lines at the same time. The replay must print them
 * in the order the recording did; the order differs between native runs,
 * so those lines start with "~ ". */
#include "test_util.h"

#include <sys/wait.h>

enum { kChildren = 3, kLinesEach = 5 };

static void print_lines(const char *who, long n) {
  for (int i = 0; i < kLinesEach; i++) {
    struct line l;
    line_init(&l);
    line_str(&l, who);
    line_num(&l, n);
    line_str(&l, " line ");
    line_num(&l, i);
    line_say_nondet(&l);
  }
}

int main(void) {
  test_init();
  pid_t children[kChildren];
  for (long i = 0; i < kChildren; i++) {
    children[i] = fork();
    check(children[i] >= 0);
    if (children[i] == 0) {
      print_lines("child ", i);
      _exit(0);
    }
  }
  print_lines("parent ", 0);
  for (int i = 0; i < kChildren; i++) {
    int status;
    check(waitpid(children[i], &status, 0) == children[i]);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  say_num("children", kChildren);
  finish();
  return 0;
}
