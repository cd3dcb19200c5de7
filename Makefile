# memharness: two commands do all the set-up on a fresh machine.
#   make run    installs what is missing, builds (release), runs every scenario, writes Reports/latest/
#   make test   installs what is missing, builds (debug) and runs the whole test suite, the example's included
# Other targets: deps, build, example, example-server, docs, bench, bench-stability, bench-history, history-series, bench-corpus,
# bench-real-programs, bench-heap-cost, bench-server-throughput, soak, sample-report, clean.

SWIFT        ?= swift
# Debian packages the build and the tests need; installed only when missing (python3: the lint's
# function-length check; valgrind: the heap graph's C leaks are checked against memcheck's).
DEB_PACKAGES := libjemalloc-dev libsqlite3-dev zlib1g-dev pkg-config python3 valgrind
# The browser report.html is tested in (`make browser-test`, part of `make test`): Debian's Chromium, its
# WebDriver server and the Selenium client for the system python3 (/usr/bin/python3, not a pyenv one).
BROWSER_PACKAGES := chromium chromium-driver python3-selenium
# The tools `make bench` compares with (valgrind's massif, heaptrack), and objcopy (binutils).
BENCH_PACKAGES := valgrind heaptrack binutils
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
RELEASE_BIN   = $(shell $(SWIFT) build -c release --show-bin-path)
# Extra arguments for `make run`, e.g. make run ARGS="live-query --quick"
ARGS         ?=
# Which benchmarks `make bench` runs, with their options, e.g. make bench BENCH="floor --rounds 5"; empty: all
BENCH        ?=

.PHONY: deps bench-deps build run test example example-server docs soak lint format bench bench-stability bench-history history-series
.PHONY: bench-corpus bench-real-programs bench-heap-cost bench-server-throughput sample-report clean
.PHONY: browser-deps browser-test

# $(call install-missing,PACKAGES): apt-get install those of PACKAGES that are not installed.
define install-missing
	@missing=""; \
	for package in $(1); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call install-missing,$(DEB_PACKAGES))

bench-deps:
	$(call install-missing,$(BENCH_PACKAGES))

browser-deps:
	$(call install-missing,$(BROWSER_PACKAGES))

# The executable and the agent it preloads into cases for exact peaks and allocation stacks. Swift code
# keeps its frame pointers (-fno-omit-frame-pointer), so the agent's stack walk goes through it.
FRAME_POINTERS := -Xswiftc -Xcc -Xswiftc -fno-omit-frame-pointer -Xcc -fno-omit-frame-pointer

build: deps
	$(SWIFT) build -c release $(FRAME_POINTERS) --product memharness
	$(SWIFT) build -c release $(FRAME_POINTERS) --product memharness-agent
	$(SWIFT) build -c release --product memharness-load

# Every shipped scenario: under a minute after the build on 2 quiet cores (53-58 s measured; the cases of
# `parallel: true` scenarios run two at a time, as `--jobs` defaults to the number of CPUs).
run: build
	$(RELEASE_BIN)/memharness run $(ARGS)

# Serial: many tests read process-wide allocator figures, which a test running beside them would disturb.
# The agent, agent-probe, fork-stress, heap-fixtures, leak-fixtures, memharness-load and http-fixture are built first:
# no test target links them (the agent would replace the allocator of the test bundle), so the tests preload and
# spawn them, and `swift test` alone does not build them.
test: deps lint example
	$(SWIFT) build --product memharness-agent
	$(SWIFT) build --product agent-probe
	$(SWIFT) build --product fork-stress
	$(SWIFT) build --product heap-fixtures
	$(SWIFT) build --product leak-fixtures
	$(SWIFT) build --product memharness-load
	$(SWIFT) build --product http-fixture
	$(SWIFT) test --no-parallel
	$(MAKE) browser-test

# report.html in a real browser: headless Chromium driven over WebDriver (Tests/BrowserTests). It renders the sample
# report's run.json and a quick attributed run with the debug memharness, fails on any console error or on a table
# wider than the page at 1,400 px, zooms a timeline, zooms and searches a flame graph, switches a diff (of two
# strategies and of two runs), checks a 12,000-sample timeline is drawn per pixel column, and takes screenshots (kept
# in BROWSER_SCREENSHOTS=DIR; without it nothing of the test stays behind when it passes). Everything it starts is
# stopped when it ends, however it ends.
BROWSER_SCREENSHOTS ?=
browser-test: browser-deps
	$(SWIFT) build --product memharness
	$(SWIFT) build --product memharness-agent
	/usr/bin/python3 Tests/BrowserTests/report_page_test.py --memharness "$$($(SWIFT) build --show-bin-path)/memharness" \
	  --sample Reports/sample $(if $(BROWSER_SCREENSHOTS),--screenshots $(BROWSER_SCREENSHOTS))

# The example package, built as a user's package is: in its own .build, memharness compiled again from
# ../.. (about 2.5 minutes the first time on 2 cores, seconds after that). Its own tests run here; the
# ExamplesTests target of `make test` then drives its harness and `swift package memharness` on it.
EXAMPLE := Examples/JSONCache
example: deps
	$(SWIFT) build --package-path $(EXAMPLE) --product json-cache-harness
	$(SWIFT) build --package-path $(EXAMPLE) --product memharness-agent
	$(SWIFT) test --package-path $(EXAMPLE)

