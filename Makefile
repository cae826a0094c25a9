# kpn: build, test and check.  `make help` lists the targets.
# Recipes build; the checks and anything that installs live in tools/.

# The assembly switch where the host has one, ucontext anywhere else;
# `make test` runs both.  PORT=aarch64 also builds on another host with
# an AArch64 CC (make test-aarch64).
ARCH := $(shell uname -m)
ifeq ($(ARCH),x86_64)
PORT ?= amd64
PORTS := amd64 posix
else ifeq ($(ARCH),aarch64)
PORT ?= aarch64
PORTS := aarch64 posix
else
PORT ?= posix
PORTS := posix
endif

CC      ?= cc
OPT     ?= -O2
WARN    := -std=c99 -pedantic -Wall -Wextra -Werror
CFLAGS  ?=
# VARIANT names a build flavour (e.g. -san); its objects live apart.
VARIANT ?=
XFLAGS  ?=
BUILD   := build/$(PORT)$(VARIANT)

ALL_CFLAGS = $(WARN) $(OPT) -g $(XFLAGS) $(CFLAGS) -Iinclude -Iport

# The core, and per port what it adds: its switch and, on a hosted
# system, the POSIX thread services.
SRC := $(sort $(wildcard src/*.c))
PORT_SRC_amd64 := port/amd64/port_amd64.c port/amd64/switch_amd64.S port/pthread/thread_pthread.c
PORT_SRC_aarch64 := port/aarch64/port_aarch64.c port/aarch64/switch_aarch64.S port/pthread/thread_pthread.c
PORT_SRC_posix := port/posix/port_posix.c port/pthread/thread_pthread.c
PORT_SRC := $(PORT_SRC_$(PORT))
# The yielding build (make test-yield) adds its hook.
ifneq ($(findstring -DKPN_FUZZ_YIELD,$(XFLAGS)),)
PORT_SRC += port/pthread/fuzz_yield.c
endif
ifeq ($(PORT_SRC),)
$(error PORT must be one of: amd64 aarch64 posix)
endif

OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter %.c,$(SRC) $(PORT_SRC))) \
       $(patsubst %.S,$(BUILD)/obj/%.o,$(filter %.S,$(PORT_SRC)))
LIB := $(BUILD)/libkpn.a

TESTS       := $(sort $(wildcard test/test_*.c))
TEST_BINS   := $(patsubst test/%.c,$(BUILD)/tests/%,$(TESTS))
# KPN_TEST_PORT_POSIX: the port under test starts a process with the
# floating-point state of the thread that made it (port.h, kpn_port_init)
TEST_CFLAGS  = $(ALL_CFLAGS) -DTEST $(if $(filter posix,$(PORT)),-DKPN_TEST_PORT_POSIX) -Itools/cmocka -Isrc
RESULTS     := $(BUILD)/results

# examples/NAME.c is a program; so is examples/NAME/ (every .c in it).
# bench/NAME.c is a driver, linked with the shared helper bench/bench.c,
# the random-network generator and what BENCH_SRC_NAME adds.
EX_FILES   := $(basename $(notdir $(wildcard examples/*.c)))
EX_DIRS    := $(patsubst examples/%/,%,$(sort $(dir $(wildcard examples/*/*.c))))
EX_DIRS    := $(filter-out firmware,$(EX_DIRS))
EXAMPLES   := $(EX_FILES) $(EX_DIRS)
BENCHES    := $(filter-out bench randnet replay,$(basename $(notdir $(wildcard bench/*.c))))
BENCH_SHARED := $(wildcard bench/bench.c bench/randnet.c)
BENCH_SRC_random := bench/replay.c
BENCH_SRC_aes := $(filter-out examples/aes/aes.c,$(wildcard examples/aes/*.c))
EXAMPLE_BINS := $(addprefix $(BUILD)/examples/,$(EXAMPLES))
BENCH_BINS   := $(addprefix $(BUILD)/bench/,$(BENCHES))
# libraries the programs and tests use besides libc (AES from mbedTLS)
EXTRA_LIBS   := -lmbedcrypto -lm -lpthread

SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# --fair-sched=yes: valgrind runs one thread at a time, and its default
# lock hands the CPU on unfairly, so a thread that spins without a system
# call (an idle runner, a test's writer waiting for its reader) could
# keep another from running for seconds: a test that bounds such a wait
# then failed, rarely.  Round robin also runs test_runners in 6 s, not 30.
VALGRIND_RUN := valgrind --quiet --error-exitcode=99 --track-origins=yes --max-stackframe=8388608 \
                --fair-sched=yes

.PHONY: all lib test test-port test-bins sanitize tsan test-yield test-compact valgrind coverage fuzz fuzz-api fuzz-yield \
        check-ceedling-links check-cli check-embedded check-doc-figures test-qemu test-qemu-riscv test-aarch64 firmware firmware-riscv examples bench-bins deps-examples demo bench scaling clean help
.DELETE_ON_ERROR:
# keep generated runners: gcovr reads them, and they need no rebuilding
.SECONDARY:

all: lib examples bench-bins

help:
	@echo "make lib [PORT=amd64|aarch64|posix] build/PORT/libkpn.a"
	@echo "make test                     the suite on cmocka, every port (installs cmocka, mbedTLS if missing: as root)"
	@echo "make test-port PORT=...       the suite on one port"
	@echo "make sanitize                 the suite under ASan+UBSan, every port"
	@echo "make tsan                     the suite under ThreadSanitizer, every port"
	@echo "make test-yield               the suite, its library giving up the CPU at random (races), every port"
	@echo "make test-compact             the suite in the compact layout (KPN_COMPACT 1, bare metal's), every port"
	@echo "make valgrind                 the suite under valgrind memcheck, ucontext port"
	@echo "make coverage                 line and branch coverage of src/ and port/ (gcovr), with a floor"
	@echo "make fuzz [FUZZ_SECONDS=60]   libFuzzer over random networks against a reference interpreter"
	@echo "make fuzz-api [FUZZ_SECONDS=60] libFuzzer over hostile API call sequences (docs/errors.md)"
	@echo "make fuzz-yield [FUZZ_SECONDS=60] make fuzz, its library giving up the CPU at random (races)"
	@echo "make check-embedded           the core and the bare-metal ports for M4F, M3, M0, M33, M23, RV32, RV64: libc check, footprint"
	@echo "make test-qemu                the Cortex-M port's target tests under QEMU (M4F, M3, M0 code, M33F, M23 code; the M4F at -O0)"
	@echo "make test-qemu-riscv          the RISC-V port's target tests under QEMU virt (RV32 and RV64, without FP, with F, with D; and at -O0)"
	@echo "make test-aarch64             the AArch64 port's suite, examples and ring under qemu-aarch64 (another host)"
	@echo "make firmware                 examples/firmware, built and run under QEMU (M4F)"
	@echo "make firmware-riscv           the same firmware for RISC-V, under QEMU virt (RV32, then RV64)"
	@echo "make check-doc-figures        the stack figures docs/porting.md quotes, against the targets under QEMU"
	@echo "make check-ceedling-links     each test built the way Ceedling builds it"
	@echo "make examples [PORT=...]      build/PORT/examples/*: programs that teach, AES, H.264"
	@echo "make bench-bins [PORT=...]    build/PORT/bench/*: the papers' benchmark drivers"
	@echo "make demo                     build and run the AES and H.264 examples"
	@echo "make bench                    the papers' sweeps: CSV in build/bench, plots and table in docs/"
	@echo "make scaling                  speedup against runners, 1 to the CPUs (at most 16): table and plot in build/bench"
	@echo "make amalgamation             build/amalgamation/kpn.c and kpn.h: the one-file distribution"
	@echo "make install PREFIX=...       header, libkpn.a, kpn.pc and the CMake package"
	@echo "make check-packaging          consumers through pkg-config, CMake, the amalgamation, README's steps"
	@echo "make check-cli                every example and bench driver: --help, bad options, a short run"
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

$(BUILD)/runners/%_runner.c: test/%.c tools/cmocka/gen_runner.sh
	@mkdir -p $(dir $@)
	sh tools/cmocka/gen_runner.sh $< > $@

# A test that includes "mock_port.h" is linked with a mock of port/port.h
# (CMock's interface, for cmocka), ahead of the library: the archive's port
# objects are then never pulled in.
$(BUILD)/mocks/mock_%.c: port/%.h tools/cmocka/gen_mock.sh
	sh tools/cmocka/gen_mock.sh $< $(dir $@)

# A test may name program sources (TEST_SOURCE_FILE("examples/aes/aes_net.c")):
# they are compiled into it, as Ceedling does, with their folders on the
# include path.  (In a pattern rule a literal % in the prerequisites would
# become the stem: hence PERCENT.)
PERCENT := %
.SECONDEXPANSION:
$(BUILD)/tests/%: test/%.c $(BUILD)/runners/%_runner.c $(LIB) tools/cmocka/unity.h $(wildcard test/support/*.h) \
                  $$(filter examples/$$(PERCENT) bench/$$(PERCENT),$$(shell sh tools/cmocka/gen_runner.sh --sources test/$$*.c)) \
                  $(wildcard examples/*/*.h bench/*.h) \
                  $$(patsubst $$(PERCENT),$(BUILD)/mocks/mock_$$(PERCENT).c,$$(shell sh tools/cmocka/gen_runner.sh --mocks test/$$*.c))
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(addprefix -I,$(sort $(dir $(filter examples/%.c bench/%.c,$^)))) -I$(BUILD)/mocks \
	  $< $(BUILD)/runners/$*_runner.c $(filter examples/%.c bench/%.c $(BUILD)/mocks/%.c,$^) $(LIB) -lcmocka $(EXTRA_LIBS) -o $@

test-bins: $(TEST_BINS)

# Runs this PORT's suite; fails if a test fails.  Results land in
# $(RESULTS) for the total.
test-port:
	@sh tools/deps.sh test
	@rm -rf $(RESULTS) # first: a suite that does not build leaves no results to total
	@$(MAKE) --no-print-directory test-bins
	@echo "== suite, port $(PORT)$(VARIANT)"
	@sh tools/cmocka/run_suite.sh run $(RESULTS) $(TEST_BINS)

# Every port runs even when one fails; then the H.264 example's stream is
# decoded by ffmpeg (when installed) and compared; the total's line ends it.
test:
	@sh tools/deps.sh test
	@for p in $(PORTS); do $(MAKE) --no-print-directory test-port PORT=$$p; done; \
	$(MAKE) --no-print-directory examples >/dev/null && sh tools/check_h264.sh $(BUILD); h264=$$?; \
	sh tools/cmocka/run_suite.sh total $(foreach p,$(PORTS),build/$(p)/results) && exit $$h264

sanitize:
	@sh tools/deps.sh test
	@for p in $(PORTS); do $(MAKE) --no-print-directory test-port PORT=$$p VARIANT=-san \
	    XFLAGS="$(SAN_FLAGS)" OPT=-O1; done; \
	sh tools/cmocka/run_suite.sh total $(foreach p,$(PORTS),build/$(p)-san/results)

tsan:
	@sh tools/deps.sh test clang
	@sh tools/tsan.sh $(PORTS); s=$$?; \
	sh tools/cmocka/run_suite.sh total $(foreach p,$(PORTS),build/$(p)-tsan/results) && exit $$s

# The suite in a build whose library gives up the CPU at random where
# it touches what the runners share (port/pthread/fuzz_yield.c): the
# interleavings a loaded machine makes rarely come often.
test-yield:
	@sh tools/deps.sh test
	@for p in $(PORTS); do $(MAKE) --no-print-directory test-port PORT=$$p VARIANT=-yield \
	    XFLAGS="-DKPN_FUZZ_YIELD"; done; \
	sh tools/cmocka/run_suite.sh total $(foreach p,$(PORTS),build/$(p)-yield/results)

# The suite in the layout for small memories, the default off Unix
# (KPN_COMPACT 1), which the bare-metal targets run only their own tests
# in: a test of what only the hosted layout has skips itself there.
test-compact:
	@sh tools/deps.sh test
	@for p in $(PORTS); do $(MAKE) --no-print-directory test-port PORT=$$p VARIANT=-compact \
	    XFLAGS="-DKPN_COMPACT=1"; done; \
	sh tools/cmocka/run_suite.sh total $(foreach p,$(PORTS),build/$(p)-compact/results)

# The suite under memcheck on the ucontext port, with the process stacks
# announced to valgrind (KPN_VALGRIND).  Any error fails.
valgrind:
	@sh tools/deps.sh test valgrind
	@$(MAKE) --no-print-directory PORT=posix VARIANT=-vg XFLAGS="-DKPN_VALGRIND" OPT=-O1 test-bins >/dev/null
	@rm -rf build/posix-vg/results
	@echo "== suite under valgrind memcheck, port posix"
	@KPN_TEST_WRAPPER="$(VALGRIND_RUN)" KPN_TEST_TIMEOUT=1200 \
	  sh tools/cmocka/run_suite.sh run build/posix-vg/results build/posix-vg/tests/test_* >build/valgrind.log 2>&1; \
	grep -E "^==[0-9]+== [A-Z]|FAILED:" build/valgrind.log | head -40; \
	sh tools/cmocka/run_suite.sh total build/posix-vg/results

# Line and branch coverage of src/ and port/ over the suite on every port;
# fails below COV_LINES % of lines or COV_BRANCHES % of branches.  Each
# branch of the source counts once: the build forces nothing in line.
COV_LINES ?= 90
COV_BRANCHES ?= 88
coverage:
	@sh tools/deps.sh test gcovr
	@sh tools/coverage.sh $(COV_LINES) $(COV_BRANCHES) $(PORTS)

# libFuzzer over whole networks (clang): tools/fuzz/.
FUZZ_SECONDS ?= 60
fuzz:
	@sh tools/deps.sh test clang
	@sh tools/fuzz/run.sh $(FUZZ_SECONDS)

# The same, in a build whose library gives up the CPU at random at its
# shared accesses and locks (tools/fuzz/README.md, --yield).
fuzz-yield:
	@sh tools/deps.sh test clang
	@sh tools/fuzz/run.sh --yield $(FUZZ_SECONDS)

# The API target (tools/fuzz/fuzz_api.c): hostile call sequences.
fuzz-api:
	@sh tools/deps.sh test clang
	@sh tools/fuzz/run.sh --target=api $(FUZZ_SECONDS)

# What breaks `ceedling test:all` and not `make test`: an #include that does
# not survive Ceedling's runner (copied without folders, #if ignored), a
# missing TEST_SOURCE_FILE.
check-ceedling-links:
	@sh tools/deps.sh test
	@sh tools/check_ceedling_rules.sh

# The core and the Cortex-M port as firmware builds them, and the
# footprint figures from a target build run under QEMU.
check-embedded:
	@sh tools/deps.sh cross qemu
	@sh tools/check_embedded.sh

# The Cortex-M port's target tests under QEMU: M4F, M3, an ARMv6-M build,
# M33F, an ARMv8-M Baseline build and the M4F built with -O0
# (tools/test_qemu.sh).
test-qemu:
	@sh tools/deps.sh cross qemu
	@sh tools/test_qemu.sh

# The RISC-V port's target tests under QEMU's virt machine: RV32 and
# RV64, each without FP, with F and with D, and the six built with -O0
# (tools/test_qemu_riscv.sh).
test-qemu-riscv:
	@sh tools/deps.sh cross qemu-riscv
	@sh tools/test_qemu_riscv.sh

# The stack figures docs/porting.md quotes, against what the targets'
# tests and the firmware example measure now under QEMU.
check-doc-figures:
	@sh tools/deps.sh cross qemu qemu-riscv
	@sh tools/check_doc_figures.sh

# The AArch64 Linux port from a host of another architecture: cross
# compiled, run under qemu-aarch64 (tools/test_aarch64.sh).
test-aarch64:
	@sh tools/deps.sh aarch64
	@sh tools/test_aarch64.sh

# examples/firmware: a Cortex-M4F firmware, built and run under QEMU.
firmware:
	@sh tools/deps.sh cross qemu
	@$(MAKE) --no-print-directory -C examples/firmware run

# The same firmware on RISC-V, under QEMU's virt machine in machine
# mode: RV32 (rv32imac) and RV64 (rv64gc).
firmware-riscv:
	@sh tools/deps.sh cross qemu-riscv
	@$(MAKE) --no-print-directory -C examples/firmware run-riscv
	@$(MAKE) --no-print-directory -C examples/firmware run-riscv RV64=1

# ---------------------------------------------------------------- programs
examples: $(EXAMPLE_BINS)
bench-bins: $(BENCH_BINS)
# Every program links mbedTLS (the AES example's cipher): where the
# compiler does not find it, deps.sh says which package is missing (or
# installs it) before the first program fails to build.  Order-only: the
# check rebuilds nothing.
$(EXAMPLE_BINS) $(BENCH_BINS): | deps-examples
deps-examples:
	@printf '#include <mbedtls/aes.h>\n' | $(CC) $(ALL_CFLAGS) -E -x c - >/dev/null 2>&1 || \
	  sh tools/deps.sh examples

# EXAMPLE_SRC_NAME: what an example takes from outside its folder (the
# H.264 example times itself with the bench helper).
EXAMPLE_SRC_h264 := bench/bench.c
$(BUILD)/examples/%: $$(wildcard examples/$$*.c examples/$$*/*.c examples/$$*/*.h) $$(EXAMPLE_SRC_$$*) \
                     $(wildcard examples/*.h bench/bench.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DKPN_BENCH_PORT='"$(PORT)"' -Iexamples/$* $(addprefix -I,$(sort $(dir $(EXAMPLE_SRC_$*)))) $(filter %.c,$^) $(LIB) $(EXTRA_LIBS) -o $@

$(BUILD)/bench/%: bench/%.c $(BENCH_SHARED) $$(BENCH_SRC_$$*) $(wildcard bench/*.h examples/*/*.h) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DKPN_BENCH_PORT='"$(PORT)"' -Ibench $(addprefix -I,$(sort $(dir $(BENCH_SRC_$*)))) \
	  $(filter %.c,$^) $(LIB) $(EXTRA_LIBS) -o $@

# The examples users run first: AES and H.264, a summary at the end.
demo:
	@sh tools/deps.sh test ffmpeg
	@$(MAKE) --no-print-directory examples bench-bins PORT=$(PORT) >/dev/null
	@sh tools/demo.sh build/$(PORT)

# The papers' sweeps (minutes; not part of CI): CSV under build/bench/,
# plots in docs/bench/ and the figures table docs/figures.md.
# The H.264 row needs examples/h264, which is timed only if it builds.
bench:
	@sh tools/deps.sh test gnuplot
	@for p in $(PORTS); do $(MAKE) --no-print-directory bench-bins PORT=$$p >/dev/null || exit 1; done
	@$(MAKE) --no-print-directory build/amd64/examples/h264 PORT=amd64 >/dev/null 2>&1 || \
	  echo "bench: examples/h264 does not build; no H.264 row" >&2
	@sh tools/bench/run.sh

# Speedup against runners on this machine's CPUs (minutes; not part of
# CI): build/bench/scaling.csv, .md (the table) and .png.
scaling: bench-bins
	@sh tools/bench/scaling.sh --bin=$(BUILD)/bench

clean:
	rm -rf build

# ---------------------------------------------------------------- packaging
.PHONY: amalgamation install check-packaging

# One-file distribution: build/amalgamation/kpn.c and kpn.h.
amalgamation:
	@sh tools/amalgamate.sh build/amalgamation

# Header, library, pkg-config file and CMake package under DESTDIR/PREFIX.
PREFIX ?= /usr/local
install: lib
	@sh tools/install.sh $(LIB) $(PREFIX) $(DESTDIR)

# Every example and benchmark driver: --help, an unknown option, a bad
# value and a short run, as README's "What else is here" says.
check-cli:
	@sh tools/deps.sh test
	@$(MAKE) --no-print-directory examples bench-bins PORT=$(PORT) >/dev/null
	@sh tools/check_cli.sh build/$(PORT)

# Consumers built every way a user would: pkg-config, CMake, the amalgamation.
check-packaging:
	@sh tools/deps.sh packaging cross
	@sh tools/check_packaging.sh
