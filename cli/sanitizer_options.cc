// The sanitizer options of repro itself when built with -DREPRO_SANITIZE=ON
// (cli/CMakeLists.txt adds this file only then). The runtimes call these
// before main; ASAN_OPTIONS and UBSAN_OPTIONS in the environment still
// override them.
//
// Any report must fail the run that made it, visibly, also where the run
// was expected to fail: a sanitizer's default exit status (1 after an ASan
// report, 23 after a leak report) reads as one of repro's own failures to
// the tests that expect status 1. So every report aborts (status 134).
// Compiled in rather than set in the environment of `make test-sanitize`:
// repro passes its environment on to the programs it records, and the
// suite must record them as it does without sanitizers (a sanitized test
// program reads ASAN_OPTIONS too).

extern "C" const char* __asan_default_options() {
  return "halt_on_error=1:abort_on_error=1:detect_leaks=1";
}

extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}
