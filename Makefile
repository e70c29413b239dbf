# Thin wrapper over CMake. `make` builds the optimized floe; `make test` builds the
# optimized build and the sanitized test build and runs every test; `make demo` runs the main job.
BUILD      ?= build
TESTBUILD  ?= build-test
FUZZBUILD  ?= build-fuzz
JOBS       ?= $(shell nproc)
PREFIX     ?= /usr/local
CC         ?= cc

.PHONY: all floe setup test test-setup demo bench install fuzz fuzz-build clean format

all: floe

setup:
	@scripts/setup

$(BUILD)/Makefile: CMakeLists.txt
	@scripts/setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DFLOE_TESTS=OFF \
	      -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null

floe: $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

test-setup:
	@scripts/setup --test

$(TESTBUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(TESTBUILD) -DCMAKE_BUILD_TYPE=Debug -DFLOE_SANITIZE=ON >/dev/null

# The tests run the sanitized build only (FLOE_BIN is its floe), but make test compiles the
# optimized build too: gcc -O2 warns (maybe-uninitialized) where the sanitized test build
# does not, and -Werror makes that a broken `make demo`. It compiles at nice 19 while ctest
# runs, so it takes only CPU the tests leave idle, and fails make test after ctest if it
# failed (its log: $(TESTBUILD)/optimized-build.log).
# ctest counts two slots per core: a test takes two, one that mostly waits (Kafka) one
# (CMakeLists.txt: PROCESSORS).
test: test-setup $(BUILD)/Makefile $(TESTBUILD)/Makefile
	cmake --build $(TESTBUILD) -j $(JOBS)
	@nice -n 19 cmake --build $(BUILD) -j $(JOBS) > $(TESTBUILD)/optimized-build.log 2>&1 & \
	opt=$$!; rc=0; trap 'kill $$opt 2>/dev/null; exit 130' INT TERM; \
	( cd $(TESTBUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $$((2 * $(JOBS))) $(CTEST_ARGS) ) || rc=$$?; \
	if wait $$opt; then echo "make test: the optimized build ($(BUILD)) is up to date"; \
	else echo "make test: the optimized build ($(BUILD)) FAILED:"; \
	  cat $(TESTBUILD)/optimized-build.log; rc=1; fi; \
	exit $$rc

demo: floe
	@scripts/demo $(BUILD)/floe

bench: floe test-setup
	@bench/run $(BUILD)/floe

# PREFIX is honoured on every install, not only the first configure (floe.pc is relocatable).
install: floe
	cmake --install $(BUILD) --prefix $(PREFIX)

# fuzz-build builds the fuzz programs alone (.ci/run builds them while make test runs)
fuzz-build: test-setup
	CC=clang cmake -S . -B $(FUZZBUILD) -DCMAKE_BUILD_TYPE=Debug -DFLOE_FUZZ=ON \
	    -DFLOE_SANITIZE=ON -DFLOE_TESTS=OFF >/dev/null
	cmake --build $(FUZZBUILD) -j $(JOBS) --target fuzzers

fuzz: fuzz-build
	tests/fuzz/run $(FUZZBUILD) $${FUZZ_SECONDS:-60}

clean:
	rm -rf $(BUILD) $(TESTBUILD) $(FUZZBUILD)
