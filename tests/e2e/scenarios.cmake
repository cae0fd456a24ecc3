# Scenario end-to-end tests: real programs (bash, python3, make, xz) and
# whole-tool behaviour (isolation from the outside world, divergence
# reports, interrupted recordings, bad input). Included from
# tests/e2e/CMakeLists.txt. Each scenario is a script
#   scenarios/<name>.sh REPRO BUILD_DIR
# (helpers in scenarios/lib.sh) that prints PASS or FAIL and exits 0, 1, or
# 77 when ptrace (or what else it needs of the system) is not permitted. The small C programs some scenarios run
# are built into ${CMAKE_BINARY_DIR}/tests/e2e/scenarios/.

set(REPRO_SCENARIO_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/scenarios)
set(REPRO_SCENARIO_PROGRAM_DIR ${CMAKE_BINARY_DIR}/tests/e2e/scenarios)
find_package(Threads REQUIRED)

function(repro_scenario_program target source)
  add_executable(${target} ${REPRO_SCENARIO_SOURCE_DIR}/${source})
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/tests/programs)
  target_compile_options(${target} PRIVATE -O1 -g)
  set_target_properties(${target} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${REPRO_SCENARIO_PROGRAM_DIR})
endfunction()

# asan_leak_report: LeakSanitizer's ptrace at exit, emulated by the recorder.
repro_scenario_program(scenario_asan_leak asan_leak_program.c)
target_compile_options(scenario_asan_leak PRIVATE -fsanitize=address -fno-omit-frame-pointer)
target_link_options(scenario_asan_leak PRIVATE -fsanitize=address)
target_link_libraries(scenario_asan_leak PRIVATE Threads::Threads)
# ci: a flaky three-thread race, and fixed ends (pass, exit N, abort, sleep).
repro_scenario_program(scenario_ci_flaky ci_flaky_program.c)
target_link_libraries(scenario_ci_flaky PRIVATE Threads::Threads)
# fast_path: getppid, reads and clock reads the preloaded library logs.
repro_scenario_program(scenario_fast_path fast_path_program.c)
target_link_libraries(scenario_fast_path PRIVATE Threads::Threads)
# divergence_report: getpid or getppid, as the environment says.
repro_scenario_program(scenario_divergence divergence_program.c)
# damaged_file_copies and trace_privacy: says whether variables are set.
repro_scenario_program(scenario_env_probe env_probe_program.c)
# devnull_trace_size: a gigabyte written to /dev/null.
repro_scenario_program(scenario_devnull_writer devnull_writer_program.c)
# exec_mount_namespace: copies of itself run from a tmpfs in a new namespace.
# syscall_site_patching: libc's own calls (readdir, stdio) through patched sites.
repro_scenario_program(scenario_syscall_site_patching syscall_site_patching_program.c)
target_link_libraries(scenario_syscall_site_patching PRIVATE Threads::Threads)
# deadlock: futex, pipe and wait4 cycles, and waits that are only slow.
repro_scenario_program(scenario_deadlock deadlock_program.c)
target_link_libraries(scenario_deadlock PRIVATE Threads::Threads)
repro_scenario_program(scenario_exec_mount_namespace exec_mount_namespace_program.c)
repro_scenario_program(scenario_isolation_client isolation_client.c)
# replay_isolation_enforced, fast_path: a host that refuses unshare, statx.
repro_scenario_program(scenario_deny_syscall deny_syscall.c)
repro_scenario_program(scenario_hunt_window hunt_window_program.c)
target_link_libraries(scenario_hunt_window PRIVATE Threads::Threads)
repro_scenario_program(scenario_jit_rdtsc jit_rdtsc.c)
# tracee_killed: a vfork parent killed while its child has not exec'd yet.
repro_scenario_program(scenario_killed_in_vfork killed_in_vfork_program.c)
# many_tasks: a thousand threads, a thousand children.
repro_scenario_program(scenario_many_tasks many_tasks_program.c)
target_link_libraries(scenario_many_tasks PRIVATE Threads::Threads)
repro_scenario_program(scenario_memory_divergence memory_divergence_program.c)
repro_scenario_program(scenario_mmap_socket mmap_socket_program.c)
repro_scenario_program(scenario_output_divergence output_divergence_program.c)
repro_scenario_program(scenario_sched_yield_turns sched_yield_turns_program.c)
target_link_libraries(scenario_sched_yield_turns PRIVATE Threads::Threads)
# report: a segfault in a second thread, and a plain non-zero exit.
repro_scenario_program(scenario_report_crash report_crash_program.c)
target_link_libraries(scenario_report_crash PRIVATE Threads::Threads)
repro_scenario_program(scenario_sibling_fatal_signal sibling_fatal_signal_program.c)
target_link_libraries(scenario_sibling_fatal_signal PRIVATE Threads::Threads)
repro_scenario_program(scenario_unknown_effects unknown_effects_program.c)

# scenario_name timeout_seconds, one per line, alphabetical.
set(REPRO_SCENARIOS
  "asan_leak_report 300"
  "bad_input 300"
  "bench_command 300"
  "chaos_same_schedule 300"
  "ci 600"
  "damaged_file_copies 120"
  "deadlock 300"
  "devnull_trace_size 120"
  "disk_full 180"
  "divergence_report 120"
  "doctor 120"
  "dump_decoding 120"
  "dump_json 120"
  "effects 300"
  "exec_mount_namespace 120"
  "export_perfetto 300"
  "fast_path 300"
  "file_reads_by_reference 180"
  "interrupted_recording 300"
  "hunt 900"
  "in_kernel_grace 300"
  "isolation 120"
  "jit_rdtsc 120"
  "leftover_processes 180"
  "lost_update_20_of_20 600"
  "many_tasks 180"
  "gdb_replay 600"
  "memory_divergence 120"
  "mmap_special_file 120"
  "output_divergence 120"
  "python_itimer_prof 900"
  "real_make 600"
  "real_python_threads 600"
  "real_shell_pipeline 300"
  "real_xz 600"
  "replay_after_files_deleted 120"
  "replay_from_noexec_mount 300"
  "replay_isolation_enforced 120"
  "replay_stop_at 120"
  "report 300"
  "sched_yield_turns 300"
  "setuid_program 120"
  "shell_scripts 300"
  "sibling_fatal_signal 120"
  "sparse_mapping_trace_size 300"
  "spec_store_bypass 120"
  "syscall_site_patching 300"
  "trace_privacy 120"
  "tracee_killed 400"
  "unknown_effects_warning 120"
)
foreach(entry IN LISTS REPRO_SCENARIOS)
  separate_arguments(entry)
  list(GET entry 0 name)
  list(GET entry 1 seconds)
  add_test(NAME e2e/scenario/${name}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/scenarios/${name}.sh $<TARGET_FILE:repro> ${CMAKE_BINARY_DIR})
  set_tests_properties(e2e/scenario/${name} PROPERTIES
    LABELS "e2e" TIMEOUT ${seconds} SKIP_RETURN_CODE 77)
endforeach()
