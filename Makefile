# transformer-steps: the two commands a learner needs are
#   make walkthrough   # install what the chapters need, build them (chapter 1 first), run every
#                      # chapter (chapters/ch*.cpp) in order while the next ones build
#   make test          # install everything, build everything, pass every test (+ ASan/UBSan build)
# Everything else is a building block of those two.

MAKEFLAGS  += --no-print-directory
BUILD      ?= build
ASAN_BUILD ?= build-asan
GENERIC_BUILD ?= build-generic
CLANG_BUILD ?= build-clang
JOBS       ?= $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
PYTHON     ?= /usr/bin/python3
CHAPTERS   := $(sort $(basename $(notdir $(wildcard chapters/ch*.cpp))))

.PHONY: all deps configure build walkthrough mutants test test-unit test-asan test-generic test-debian13 debian13-start debian13-stage test-arm64 test-clang test-platforms fuzz transcripts bench clean help

all: build

help:
	@echo "make walkthrough  install what the chapters need, build them (chapter 1 first), run every chapter in order"
	@echo "make test         install deps, build, run unit + twin tests, the ASan/UBSan build, a generic x86-64 build, a clang + libc++ build, arm64 under qemu and (Debian, root) a Debian 13 chroot"
	@echo "make build        build the core, chapters, tests and tools into $(BUILD)/"
	@echo "make transcripts  regenerate docs/transcripts/ from the PyTorch twins (seed 0)"
	@echo "make bench        run the benchmarks side by side with OpenBLAS, PyTorch and ONNX Runtime"
	@echo "make mutants CH=ch06 [N=40]  small wrong edits at the code the chapter runs: which sentences noticed ($(BUILD)/mutants/)"
	@echo "make test-clang   a clang + libc++ build: warning-free, its unit tests, --plain output equal to GCC's"
	@echo "make fuzz         run the tokenizer/vocabulary fuzz target (libFuzzer, ASan+UBSan) for 10 minutes"
	@echo "make deps         install missing packages (apt or Homebrew) and the BERT vocabulary"
	@echo "make test-debian13  build and test in a Debian 13 chroot (cached in /var/cache/transformer-steps; root)"
	@echo "make test-arm64   cross-build for arm64, run every chapter under qemu-user, compare with this build"
	@echo "make test-platforms  test-clang, test-arm64 and test-debian13"

deps:
	@scripts/deps.sh all

