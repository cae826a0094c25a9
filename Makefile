# kpn: build, test and check.  `make help` lists the targets.

ARCH := $(shell uname -m)
ifeq ($(ARCH),x86_64)
PORT ?= amd64
else
PORT ?= posix
endif
PORTS := amd64 posix

CC      ?= cc
OPT     ?= -O2
WARN    := -std=c99 -pedantic -Wall -Wextra -Werror
CFLAGS  ?=
# VARIANT names a build flavour (e.g. -san); its objects live apart.
VARIANT ?=
XFLAGS  ?=
BUILD   := build/$(PORT)$(VARIANT)

ALL_CFLAGS = $(WARN) $(OPT) -g $(XFLAGS) $(CFLAGS) -Iinclude -Iport

SRC := $(sort $(wildcard src/*.c))
PORT_SRC_amd64 := port/amd64/port_amd64.c port/amd64/switch_amd64.S port/pthread/thread_pthread.c
PORT_SRC_posix := port/posix/port_posix.c port/pthread/thread_pthread.c
PORT_SRC := $(PORT_SRC_$(PORT))
ifeq ($(PORT_SRC),)
$(error PORT must be one of: $(PORTS))
endif

OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter %.c,$(SRC) $(PORT_SRC))) \
       $(patsubst %.S,$(BUILD)/obj/%.o,$(filter %.S,$(PORT_SRC)))
LIB := $(BUILD)/libkpn.a

TESTS       := $(sort $(wildcard test/test_*.c))
TEST_BINS   := $(patsubst test/%.c,$(BUILD)/tests/%,$(TESTS))
TEST_CFLAGS  = $(ALL_CFLAGS) -DTEST -Itools/cmocka -Isrc
RESULTS     := $(BUILD)/results

# A program is examples/NAME.c; examples/NAME_net.c, when there is one,
# holds its network so that tests can build it too.
EXAMPLES     := $(patsubst examples/%.c,%,$(filter-out %_net.c,$(sort $(wildcard examples/*.c))))
EXAMPLE_BINS := $(addprefix $(BUILD)/examples/,$(EXAMPLES))
# libraries the examples and their tests use (AES from mbedTLS)
EXTRA_LIBS   := -lmbedcrypto -lm -lpthread

SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

.PHONY: all lib test test-port sanitize tsan fuzz coverage valgrind check-ceedling-links check-embedded test-qemu firmware examples demo bench clean help cmocka
.DELETE_ON_ERROR:
# keep generated runners: gcovr reads them, and they need no rebuilding
.SECONDARY:

all: lib examples

help:
	@echo "make lib [PORT=amd64|posix]   build/PORT/libkpn.a"
	@echo "make test                     the suite on cmocka, every port"
	@echo "make sanitize                 the suite under ASan+UBSan, every port"
	@echo "make tsan                     the suite under ThreadSanitizer, every port"
	@echo "make valgrind                 the suite under valgrind memcheck, ucontext port"
	@echo "make coverage                 line and branch coverage of src/ and port/ (gcovr), with a floor"
	@echo "make fuzz [FUZZ_SECONDS=60]   libFuzzer over random networks against a reference interpreter"
	@echo "make check-embedded           the core for Cortex-M4 and RV64, allocator check, footprint figures"
	@echo "make test-qemu                the Cortex-M port's target tests under QEMU (M4F and M3)"
	@echo "make firmware                 examples/firmware, built and run under QEMU"
	@echo "make check-ceedling-links     link each test with only its TEST_SOURCE_FILEs, as Ceedling does"
	@echo "make examples [PORT=...]      build/PORT/examples/*"
	@echo "make demo                     build and run the AES and H.264 examples"
	@echo "make bench                    the papers' sweeps: CSV in build/bench, plots in docs/bench"
	@echo "make clean"

lib: $(LIB)

$(BUILD)/obj/%.o: %.c $(wildcard include/*.h src/*.h port/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(XFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(OBJ)
	@rm -f $@
	ar rcs $@ $^

# ---------------------------------------------------------------- tests
# One suite, two runners: these files also run under `ceedling test:all`
# (project.yml).  Here a runner is generated per file for cmocka.

# What the suite and the examples need from Debian: installed when
# missing and we are root, otherwise the exact command to run.
DEB_NEEDS := /usr/include/cmocka.h:libcmocka-dev /usr/include/mbedtls/aes.h:libmbedtls-dev
cmocka:
	@missing=""; for n in $(DEB_NEEDS); do [ -f $${n%%:*} ] || missing="$$missing $${n#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing$$missing"; \
	    (apt-get install -y -qq $$missing >/dev/null 2>&1 || \
	     (apt-get update -qq && apt-get install -y -qq $$missing >/dev/null)) || exit 1; \
	  else \
	    echo "missing packages; run: sudo apt-get install$$missing"; exit 1; \
	  fi; \
	fi

$(BUILD)/runners/%_runner.c: test/%.c tools/cmocka/gen_runner.sh
	@mkdir -p $(dir $@)
	sh tools/cmocka/gen_runner.sh $< > $@

# A test may name example sources (TEST_SOURCE_FILE("examples/x_net.c")):
# they are compiled into it, as Ceedling does.  (In a pattern rule a
# literal % in the prerequisites would become the stem: hence PERCENT.)
PERCENT := %
.SECONDEXPANSION:
$(BUILD)/tests/%: test/%.c $(BUILD)/runners/%_runner.c $(LIB) tools/cmocka/unity.h $(wildcard test/support/*.h) \
                  $$(filter examples/$$(PERCENT),$$(shell sh tools/cmocka/gen_runner.sh --sources test/$$*.c)) $(wildcard examples/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Iexamples $< $(BUILD)/runners/$*_runner.c $(filter examples/%.c,$^) $(LIB) -lcmocka $(EXTRA_LIBS) -o $@

# Runs this PORT's suite; results land in $(RESULTS) for the total.
test-port: cmocka
	@$(MAKE) --no-print-directory $(TEST_BINS)
	@rm -rf $(RESULTS)
	@echo "== suite, port $(PORT)$(VARIANT)"
	@sh tools/cmocka/run_suite.sh run $(RESULTS) $(TEST_BINS) || true

test: cmocka
	@for p in $(PORTS); do $(MAKE) --no-print-directory test-port PORT=$$p || exit 1; done
	@sh tools/cmocka/run_suite.sh total $(foreach p,$(PORTS),build/$(p)/results)

sanitize: cmocka
	@for p in $(PORTS); do \
	  $(MAKE) --no-print-directory test-port PORT=$$p VARIANT=-san \
	    XFLAGS="$(SAN_FLAGS)" OPT=-O1 || exit 1; done
	@sh tools/cmocka/run_suite.sh total $(foreach p,$(PORTS),build/$(p)-san/results)

# ThreadSanitizer over the suite, both ports (clang).  Processes are TSan
# fibers (src/kpn_int.h), so stack switches are understood.  clang 14's
# TSan cannot map its shadow on kernels with high mmap randomisation;
# then the tests run with address randomisation off (setarch -R).
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
tsan: cmocka
	@command -v clang >/dev/null || { echo "tsan needs clang: apt-get install clang"; exit 1; }
	@for p in $(PORTS); do \
	  $(MAKE) --no-print-directory CC=clang PORT=$$p VARIANT=-tsan XFLAGS="$(TSAN_FLAGS)" OPT=-O1 \
	    $(patsubst build/$(PORT)/%,build/$$p-tsan/%,$(TEST_BINS)) >/dev/null || exit 1; \
	  rm -rf build/$$p-tsan/results; \
	  echo "== suite under ThreadSanitizer, port $$p"; \
	  if build/$$p-tsan/tests/test_status >/dev/null 2>&1; then run=""; else run="setarch $$(uname -m) -R"; fi; \
	  TSAN_OPTIONS="halt_on_error=1 exitcode=66" $$run sh tools/cmocka/run_suite.sh run build/$$p-tsan/results \
	    $(patsubst build/$(PORT)/%,build/$$p-tsan/%,$(TEST_BINS)) || true; \
	done
	@sh tools/cmocka/run_suite.sh total $(foreach p,$(PORTS),build/$(p)-tsan/results)

# Ceedling links each test with only the sources it names through
# TEST_SOURCE_FILE (no header of the API matches a source by base name).
# `make test` links the whole library and would not notice a missing one;
# this links every test the way Ceedling will, on the posix port.
check-ceedling-links: cmocka
	@set -e; d=build/ceedling-links; rm -rf $$d; mkdir -p $$d; \
	for t in $(TESTS); do \
	  n=$$(basename $$t .c); \
	  sh tools/cmocka/gen_runner.sh $$t > $$d/$${n}_runner.c; \
	  $(CC) $(WARN) -DTEST -Iinclude -Iport -Isrc -Iexamples -Itools/cmocka $$t $$d/$${n}_runner.c \
	    $$(sh tools/cmocka/gen_runner.sh --sources $$t) -lcmocka $(EXTRA_LIBS) -o $$d/$$n \
	    || { echo "check-ceedling-links: $$t names too few sources with TEST_SOURCE_FILE"; exit 1; }; \
	done; echo "check-ceedling-links: every test links with only the sources it names"

# Line and branch coverage of src/ and port/ over the suite on both ports
# (gcov + gcovr); fails below 90% of lines or 85% of branches.
COV_LINES ?= 90
COV_BRANCHES ?= 85
coverage: cmocka
	@command -v gcovr >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y -qq gcovr >/dev/null 2>&1; } || { echo "coverage needs gcovr: apt-get install gcovr"; exit 1; }
	@rm -rf $(foreach p,$(PORTS),build/$(p)-cov)
	@for p in $(PORTS); do \
	  $(MAKE) --no-print-directory test-port PORT=$$p VARIANT=-cov XFLAGS="--coverage -fprofile-update=atomic" OPT=-O0 >/dev/null || exit 1; \
	done
	@sh tools/cmocka/run_suite.sh total $(foreach p,$(PORTS),build/$(p)-cov/results) | tail -n 1
	@gcovr --root . --filter 'src/' --filter 'port/' --exclude-unreachable-branches \
	  --print-summary --txt build/coverage.txt \
	  --fail-under-line $(COV_LINES) --fail-under-branch $(COV_BRANCHES) \
	  $(foreach p,$(PORTS),build/$(p)-cov) | tail -n 3
	@echo "coverage: per-file report in build/coverage.txt"

# The suite under valgrind's memcheck, on the ucontext port, with the
# process stacks announced to valgrind (KPN_VALGRIND).  Any error fails.
VALGRIND_RUN := valgrind --quiet --error-exitcode=99 --track-origins=yes --max-stackframe=8388608
valgrind: cmocka
	@command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind"; exit 1; }
	@$(MAKE) --no-print-directory PORT=posix VARIANT=-vg XFLAGS="-DKPN_VALGRIND" OPT=-O1 \
	  $(patsubst build/$(PORT)/%,build/posix-vg/%,$(TEST_BINS)) >/dev/null
	@rm -rf build/posix-vg/results
	@echo "== suite under valgrind memcheck, port posix"
	@KPN_TEST_WRAPPER="$(VALGRIND_RUN)" KPN_TEST_TIMEOUT=1200 \
	  sh tools/cmocka/run_suite.sh run build/posix-vg/results $(patsubst build/$(PORT)/%,build/posix-vg/%,$(TEST_BINS)) >build/valgrind.log 2>&1 || true
	@grep -E "^==[0-9]+== [A-Z]|FAILED:" build/valgrind.log | head -40 || true
	@sh tools/cmocka/run_suite.sh total build/posix-vg/results

# libFuzzer over whole networks (clang): tools/fuzz/.  FUZZ_SECONDS bounds
# the run; tools/fuzz/corpus/ seeds it, and what it finds stays in
# build/fuzz/corpus (tools/fuzz/run.sh --merge copies it into the repo).
FUZZ_SECONDS ?= 60
fuzz: cmocka
	@sh tools/fuzz/run.sh $(FUZZ_SECONDS)

# ---------------------------------------------------------------- bare metal
# The core and the Cortex-M port as firmware builds them (M4F, M3, M0,
# RV64), libc and allocator checks, and the footprint figures from a
# target build run under QEMU (tools/check_embedded.sh).
check-embedded:
	@sh tools/check_embedded.sh

# The Cortex-M port on its targets, under QEMU (tools/test_qemu.sh).
test-qemu:
	@sh tools/test_qemu.sh

# examples/firmware: a Cortex-M4F firmware, built and run under QEMU.
firmware:
	@$(MAKE) --no-print-directory -C examples/firmware run

# ---------------------------------------------------------------- examples
examples: cmocka $(EXAMPLE_BINS)

$(BUILD)/examples/%: examples/%.c $$(wildcard examples/$$*_net.c) $(wildcard examples/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DKPN_EXAMPLE_PORT='"$(PORT)"' -Iexamples $(filter %.c,$^) $(LIB) $(EXTRA_LIBS) -o $@

# The examples users run first: AES and H.264, a summary at the end.
demo: cmocka
	@$(MAKE) --no-print-directory examples PORT=$(PORT) >/dev/null
	@sh tools/demo.sh build/$(PORT)

# The papers' sweeps, scaled to this machine: CSV under build/bench/,
# plots in docs/bench/ (minutes; not part of CI).
bench: cmocka
	@for p in $(PORTS); do $(MAKE) --no-print-directory examples PORT=$$p >/dev/null || exit 1; done
	@command -v gnuplot >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y -qq gnuplot-nox >/dev/null 2>&1; } || true
	@sh tools/bench/run.sh

clean:
	rm -rf build