# The server example: a Hummingbird server (from the package mirror, in its own .build, release: about 3 minutes
# cold on an idle 2-core machine, far longer beside other builds) run by its scenario with the memharness that
# `make test` builds (debug: CI builds it once), each strategy's heap captured at exit, and the path that keeps the
# unbounded cache's responses: about 30 seconds after the builds. The report goes to
# Examples/ServerLeaks/Reports/latest (not committed, as the other example's). Not part of `make test`; .ci/run runs
# it after. PORT: the port the server listens on.
SERVER_EXAMPLE := Examples/ServerLeaks
DEBUG_BIN      = $(shell $(SWIFT) build --show-bin-path)
PORT ?= 18431
example-server: deps
	$(SWIFT) build --product memharness
	$(SWIFT) build --product memharness-agent
	$(SWIFT) build --product memharness-load
	$(SWIFT) build -c release --package-path $(SERVER_EXAMPLE) --product server-leaks
	cd $(SERVER_EXAMPLE) && $(DEBUG_BIN)/memharness run Scenarios/server-leaks.yaml --set port=$(PORT) \
	  --heap-graph --retained-by server_leaks.CachedResponse --out Reports/latest

# What measuring a server costs it: the example server (release) under load from memharness-load, alone, under the
# agent sampling at 1 ms (`profile`) and at 10 ms, counting exactly (a server strategy's per-request figures) and tracking its heap
# for the capture at exit, 11 rounds interleaved; requests/s, ratios against the 5% bar (PASS/FAIL) and the capture's
# pause. Writes Reports/benchmarks/server-throughput.md. About 5 minutes after the builds. Not part of `make test`.
# THROUGHPUT_PORT: the port the server listens on.
THROUGHPUT_PORT ?= 18432
bench-server-throughput: build
	$(SWIFT) build -c release $(FRAME_POINTERS) --product memharness-bench
	$(SWIFT) build -c release --package-path $(SERVER_EXAMPLE) --product server-leaks
	$(RELEASE_BIN)/memharness-bench server-throughput --rounds 11 --port $(THROUGHPUT_PORT) \
	  --server $(SERVER_EXAMPLE)/.build/release/server-leaks

# The documentation, with swift-docc-plugin: the MemHarness catalog (Sources/MemHarness/MemHarness.docc, the
# articles) and the symbol documentation of the libraries a package uses. Any DocC warning (an unresolved
# link, a missing symbol) fails it. Archives: .build/plugins/Swift-DocC/outputs/<target>.doccarchive.
DOC_TARGETS := MemHarness WorkloadKit MemHarnessTesting
docs: deps
	$(SWIFT) package generate-documentation $(addprefix --target ,$(DOC_TARGETS)) \
	  --exclude-extended-types --warnings-as-errors

# The fault-injection suite (Tests/FaultTests) with SOAK_TRIALS trials of every fault instead of one, then its
# table: per fault the trials with an orphaned process, a mixed or half-written report folder, temporary
# residue, a silently lost report, a wrong exit code. About 10 minutes on 2 cores.
SOAK_TRIALS ?= 20
SOAK_TABLE   = $(CURDIR)/.build/soak-table.md
soak: deps
	$(SWIFT) build --product memharness-agent
	rm -f $(SOAK_TABLE)
	MEMHARNESS_SOAK_TRIALS=$(SOAK_TRIALS) MEMHARNESS_SOAK_TABLE=$(SOAK_TABLE) \
	  $(SWIFT) test --no-parallel --filter FaultTests; status=$$?; \
	echo; echo "Fault injection, $(SOAK_TRIALS) trials per fault ($$(date -u +%Y-%m-%d), $$(nproc) cores):"; echo; \
	echo "| Fault | Trials | Orphans | Mixed or half-written folders | Temporary residue | Silent losses | Wrong exit codes | How the trials ended |"; \
	echo "|---|---:|---:|---:|---:|---:|---:|---|"; \
	sort $(SOAK_TABLE); exit $$status

# The house style: swift-format with the repository's .swift-format (120 columns), no findings; and no
# function body in the Swift sources longer than 58 lines (the rule is "under 60"; two lines of slack).
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift Plugins Examples
	python3 scripts/check-function-length.py --max 58 Sources Plugins Examples

# Rewrites the tree in the house style.
format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift Plugins Examples

# Side-by-side benchmarks (sampling overhead, the Differ, overhead and accuracy against massif and
# heaptrack, variation over 5 runs, gate stability over 20 + 20 runs, the measurement floor, a 1,000-case
# sweep interrupted and resumed); writes Reports/benchmarks/. Takes several minutes. One of them:
# make bench BENCH=sweep
bench: build bench-deps
	$(SWIFT) build -c release $(FRAME_POINTERS) --product memharness-bench
	$(RELEASE_BIN)/memharness-bench $(BENCH)

