# The two commands of the README, and the helpers around them.
#   make demo   installs what is missing, builds, trains Fashion-MNIST while
#               serving the live dashboard on http://127.0.0.1:6006
#   make test   installs what is missing, builds, runs every test (CTest)
# Both are idempotent and quiet when everything is already in place.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_Q     = cmake --log-level=WARNING

.PHONY: all deps build test test-asan demo bench clean

all: build

deps:
	@scripts/bootstrap.sh

build: deps
	@$(CMAKE_Q) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory -s

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	@$(CMAKE_Q) -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGB_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) -- --no-print-directory -s
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

bench:
	@GB_WITH_TORCH=1 scripts/bootstrap.sh
	@$(CMAKE_Q) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory -s
	@scripts/bench.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
