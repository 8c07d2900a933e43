# The two commands of the README, and the helpers around them.
#   make demo   installs what is missing, builds, trains Fashion-MNIST while
#               serving the live dashboard on http://127.0.0.1:6006
#               (MODEL=char_lm: a character-level transformer on fortunes)
#   make test   installs what is missing, builds, runs every test (CTest)
#   make fuzz   runs every libFuzzer target of tests/fuzz/ for FUZZ_SECONDS
#               (default 30) each, built with clang in its own directory
# All are idempotent and quiet when everything is already in place.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
# Fuzz targets run at once (CI: one per core); 1 leaves a shared machine
# its other cores.
FUZZ_JOBS  ?= 1
JOBS       ?= $(shell nproc)
# The fuzz build's kernels: at the baseline on x86-64 (see fuzz below).
FUZZ_MARCH  = $(if $(filter x86_64,$(shell uname -m)),-DGB_MARCH=x86-64-v2)
CMAKE_Q     = cmake --log-level=WARNING
# Builds quietly (directory, then extra cmake --build arguments); on
# failure the whole log is shown.
BUILD_Q     = build() { d="$$1"; shift; cmake --build "$$d" -j $(JOBS) "$$@" > "$$d/build.log" 2>&1 || { cat "$$d/build.log"; exit 1; }; }; build

.PHONY: all deps build test test-asan test-tsan fuzz demo bench clean

all: build

deps:
	@scripts/bootstrap.sh

build: deps
	@$(CMAKE_Q) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@$(BUILD_Q) $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer, but
# for the tests whose time would add no checking here, each of which says
# where its C code runs under the sanitizers; they run in `make test`:
#   full_size     a full-size training or PyTorch's
#   browser_page  a browser test whose checks are the page's own work
#   isa_upper     the op tests at the levels above the baseline (the plain
#                 tests run the CPU's best level)
test-asan: deps
	@$(CMAKE_Q) -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGB_SANITIZE=ON >/dev/null
	@$(BUILD_Q) $(ASAN_BUILD)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS) \
	  -LE '^(full_size|browser_page|isa_upper)$$'

# The threaded tests (CTest label "threads") under ThreadSanitizer.
test-tsan: deps
	@$(CMAKE_Q) -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGB_TSAN=ON >/dev/null
	@$(BUILD_Q) $(TSAN_BUILD) --target threads_tests
	@cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  ctest --output-on-failure -j $(JOBS) -L threads

# libFuzzer (clang, with ASan + UBSan) over each target for FUZZ_SECONDS;
# only the fuzz targets and the libraries they link are built. The same
# targets replay their seeds and regressions in `make test` without clang.
# The kernels are built at one level, the x86-64 baseline (GB_MARCH): a
# fuzzer runs one level anyway, and the three made a quarter of this
# build's time; the sanitizer run checks the baseline's and the CPU's best.
fuzz:
	@GB_WITH_FUZZ=1 scripts/bootstrap.sh
	@$(CMAKE_Q) -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
	  -DGB_FUZZ=ON $(FUZZ_MARCH) >/dev/null
	@$(BUILD_Q) $(FUZZ_BUILD) --target fuzzers
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz.sh $(FUZZ_BUILD)

demo: build
	@MODEL=$(MODEL) scripts/demo.sh $(BUILD)

bench:
	@GB_WITH_TORCH=1 scripts/bootstrap.sh
	@$(CMAKE_Q) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@$(BUILD_Q) $(BUILD)
	@scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