# The gate stability benchmark alone (no tools needed): 20 unchanged runs and 20 with a real 5% regression
# against a baseline with derived tolerances; writes Reports/benchmarks/stability.md. About 3 minutes.
bench-stability: build
	$(SWIFT) build -c release $(FRAME_POINTERS) --product memharness-bench
	$(RELEASE_BIN)/memharness-bench stability

# The history's change-point detection on seeded series and on the series recorded from real runs (make history-series),
# the store at 10,000 runs of 100 figures, timed, then the release memharness's history commands on that store; writes
# Reports/benchmarks/history-detection.md.
# About two minutes after the build. history-bench is built with the flags of `build`, so neither rebuilds the other.
bench-history: build
	$(SWIFT) build -c release $(FRAME_POINTERS) --product history-bench
	$(RELEASE_BIN)/history-bench > Reports/benchmarks/history-detection.md

# The agent never breaks a program: real programs of this machine (the toolchain's swift-package, swift-format,
# sourcekit-lsp and docc; make, xz, git, perl, sqlite3, node, java, shell scripts) run plainly and under `memharness
# profile` in every mode, compared; writes Reports/benchmarks/agent-corpus.md. About 10 minutes on 2 cores.
bench-corpus: build
	$(SWIFT) build -c release $(FRAME_POINTERS) --product memharness-bench
	$(RELEASE_BIN)/memharness-bench corpus

# Series of real runs of unchanged programs for the history's detection (the end-to-end test's C program, `profile`
# of swift-format, swift-package, python3, sqlite3 and git 20 times each, the shipped scenarios 10 times), written
# to the fixture bench-history and HistoryTests replay. About 25 minutes on 2 cores (most of it the scenarios).
HISTORY_SERIES := Tests/HistoryTests/Fixtures/recorded-series.json
history-series: build
	$(SWIFT) build -c release $(FRAME_POINTERS) --product history-bench
	scripts/record-history-series.sh .build/history-series > $(HISTORY_SERIES).new
	mv $(HISTORY_SERIES).new $(HISTORY_SERIES)

# The heap graph on real programs: the toolchain's swift-package, swift-format, sourcekit-lsp and docc under `profile
# --heap-graph` (held at their exit, named from their memory): how much of the heap is named (by a type or an
# allocation site), their leaks with their sites, wall times against each program alone; and the subscriptions
# scenario's own captures. Writes Reports/benchmarks/real-programs.md. About 10 minutes on 2 cores.
bench-real-programs: build
	$(SWIFT) build -c release $(FRAME_POINTERS) --product memharness-bench
	$(RELEASE_BIN)/memharness-bench real-programs

# What the heap graph costs against each of its bars, side by side in one sitting: the shipped suite's wall time, a
# scenario's `expect:` run against the same without, `profile --heap-graph` against the program alone (swift-package
# describe, swift-format), a million-block heap captured, named and analysed, and the churn loop with every block
# tracked with its stack; wall and CPU time, medians. BEFORE=DIR (a folder holding an older build's memharness,
# libmemharness-agent.so, heap-fixtures and agent-probe) measures it alternately beside this tree's build for
# before/after ratios. Writes its section of Reports/benchmarks/heap-graph.md. About 15 minutes on 2 quiet cores.
BEFORE ?=
bench-heap-cost: build
	$(SWIFT) build -c release $(FRAME_POINTERS) --product heap-fixtures
	$(SWIFT) build -c release $(FRAME_POINTERS) --product agent-probe
	python3 scripts/measure-heap-cost.py --bin $(RELEASE_BIN) $(if $(BEFORE),--before $(BEFORE)) \
	  --write Reports/benchmarks/heap-graph.md

# Regenerates the committed sample report: three runs merged into one folder, so the report shows where the
# memory is (allocation stacks, --attribute) and what held each strategy's peak (--heap-graph: the heap captured at
# the peak, by retained size) for the scenarios whose strategies differ in where memory sits, and why memory is kept
# (the live set after each iteration, leaks) for subscriptions, without instrumenting the others (about 4 min on
# 2 cores).
# Then the browser test's screenshots of its report.html are taken again into Reports/sample-screenshots.
SAMPLE_SHARDS := .build/sample-shards
sample-report: build
	rm -rf $(SAMPLE_SHARDS)
	$(RELEASE_BIN)/memharness run calibration compaction spikes version-pinning --out $(SAMPLE_SHARDS)/plain $(ARGS)
	$(RELEASE_BIN)/memharness run live-query store-observer image-feed --attribute --heap-graph \
	  --out $(SAMPLE_SHARDS)/attributed $(ARGS)
	$(RELEASE_BIN)/memharness run subscriptions --attribute --heap-graph --out $(SAMPLE_SHARDS)/heap $(ARGS)
	$(RELEASE_BIN)/memharness merge $(SAMPLE_SHARDS)/plain $(SAMPLE_SHARDS)/attributed $(SAMPLE_SHARDS)/heap \
	  --out Reports/sample
	$(MAKE) browser-test BROWSER_SCREENSHOTS=$(CURDIR)/Reports/sample-screenshots

clean:
	rm -rf .build $(EXAMPLE)/.build Tests/ExamplesTests/Fixtures/NoHarness/.build
