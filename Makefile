# Thin wrapper over CMake. `make` builds the optimized floe; `make test` builds the
# optimized build and the sanitized test build and runs every test; `make demo` runs the main job.
BUILD      ?= build
TESTBUILD  ?= build-test
FUZZBUILD  ?= build-fuzz
JOBS       ?= $(shell nproc)
PREFIX     ?= /usr/local
CC         ?= cc

.PHONY: all floe setup test test-setup demo bench install fuzz clean format

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

# The optimized build is compiled first: gcc -O2 warns (maybe-uninitialized) where the
# sanitized -O0 test build does not, and -Werror makes that a broken `make demo`.
# ctest counts two slots per core: a test takes two, one that mostly waits (Kafka) one
# (CMakeLists.txt: PROCESSORS).
test: test-setup floe $(TESTBUILD)/Makefile
	cmake --build $(TESTBUILD) -j $(JOBS)
	cd $(TESTBUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $$((2 * $(JOBS))) $(CTEST_ARGS)

demo: floe
	@scripts/demo $(BUILD)/floe

bench: floe test-setup
	@bench/run $(BUILD)/floe

# PREFIX is honoured on every install, not only the first configure (floe.pc is relocatable).
install: floe
	cmake --install $(BUILD) --prefix $(PREFIX)

fuzz: test-setup
	CC=clang cmake -S . -B $(FUZZBUILD) -DCMAKE_BUILD_TYPE=Debug -DFLOE_FUZZ=ON \
	    -DFLOE_SANITIZE=ON -DFLOE_TESTS=OFF >/dev/null
	cmake --build $(FUZZBUILD) -j $(JOBS) --target fuzzers
	tests/fuzz/run $(FUZZBUILD) $${FUZZ_SECONDS:-60}

clean:
	rm -rf $(BUILD) $(TESTBUILD) $(FUZZBUILD)
