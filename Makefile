# The two commands of the README, and the helpers around them.
#   make demo   installs what is missing, builds, trains Fashion-MNIST while
#               serving the live dashboard on http://127.0.0.1:6006
#   make test   installs what is missing, builds, runs every test (CTest)
# Both are idempotent and quiet when everything is already in place.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS       ?= $(shell nproc)
CMAKE_Q     = cmake --log-level=WARNING
# Builds quietly; on failure the whole log is shown.
BUILD_Q     = build() { cmake --build "$$1" -j $(JOBS) > "$$1/build.log" 2>&1 || { cat "$$1/build.log"; exit 1; }; }; build

.PHONY: all deps build test test-asan test-tsan demo bench clean

all: build

deps:
	@scripts/bootstrap.sh

build: deps
	@$(CMAKE_Q) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@$(BUILD_Q) $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	@$(CMAKE_Q) -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGB_SANITIZE=ON >/dev/null
	@$(BUILD_Q) $(ASAN_BUILD)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# The threaded tests (CTest label "threads") under ThreadSanitizer.
test-tsan: deps
	@$(CMAKE_Q) -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGB_TSAN=ON >/dev/null
	@$(BUILD_Q) $(TSAN_BUILD)
	@cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  ctest --output-on-failure -j $(JOBS) -L threads

demo: build
	@scripts/demo.sh $(BUILD)

bench:
	@GB_WITH_TORCH=1 scripts/bootstrap.sh
	@$(CMAKE_Q) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@$(BUILD_Q) $(BUILD)
	@scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
