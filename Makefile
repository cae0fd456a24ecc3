# The two commands of the README: `make demo` and `make test`.
# Everything else here is a convenience wrapper around CMake.

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
FUZZ_DIR  ?= build-fuzz
JOBS      ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup configure build demo test test-asan test-sanitize fuzz bench clean

all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)
	@test -x $(BUILD_DIR)/repro

demo: build
	@bash scripts/demo.sh $(BUILD_DIR)/repro

# The whole suite: the unit tests under ASan+UBSan, a short bounded fuzz run
# of the trace reader, the end-to-end tests against repro built with
# ASan+UBSan, then the main build's tests.
test: build test-asan fuzz test-sanitize
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300

test-asan: setup
	@cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DREPRO_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS) --target unit_tests
	@echo "== unit tests under ASan+UBSan"
	@cd $(ASAN_DIR) && (ctest -L unit -j $(JOBS) --timeout 900 --output-on-failure >ctest-asan.log 2>&1 \
	    || (cat ctest-asan.log; exit 1)) && tail -n 3 ctest-asan.log

# The end-to-end suite (every test program recorded and replayed, the
# scenarios) against repro built with ASan+UBSan in $(ASAN_DIR); the test
# programs stay plain. repro built so aborts at any sanitizer report, a leak
# at exit included (cli/sanitizer_options.cc), which fails the test that ran
# it; the report is in that test's output or in the *.err files of its kept
# work directory.
test-sanitize: setup
	@cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DREPRO_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS)
	@echo "== end-to-end tests against repro built with ASan+UBSan"
	@cd $(ASAN_DIR) && (ctest -L e2e -j $(JOBS) --output-on-failure >ctest-sanitize.log 2>&1 \
	    || (cat ctest-sanitize.log; exit 1)) && tail -n 3 ctest-sanitize.log

# Seeds: tests/fuzz/seeds (made by make_fuzz_seeds) and tests/fuzz/corpus,
# what a long run found, kept small: after a run of FUZZ_SECONDS=600 or more,
#   trace_reader_fuzz -set_cover_merge=1 -use_counters=0 NEW_DIR tests/fuzz/corpus $(FUZZ_DIR)/corpus
# keeps the fewest inputs that reach every edge; NEW_DIR replaces the corpus.
# New inputs of a run go to $(FUZZ_DIR)/corpus only.
FUZZ_SECONDS ?= 30
fuzz: setup
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREPRO_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_DIR) -j $(JOBS) --target trace_reader_fuzz
	@echo "== fuzzing the trace reader for $(FUZZ_SECONDS)s"
	@mkdir -p $(FUZZ_DIR)/corpus
	@$(FUZZ_DIR)/tests/fuzz/trace_reader_fuzz -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus tests/fuzz/corpus tests/fuzz/seeds \
	    >$(FUZZ_DIR)/fuzz.log 2>&1 \
	    || (tail -n 40 $(FUZZ_DIR)/fuzz.log; echo "fuzz: the trace reader crashed; reproducer in $(FUZZ_DIR)/"; exit 1)
	@grep -E 'stat::number_of_executed_units' $(FUZZ_DIR)/fuzz.log

bench: setup
	@cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DREPRO_BUILD_BENCH=ON >/dev/null
	@cmake --build build-bench -j $(JOBS)
	@build-bench/bench/micro/repro_micro_bench

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR) build-bench
