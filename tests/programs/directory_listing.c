/* mkdir and create entries, list them with readdir (getdents64 underneath),
 * sort and print the names with their types; rmdir of a non-empty directory
 * fails with ENOTEMPTY. */
#include "test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>


int main(void) {
  test_init();
  char dir[32], path[256];
  test_mkdtemp(dir);
  static const char *const files[] = {"zeta.txt", "alpha.txt", "mid.dat", ".hidden"};
  for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
    path_join(path, sizeof path, dir, files[i]);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    check(fd >= 0);
    check(close(fd) == 0);
  }
  path_join(path, sizeof path, dir, "subdir");
  check(mkdir(path, 0700) == 0);
  errno = 0;
  check(mkdir(path, 0700) == -1 && errno == EEXIST);

  DIR *d = opendir(dir);
  check(d != NULL);
  char *names[16];
  int types[16];
  int n = 0, dots = 0;
  struct dirent *e;
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
      dots++;
      continue;
    }
    check(n < 16);
    names[n] = strdup(e->d_name);
    check(names[n] != NULL);
    types[n] = e->d_type;
    n++;
  }
  check(errno == 0);
  check(closedir(d) == 0);
  check(dots == 2);
  check(n == 5);
  /* Sort the names (directory order is filesystem-specific); carry types. */
  for (int i = 0; i < n; i++) {
    for (int j = i + 1; j < n; j++) {
      if (strcmp(names[j], names[i]) < 0) {
        char *t = names[i];
        names[i] = names[j];
        names[j] = t;
        int ty = types[i];
        types[i] = types[j];
        types[j] = ty;
      }
    }
  }
  for (int i = 0; i < n; i++) {
    int is_dir = strcmp(names[i], "subdir") == 0;
    /* d_type may be DT_UNKNOWN on some filesystems; otherwise it must match. */
    check(types[i] == DT_UNKNOWN || types[i] == (is_dir ? DT_DIR : DT_REG));
    struct line l;
    line_init(&l);
    line_str(&l, "entry ");
    line_str(&l, names[i]);
    line_str(&l, is_dir ? " (dir)" : " (file)");
    line_say(&l);
  }
  say_num("entries besides . and ..", n);

  errno = 0;
  check(rmdir(dir) == -1 && errno == ENOTEMPTY);
  say("rmdir of non-empty directory: ENOTEMPTY\n");
  for (int i = 0; i < n; i++) {
    path_join(path, sizeof path, dir, names[i]);
    if (strcmp(names[i], "subdir") == 0) check(rmdir(path) == 0);
    else check(unlink(path) == 0);
    free(names[i]);
  }
  check(rmdir(dir) == 0);
  errno = 0;
  check(opendir(dir) == NULL && errno == ENOENT);
  say("removed: opendir gives ENOENT\n");
  finish();
  return 0;
}
