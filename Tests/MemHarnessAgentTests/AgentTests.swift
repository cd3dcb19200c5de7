import Foundation
import Testing

/// The preloaded agent end to end: `agent-probe` (a C program with known allocations) runs with
/// `LD_PRELOAD="libmemharness-agent.so libjemalloc.so.2"` and the modes under test; the tests read what the
/// probe printed, the record and the sample stream. Truths come from the probe (`malloc_usable_size` of its
/// own blocks, the addresses of its own functions) and from `nm` on its binary, never from written-down numbers.
///
/// Build first: `swift build --product memharness-agent && swift build --product agent-probe`.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct AgentTests {
    static let mebibyte = 1 << 20

    func runner() throws -> ProbeRunner {
        try #require(ProbeRunner.missingPieces == nil, "\(ProbeRunner.missingPieces ?? "")")
        return try ProbeRunner()
    }

    func expectClean(_ outcome: ProbeRunner.Outcome, _ comment: String = "") {
        #expect(!outcome.timedOut, "the probe hung \(comment): \(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.status == 0, "exit \(outcome.status) \(comment): \(outcome.stdout)\(outcome.stderr)")
    }

    /// `value` within `fraction` of `truth`.
    func near(_ value: Int, _ truth: Int, within fraction: Double) -> Bool {
        abs(Double(value) - Double(truth)) <= fraction * Double(truth)
    }

    // MARK: Exact counting

    @Test(arguments: [false, true])
    func everyEntryPointOfTheMallocFamilyIsCounted(stacks: Bool) throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        var environment = ["MEMHARNESS_AGENT_EXACT": "1"]
        if stacks { environment["MEMHARNESS_AGENT_STACK_SAMPLE_BYTES"] = "65536" }
        let outcome = try probe.run(["self-check"], environment: environment)
        expectClean(outcome)
        #expect(outcome.value("fast_size_classes", "forwards_to_fast_paths") == 1, "\(outcome.stdout)")
        #expect(outcome.value("fast_size_classes", "stacks_enabled") == (stacks ? 1 : 0))
        let rows = outcome.stdout.split(separator: "\n").filter { $0.hasPrefix("check ") }.dropFirst()
            .map { $0.dropFirst(6).components(separatedBy: " | ") }
        var names = [
            "malloc", "malloc(0)", "calloc", "realloc(NULL)", "reallocarray(NULL)", "posix_memalign", "aligned_alloc",
            "memalign", "valloc", "pvalloc", "strdup (libc calls malloc)", "operator new", "operator new[]",
            "operator new(align 128)", "operator new(nothrow)", "realloc (grow, moves)", "realloc (shrink)",
            "free on another thread", "peak of a freed block",
        ]
        if stacks { names.append("sampled block (stack table)") }
        #expect(rows.map { $0[0] } == names)
        for row in rows {
            try #require(row.count == 6, "\(row)")
            let expected = try #require(Int(row[1]))
            let counted = try #require(Int(row[2]))
            // The check itself must move the count, or it could not fail.
            #expect(expected != 0, "\(row[0]): the check moved nothing")
            #expect(counted == expected, "\(row[0]): counted \(counted), usable \(expected)")
            #expect(row[3] == row[4], "\(row[0]): released \(row[4]), expected \(row[3])")
            #expect((Int(row[5]) ?? 0) >= 1, "\(row[0]): the call was not counted")
        }
    }

    @Test func theExactPeakOfAHeldBlockIsItsSizeClassBytes() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let record = probe.path("hold.record")
        let outcome = try probe.run(
            ["hold", "64MiB", "50"],
            environment: ["MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_RECORD": record])
        expectClean(outcome)
        let usable = try #require(outcome.value("hold", "usable"))
        #expect(usable == 64 * Self.mebibyte)
        // The probe sees its block: the live count moved by exactly its usable size while it was held.
        let before = try #require(outcome.value("live", "before"))
        let held = try #require(outcome.value("live", "held"))
        #expect(held - before == usable)
        let exact = try #require(try AgentRecord(contentsOf: record).exact)
        let peak = exact.peakLiveBytes - exact.baselineLiveBytes
        #expect(peak >= usable)
        #expect(near(peak, usable, within: 0.005), "exact peak \(peak) above baseline, block \(usable)")
        #expect(exact.allocationCalls > 0)
    }

    @Test func aOneMillisecondSpikeIsCaughtByExactCounting() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let record = probe.path("spike.record")
        let outcome = try probe.run(
            ["spike", "16MiB", "32MiB", "1"],
            environment: ["MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_RECORD": record])
        expectClean(outcome)
        let spike = try #require(outcome.value("spike", "usable"))
        let hold = try #require(outcome.value("hold", "usable"))
        #expect(spike == 32 * Self.mebibyte)
        #expect((outcome.value("spike", "lasted_ns") ?? 0) < 50_000_000, "the spike should be short")
        // take_peak over the spike's phase: the spike on top of what was live after it.
        let peak = try #require(outcome.value("peak", "peak"))
        let live = try #require(outcome.value("peak", "live"))
        #expect(peak - live >= spike && peak - live <= spike + 64 << 10, "peak \(peak), live \(live), spike \(spike)")
        let exact = try #require(try AgentRecord(contentsOf: record).exact)
        #expect(exact.peakLiveBytes - exact.baselineLiveBytes >= hold + spike)
    }

    // MARK: Stacks

    /// Stacks sampled every 64 KiB on average, with EXACT asked for (`exact`) or not (`stacks alone`, with the
    /// sampler thread on as `profile` runs it): stacks imply exact counting, and the `peak` snapshot follows it.
    func stacksEnvironment(driver: String, record: String, probe: ProbeRunner) -> [String: String] {
        var environment = ["MEMHARNESS_AGENT_STACK_SAMPLE_BYTES": "65536", "MEMHARNESS_AGENT_RECORD": record]
        if driver == "exact" {
            environment["MEMHARNESS_AGENT_EXACT"] = "1"
        } else {
            environment["MEMHARNESS_AGENT_INTERVAL_NS"] = "1000000"
            environment["MEMHARNESS_AGENT_SAMPLES"] = probe.path("samples")
        }
        return environment
    }

    /// With EXACT asked for and with stacks alone, which imply it.
    @Test(arguments: ["exact", "stacks alone"])
    func theHeldBlocksStackCarriesItsBytesAtThePeak(driver: String) throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let recordPath = probe.path("stacks.record")
        let environment = stacksEnvironment(driver: driver, record: recordPath, probe: probe)
        let outcome = try probe.run(["hold", "64MiB", "300"], environment: environment)
        expectClean(outcome)
        let record = try AgentRecord(contentsOf: recordPath)
        #expect(record.ended)
        #expect(record.stackSampleBytes == 65536)
        #expect(record.pid > 0)
        #expect(
            URL(fileURLWithPath: record.program).resolvingSymlinksInPath().path
                == URL(fileURLWithPath: ProbeRunner.probePath).resolvingSymlinksInPath().path)

        // The module lines symbolize: the probe's own runtime address of probe_hold_block, minus the load
        // bias of the module holding it, is nm's address of the symbol.
        let symbols = try ProbeSymbols(binary: ProbeRunner.probePath)
        let symbol = try #require(symbols.symbols["probe_hold_block"], "nm found no probe_hold_block")
        let runtime = try #require(outcome.functionAddresses["probe_hold_block"])
        let module = try #require(record.module(containing: runtime))
        #expect(runtime - module.loadBias == symbol.start)

        let peak = try #require(record.mark("peak"), "no peak mark: \(record.marks.map(\.label))")
        let held = record.liveBytes(
            in: peak, innermostProbeFunction: "probe_hold_block", symbols: symbols,
            probePath: ProbeRunner.probePath)
        #expect(near(held, 64 * Self.mebibyte, within: 0.05), "probe_hold_block holds \(held) at the peak")
        #expect(peak.levelBytes >= 64 * Self.mebibyte)
        // The first frame of that stack is the return address into probe_hold_block; the walk goes on up to main.
        let stack = try #require(
            peak.rows.keys.first {
                record.probeFunctions(stack: $0, symbols: symbols, probePath: ProbeRunner.probePath).first
                    == "probe_hold_block"
            })
        #expect(
            record.probeFunctions(stack: stack, symbols: symbols, probePath: ProbeRunner.probePath).contains("main"))
        let end = try #require(record.mark("end"))
        #expect(
            record.liveBytes(
                in: end, innermostProbeFunction: "probe_hold_block", symbols: symbols, probePath: ProbeRunner.probePath)
                == 0,
            "the block was freed before exit")
    }

    /// The peak snapshot is retaken 0.5% above the last one, so it holds the last 1 MiB block of a 64 MiB peak
    /// too (at a 2% step it kept the one before, every other run, whichever way it was driven). Blocks of
    /// 1 MiB at a 64 KiB mean are sampled with probability 1 - 1e-7, so each site's weight is its exact bytes.
    @Test(arguments: ["exact", "stacks alone"])
    func twoSitesGiveTwoStacksOfTheirOwnSize(driver: String) throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let recordPath = probe.path("two-sites.record")
        let environment = stacksEnvironment(driver: driver, record: recordPath, probe: probe)
        let outcome = try probe.run(["two-sites", "50"], environment: environment)
        expectClean(outcome)
        let large = try #require(outcome.value("two-sites", "large"))
        let small = try #require(outcome.value("two-sites", "small"))
        let record = try AgentRecord(contentsOf: recordPath)
        let symbols = try ProbeSymbols(binary: ProbeRunner.probePath)
        let peak = try #require(record.mark("peak"))
        let seenLarge = record.liveBytes(
            in: peak, innermostProbeFunction: "probe_site_large", symbols: symbols, probePath: ProbeRunner.probePath)
        let seenSmall = record.liveBytes(
            in: peak, innermostProbeFunction: "probe_site_small", symbols: symbols, probePath: ProbeRunner.probePath)
        #expect(seenLarge == large, "probe_site_large: \(seenLarge) of \(large)")
        #expect(seenSmall == small, "probe_site_small: \(seenSmall) of \(small)")
        // Two distinct stacks, not one site's stack counted twice.
        let sites = peak.rows.keys.compactMap {
            record.probeFunctions(stack: $0, symbols: symbols, probePath: ProbeRunner.probePath).compactMap { $0 }.first
        }
        #expect(sites.filter { $0 == "probe_site_large" }.count == 1)
        #expect(sites.filter { $0 == "probe_site_small" }.count == 1)
    }

    /// 48 + 16 MiB held for 100 ms, the 16 freed, then a 32 MiB block alive for microseconds: the `peak` snapshot
    /// is at the true peak (80 MiB) and holds the spike, not the 16 MiB block a 1 ms sampler sees at 64 MiB.
    @Test(arguments: ["exact", "stacks alone"])
    func thePeakSnapshotHoldsASpikeOfMicroseconds(driver: String) throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let recordPath = probe.path("spike.record")
        let environment = stacksEnvironment(driver: driver, record: recordPath, probe: probe)
        let outcome = try probe.run(["spike", "48MiB", "32MiB", "0", "16MiB"], environment: environment)
        expectClean(outcome)
        let hold = try #require(outcome.value("hold", "usable"))
        let spike = try #require(outcome.value("spike", "usable"))
        #expect((outcome.value("spike", "lasted_ns") ?? 0) < 1_000_000, "the spike should last microseconds")
        let record = try AgentRecord(contentsOf: recordPath)
        let exact = try #require(record.exact, "stacks count every allocation")
        #expect(exact.peakLiveBytes - exact.baselineLiveBytes >= hold + spike)
        let symbols = try ProbeSymbols(binary: ProbeRunner.probePath)
        let peak = try #require(record.mark("peak"))
        func held(_ function: String) -> Int {
            record.liveBytes(
                in: peak, innermostProbeFunction: function, symbols: symbols, probePath: ProbeRunner.probePath)
        }
        // Blocks of 16 MiB and more at a 64 KiB mean are sampled with probability 1 - e^-256: each weighs its bytes.
        #expect(near(held("probe_spike"), spike, within: 0.01), "probe_spike holds \(held("probe_spike")) at the peak")
        #expect(near(held("probe_hold_block"), hold, within: 0.01), "probe_hold_block: \(held("probe_hold_block"))")
        #expect(held("probe_before_spike") == 0, "the block freed before the spike is not at the peak")
        #expect(peak.levelBytes >= hold + spike)
    }

    /// A program that ends with _exit (dash ends every script so) runs no exit handler: the agent still writes
    /// its files, with the status given.
    @Test func aProcessEndingWithUnderscoreExitWritesItsRecordAndSamples() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let recordPath = probe.path("exit.record")
        let samplesPath = probe.path("exit.samples")
        let outcome = try probe.run(
            ["_exit", "8MiB", "3"],
            environment: [
                "MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_RECORD": recordPath,
                "MEMHARNESS_AGENT_INTERVAL_NS": "1000000", "MEMHARNESS_AGENT_SAMPLES": samplesPath,
            ])
        #expect(outcome.status == 3, "\(outcome.stdout)\(outcome.stderr)")
        let held = try #require(outcome.value("_exit", "held"))
        let record = try AgentRecord(contentsOf: recordPath)
        #expect(record.ended)
        let exact = try #require(record.exact)
        #expect(exact.peakLiveBytes - exact.baselineLiveBytes >= held)
        #expect(try SampleStream(contentsOf: samplesPath).exit?.status == 3)
    }

    @Test func marksCaptureAndWriteRecordFollowTheContract() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let recordPath = probe.path("marks.record")
        // Origin 0: the agent's times are CLOCK_MONOTONIC, the same clock the probe passes to its marks.
        let outcome = try probe.run(
            ["marks", recordPath],
            environment: [
                "MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_STACK_SAMPLE_BYTES": "65536",
                "MEMHARNESS_AGENT_ORIGIN_NS": "0",
            ])
        expectClean(outcome)
        #expect(outcome.value("write_record", "write_record") == 0)
        let record = try AgentRecord(contentsOf: recordPath)
        let symbols = try ProbeSymbols(binary: ProbeRunner.probePath)
        #expect(record.marks.map(\.label) == ["baseline", "peak", "after_hold", "after-free", "end"])
        #expect(record.marks.map(\.timeNanoseconds) == record.marks.map(\.timeNanoseconds).sorted())
        func held(_ label: String) throws -> Int {
            record.liveBytes(
                in: try #require(record.mark(label)), innermostProbeFunction: "probe_hold_block", symbols: symbols,
                probePath: ProbeRunner.probePath)
        }
        #expect(try held("baseline") == 0)
        #expect(try held("after_hold") == 8 * Self.mebibyte)
        #expect(try held("peak") == 8 * Self.mebibyte)
        #expect(try held("after-free") == 0)
        // capture_stack: the first frame is the return address into its caller, probe_marks.
        let capture = try #require(outcome.line("capture"))
        let frames = capture.dropFirst(2).compactMap { UInt64($0.dropFirst(2), radix: 16) }
        #expect(Int(capture[1]) == frames.count && frames.count >= 2)
        let first = try #require(frames.first)
        let module = try #require(record.module(containing: first - 1))
        #expect(symbols.function(at: first - 1 - module.loadBias) == "probe_marks")
    }

    // MARK: Threads and fork

    @Test func blocksFreedOnAnotherThreadLeaveTheCountsAndTheStackTable() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let recordPath = probe.path("threads.record")
        let outcome = try probe.run(
            ["threads", "8000"],
            environment: [
                "MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_STACK_SAMPLE_BYTES": "65536",
                "MEMHARNESS_AGENT_RECORD": recordPath,
            ])
        expectClean(outcome)
        #expect(outcome.value("threads", "freed") == 8000)
        #expect((outcome.value("threads", "calls") ?? 0) >= 8000)
        let before = try #require(outcome.value("live", "before"))
        let after = try #require(outcome.value("live", "after"))
        // Threads started and joined leave glibc's per-thread bookkeeping (a few KiB), never the blocks.
        #expect(abs(after - before) < 64 << 10, "live before \(before), after \(after)")
        let record = try AgentRecord(contentsOf: recordPath)
        let symbols = try ProbeSymbols(binary: ProbeRunner.probePath)
        let inFunction = { (mark: AgentRecord.Mark) in
            record.liveBytes(
                in: mark, innermostProbeFunction: "probe_thread_block", symbols: symbols,
                probePath: ProbeRunner.probePath)
        }
        // Seen while they lived (the peak snapshot), gone once freed on the consumer thread.
        #expect(inFunction(try #require(record.mark("peak"))) > 0)
        #expect(inFunction(try #require(record.mark("end"))) == 0)
    }

    /// glibc's pthread_getattr_np holds the calling thread's own lock while it allocates; a thread whose first
    /// allocation is that one (every JVM thread's is) must not bring the agent, finding the thread's stack bounds for
    /// the allocation's stack, back to the same lock (java hung at start-up under `profile --heap-graph`).
    @Test(arguments: ["every block's stack", "every allocation sampled"])
    func aThreadWhoseFirstAllocationIsPthreadGetattrNpsRunsOn(mode: String) throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let environment =
            mode == "every block's stack"
            ? ["MEMHARNESS_AGENT_HEAP": "1"] : ["MEMHARNESS_AGENT_STACK_SAMPLE_BYTES": "1"]
        let outcome = try probe.run(["attributes", "4"], environment: environment, timeout: .seconds(30))
        expectClean(outcome, mode)
        #expect(outcome.value("attributes", "stacks") == 4, "\(outcome.stdout)")
        // The thread's own walk still starts in its function: its stack's bounds are known without the call.
        let capture = try #require(outcome.line("attributes-capture"))
        let frames = capture.dropFirst(2).compactMap { UInt64($0.dropFirst(2), radix: 16) }
        #expect(Int(capture[1]) == frames.count && frames.count >= 1, "\(capture)")
        let symbols = try ProbeSymbols(binary: ProbeRunner.probePath)
        let function = try #require(symbols.symbols["probe_attributes_thread"])
        let runtime = try #require(outcome.functionAddresses["probe_attributes_thread"])
        let first = try #require(frames.first)
        #expect(first > runtime && first - runtime < function.size, "first frame \(first), function at \(runtime)")
    }

    @Test func forkedChildrenAllocateAndWriteTheirOwnFiles() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let outcome = try probe.run(
            ["fork", "4"],
            environment: [
                "MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_STACK_SAMPLE_BYTES": "65536",
                "MEMHARNESS_AGENT_RECORD": probe.path("record.%p"),
                "MEMHARNESS_AGENT_SAMPLES": probe.path("samples.%p"),
                "MEMHARNESS_AGENT_INTERVAL_NS": "1000000",
            ])
        expectClean(outcome)
        let children = outcome.stdout.split(separator: "\n").filter {
            $0.hasPrefix("child ") && $0.contains(" status ")
        }
        .map { $0.split(separator: " ") }
        #expect(children.count == 4, "\(outcome.stdout)")
        let symbols = try ProbeSymbols(binary: ProbeRunner.probePath)
        for child in children {
            #expect(child[3] == "0", "child \(child[1]) exited \(child[3])")
            let record = try AgentRecord(contentsOf: probe.path("record.\(child[1])"))
            #expect(record.pid == Int(child[1]))
            let exact = try #require(record.exact)
            #expect(exact.peakLiveBytes - exact.baselineLiveBytes >= 8 * Self.mebibyte)
            // Counted from the fork: its own 258 calls or so and stdio's, not the parent's churn (millions).
            #expect(exact.allocationCalls < 10_000, "child \(child[1]) counted \(exact.allocationCalls) calls")
            let end = try #require(record.mark("end"))
            let held = record.liveBytes(
                in: end, innermostProbeFunction: "probe_child_block", symbols: symbols, probePath: ProbeRunner.probePath
            )
            #expect(near(held, 8 * Self.mebibyte, within: 0.05), "child \(child[1]) holds \(held) at exit")
            let samples = try SampleStream(contentsOf: probe.path("samples.\(child[1])"))
            #expect(samples.exit?.status == 0)
            #expect(!samples.samples.isEmpty)
        }
        let parentPid = try #require(outcome.value("parent", "pid"))
        let parent = try AgentRecord(contentsOf: probe.path("record.\(parentPid)"))
        #expect(parent.ended && parent.pid == parentPid)
        #expect((parent.exact?.allocationCalls ?? 0) >= 10_000, "the parent's churn is counted: the bound can fail")
        #expect(try SampleStream(contentsOf: probe.path("samples.\(parentPid)")).exit?.status == 0)
    }

    // MARK: The sampler thread

    @Test func theSampleStreamFollowsAHeldBlockAndEndsWithTheExitStatus() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let samplesPath = probe.path("samples")
        let outcome = try probe.run(
            ["hold", "64MiB", "300"],
            environment: [
                "MEMHARNESS_AGENT_INTERVAL_NS": "1000000", "MEMHARNESS_AGENT_SAMPLES": samplesPath,
            ])
        expectClean(outcome)
        // No counting mode: the malloc family forwards (the probe sees no live count).
        #expect(outcome.value("live", "before") == -1)
        let stream = try SampleStream(contentsOf: samplesPath)
        #expect(stream.header == "memharness-agent-samples 1")
        #expect(stream.allocator == "jemalloc")  // jemalloc preloaded after the agent serves malloc
        #expect(stream.malformed.isEmpty, "\(stream.malformed)")
        #expect(stream.samples.count >= 100, "\(stream.samples.count) samples in 300 ms at 1 ms")
        let times = stream.samples.map(\.timeNanoseconds)
        #expect(times == times.sorted())
        #expect((stream.samples.map(\.allocated).max() ?? 0) >= 64 * Self.mebibyte)
        #expect((stream.samples.map(\.rss).max() ?? 0) >= 64 * Self.mebibyte, "every page of the block was touched")
        // The resident set explained: a high with the block in the live heap (figure 3, after the time and the two
        // reads of the resident set) and among jemalloc's resident pages (figure 12), and one line at exit.
        #expect(
            stream.explained.contains {
                $0.point == "h" && $0.figures[3] >= 64 * Self.mebibyte && $0.figures[12] >= 64 * Self.mebibyte
            }, "\(stream.explained)")
        #expect(stream.explained.last?.point == "e", "\(stream.explained)")
        // The block is anonymous memory: the anonymous part of the resident set holds it too, and never exceeds it.
        #expect((stream.samples.map(\.anonymous).max() ?? 0) >= 64 * Self.mebibyte)
        #expect(stream.samples.allSatisfy { $0.anonymous > 0 && $0.anonymous <= $0.rss })
        #expect(stream.samples.allSatisfy { $0.active >= $0.allocated && $0.mapped >= $0.active && $0.metadata > 0 })
        let first = try #require(stream.samples.first)
        let last = try #require(stream.samples.last)
        #expect(last.nmalloc > first.nmalloc, "nmalloc \(first.nmalloc) -> \(last.nmalloc)")
        #expect(
            stream.samples.allSatisfy { $0.live == -1 && $0.calls == -1 && $0.allocatedTotal == -1 && $0.high == -1 })
        let exit = try #require(stream.exit)
        #expect(exit.status == 0)
        #expect(exit.timeNanoseconds >= last.timeNanoseconds)
    }

    @Test func withExactCountingEachSampleHoldsTheLiveBytesCallsAndBytesAllocated() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let samplesPath = probe.path("samples")
        let outcome = try probe.run(
            ["hold", "64MiB", "100"],
            environment: [
                "MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_INTERVAL_NS": "1000000",
                "MEMHARNESS_AGENT_SAMPLES": samplesPath,
            ])
        expectClean(outcome)
        let stream = try SampleStream(contentsOf: samplesPath)
        #expect(stream.malformed.isEmpty, "\(stream.malformed)")
        let first = try #require(stream.samples.first)
        let last = try #require(stream.samples.last)
        // The probe first: the held block is in the live bytes while it is held.
        #expect((stream.samples.map(\.live).max() ?? 0) >= 64 * Self.mebibyte)
        // The counts only grow; the 64 MiB block is among the bytes handed out, in a few calls.
        #expect(
            zip(stream.samples, stream.samples.dropFirst()).allSatisfy {
                $0.calls <= $1.calls && $0.allocatedTotal <= $1.allocatedTotal
            })
        let bytes = last.allocatedTotal - first.allocatedTotal
        #expect(bytes >= 64 * Self.mebibyte && bytes < 65 * Self.mebibyte, "\(bytes) bytes allocated")
        let calls = last.calls - first.calls
        #expect(calls >= 1 && calls < 100, "\(calls) calls")
        // The sampler's counts are the probe's own: what it read itself after its block is between them.
        let probeCalls = try #require(outcome.value("sleep", "calls_after"))
        #expect(first.calls <= probeCalls && probeCalls <= last.calls, "\(first.calls)...\(last.calls): \(probeCalls)")
    }

    @Test func eachSampleCarriesTheHighSinceTheOneBeforeSoASpikeBetweenSamplesIsNotLost() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let samplesPath = probe.path("samples")
        // 1 MiB held, then 32 MiB allocated and freed at once (far shorter than the 5 ms between samples), then
        // 20 ms more.
        let outcome = try probe.run(
            ["spike", "1MiB", "32MiB", "0", "0"],
            environment: [
                "MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_INTERVAL_NS": "5000000",
                "MEMHARNESS_AGENT_SAMPLES": samplesPath,
            ])
        expectClean(outcome)
        let stream = try SampleStream(contentsOf: samplesPath)
        #expect(stream.malformed.isEmpty, "\(stream.malformed)")
        // The probe first: the held block is in the live bytes of the samples taken while it is held.
        let live = stream.samples.map(\.live)
        #expect((live.max() ?? 0) >= Self.mebibyte)
        // The spike lasted far less than an interval, yet the high of the sample after it holds it; a high is never
        // below the live bytes of its own sample.
        let lasted = try #require(outcome.value("spike", "lasted_ns"))
        #expect(lasted < 5_000_000, "the spike lasted \(lasted) ns")
        let highs = stream.samples.map(\.high)
        let holding = try #require(highs.firstIndex { $0 >= 33 * Self.mebibyte }, "\(highs)")
        #expect(stream.samples.allSatisfy { $0.high >= $0.live }, "\(highs) against \(live)")
        // The mark restarts at each sample: a later sample's high is back below the spike.
        #expect(highs[(holding + 1)...].contains { $0 < 32 * Self.mebibyte }, "\(highs)")
    }

    @Test func theSamplerThreadAllocatesNothing() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let samplesPath = probe.path("samples")
        let outcome = try probe.run(
            ["hold", "1MiB", "300"],
            environment: [
                "MEMHARNESS_AGENT_EXACT": "1", "MEMHARNESS_AGENT_INTERVAL_NS": "1000000",
                "MEMHARNESS_AGENT_SAMPLES": samplesPath,
            ])
        expectClean(outcome)
        // The probe sees allocations: its own were counted before it slept.
        let before = try #require(outcome.value("sleep", "calls_before"))
        let after = try #require(outcome.value("sleep", "calls_after"))
        #expect(before > 0)
        // ~300 samples were written while the probe slept, and not one allocation was counted.
        #expect(try SampleStream(contentsOf: samplesPath).samples.count >= 100)
        #expect(after == before, "the sampler allocated: \(after - before) calls while the probe slept")
    }

    // MARK: Modes off, bad values

    @Test func withNothingOnTheAgentOnlyForwards() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let outcome = try probe.run(["self-check"])
        #expect(outcome.status == 3, "the self-check needs EXACT: \(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.stdout.contains("forwards_to_fast_paths 1"))
        #expect(outcome.stdout.contains("stacks_enabled 0"))
        #expect(outcome.stderr.contains("needs MEMHARNESS_AGENT_EXACT=1"))
    }

    @Test func aBadValueIsReportedAndIgnored() throws {
        let probe = try runner()
        defer { probe.cleanUp() }
        let outcome = try probe.run(
            ["hold", "1MiB", "1"],
            environment: ["MEMHARNESS_AGENT_STACK_SAMPLE_BYTES": "64k", "MEMHARNESS_AGENT_EXACT": "1"])
        expectClean(outcome)
        #expect(
            outcome.stderr.contains(
                "memharness-agent: ignoring MEMHARNESS_AGENT_STACK_SAMPLE_BYTES=64k: expected bytes between samples"))
        #expect((outcome.value("live", "held") ?? -1) > 0, "EXACT still on")
    }
}