# Every target that builds tests or benchmarks turns them on, also in a folder make walkthrough
# configured for the chapters alone (its objects are reused).
configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DTS_TESTS=ON -DTS_BENCH=ON >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only what the chapters need (scripts/deps.sh chapters: no PyTorch, clang, Catch2 or Google
# Benchmark; no tests, no benchmarks built): the core and chapter 1 first, chapter 1 shown, the
# other chapters built in the background meanwhile (scripts/walkthrough.sh --build).
# On a terminal: a pause after each step and before each chapter (Enter, or q to stop); piped:
# straight through.
walkthrough:
	@scripts/deps.sh chapters
	@JOBS=$(JOBS) scripts/walkthrough.sh --build $(BUILD)

test-unit: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTS_SANITIZE=ON -DTS_BENCH=OFF >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L sanitize

# A build for generic x86-64 (-DTS_NATIVE=OFF), as a distribution would ship it: the unit
# tests (every SIMD route this CPU runs, bit-exact products) must pass there too.
test-generic: deps
	@cmake -S . -B $(GENERIC_BUILD) -DCMAKE_BUILD_TYPE=Release -DTS_NATIVE=OFF -DTS_BENCH=OFF >/dev/null
	@cmake --build $(GENERIC_BUILD) -j $(JOBS) --target unit_targets
	@cd $(GENERIC_BUILD) && ctest --output-on-failure -j $(JOBS) -L unit

# clang with libc++ (scripts/clang.sh): built warning-free (warnings are errors there), its unit
# tests, and every chapter's --plain output byte-identical to the GCC build's.
test-clang: build
	@JOBS=$(JOBS) scripts/clang.sh $(CLANG_BUILD) $(BUILD)

# make test (and so CI): Debian 12's GCC builds (ASan+UBSan, generic x86-64, the full Release
# suite), the clang + libc++ build, the Debian 13 stage below and, on an x86-64 Debian host,
# the arm64 cross build under qemu-user (about 13 minutes cold on 2 cores; on an arm64 machine
# the suite above already runs natively, so it is left out there).
ARM64_IN_TEST := $(if $(and $(filter x86_64,$(shell uname -m)),$(shell command -v dpkg)),test-arm64)
# The Debian 13 stage (scripts/debian13.sh, TS_DEBIAN13_TESTS=lean): on a Debian host run as
# root. Making the chroot (debootstrap, then scripts/deps.sh all inside: mostly downloading and
# unpacking) starts in the background right after make deps (debian13-start) and overlaps the
# builds and tests above; debian13-stage waits for it (its log: $(TS_DEBIAN13_ROOT).setup.log,
# its failure fails make test with the log's end), then builds what the lean tests run inside
# the chroot and runs them. Measured from nothing (2026-11-27, 2 cores shared, load 3-12): the
# setup 4.3 minutes (1.5 of CPU, in the background), the build 9.4 and the tests 13, 12.6
# minutes of CPU for the two: on 2 idle cores at least 6.3 minutes (not timed on a quiet
# machine). DEBIAN13_IN_TEST= leaves it out. On Debian 13 itself (trixie, a chroot included) the
# suite above already is the Debian 13 run: no chroot is made inside it.
TS_DEBIAN13_ROOT ?= /var/cache/transformer-steps/debian13
DEBIAN13_IN_TEST ?= $(if $(and $(shell grep -qx 'ID=debian' /etc/os-release 2>/dev/null && ! grep -qx 'VERSION_CODENAME=trixie' /etc/os-release && echo y),$(filter 0,$(shell id -u))),debian13-stage)
test: deps $(if $(DEBIAN13_IN_TEST),debian13-start) test-asan test-generic test-unit test-clang $(ARM64_IN_TEST) $(DEBIAN13_IN_TEST)

debian13-start: deps
	@TS_DEBIAN13_ROOT=$(TS_DEBIAN13_ROOT) scripts/debian13.sh start

debian13-stage: debian13-start
	@TS_DEBIAN13_ROOT=$(TS_DEBIAN13_ROOT) scripts/debian13.sh join
	@TS_DEBIAN13_ROOT=$(TS_DEBIAN13_ROOT) TS_DEBIAN13_TESTS=lean JOBS=$(JOBS) scripts/debian13.sh test

# Every platform run: clang + libc++, arm64 under qemu, Debian 13 in a chroot.
test-platforms: test-clang test-arm64 test-debian13

# Debian 13 in a debootstrap chroot (scripts/debian13.sh): made once and reused, its deps from
# scripts/deps.sh; the unit tests, every chapter's twin against its PyTorch 2.6, the --lang zh
# tests (TS_DEBIAN13_TESTS=lean, the default; =platform: every twin and the docs samples too;
# =all: the whole ctest).
test-debian13:
	@TS_DEBIAN13_ROOT=$(TS_DEBIAN13_ROOT) JOBS=$(JOBS) scripts/debian13.sh test

# arm64: a cross build (build-arm64/) run under qemu-user; every chapter's --plain output must
# be byte-identical to this machine's build, and the unit tests pass (scripts/arm64.sh).
test-arm64: build
	@scripts/arm64.sh $(BUILD)

# The fuzz targets of the ASan build, FUZZ_SECONDS each (the tokenizer and vocabulary loader,
# then ch11's safetensors reader, seeded by the real writer, then the .mo catalog reader of src/data/);
# findings land in $(ASAN_BUILD)/fuzz-long/.
FUZZ_SECONDS ?= 600
fuzz: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTS_SANITIZE=ON -DTS_BENCH=OFF >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target fuzz_tokenizer fuzz_safetensors fuzz_mo
	@mkdir -p $(ASAN_BUILD)/fuzz-long/corpus $(ASAN_BUILD)/fuzz-long/safetensors $(ASAN_BUILD)/fuzz-long/mo
	@cd $(ASAN_BUILD)/fuzz-long && ../fuzz_tokenizer -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	  -rss_limit_mb=4096 corpus $(CURDIR)/tests/fuzz/corpus
	@cd $(ASAN_BUILD)/fuzz-long && TS_FUZZ_SEEDS=safetensors ../fuzz_safetensors -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=2048 -rss_limit_mb=4096 safetensors
	@cd $(ASAN_BUILD)/fuzz-long && TS_FUZZ_SEEDS=mo ../fuzz_mo -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=4096 -rss_limit_mb=4096 mo

transcripts: deps
	@scripts/transcripts.sh

bench: build
	@scripts/bench.sh $(BUILD)

# make mutants CH=ch06 [N=40]: the mutant explorer (scripts/mutants.py). Small wrong edits at the
# code the chapter's steps ran (their code: lines), each rebuilt in a temporary copy and run; the
# report ($(BUILD)/mutants/chNN_x.md) lists per mutant the exit code, the verdicts that changed
# and the sentences printed unchanged beside numbers that changed. CH='ch06 ch09': several.
mutants:
	@test -n "$(CH)" || { echo "make mutants: name the chapter: make mutants CH=ch06 (several: CH='ch06 ch09'; N=30 caps the mutants per chapter)" >&2; exit 2; }
	@targets=$$($(PYTHON) scripts/mutants.py --resolve $(CH)) || exit 2; \
	  test -f $(BUILD)/compile_commands.json || $(MAKE) configure || exit 1; \
	  nice -n 10 cmake --build $(BUILD) -j $(JOBS) --target $$targets || exit 1; \
	  $(PYTHON) scripts/mutants.py $(BUILD) $(CH) $(if $(N),--max $(N))

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(GENERIC_BUILD) $(CLANG_BUILD) $(CLANG_BUILD)-libstdcxx
