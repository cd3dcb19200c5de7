import HarnessModel
import Testing

@testable import Runner

/// The figures of an external program from the agent's sample streams, over made-up streams: the processes of
/// a program's tree added up, and its resident-set peak told apart from the harness's.
struct ProfileMeasurementsTests {
    static let mebibyte = 1 << 20

    /// A sample at `time` ms with `allocated` MiB (the other jemalloc figures follow it), `rss` MiB, `mallocs`.
    static func row(_ time: Int64, allocated: Int, rss: Int = 0, mallocs: Int = 0) -> ProgramSamples.Row {
        let bytes = allocated * mebibyte
        return ProgramSamples.Row(
            time: time * 1_000_000,
            stats: AllocatorStatsValues(
                allocatedBytes: bytes, activeBytes: bytes, residentBytes: bytes, mappedBytes: bytes,
                retainedBytes: 0, metadataBytes: 1),
            rss: rss * mebibyte, mallocCount: mallocs)
    }

    @Test func aPhasesExactPeakIsTheHighestMarkOfTheSamplesThatCoverIt() {
        // Live bytes (MiB) and the high since the row before, at 0, 10, 20, 30, 40 ms: a 9 MiB spike between 10 and
        // 20 ms that no sample saw, a 7 MiB one between 30 and 40 ms.
        let marks: [(live: Int64, high: Int64)] = [(1, 1), (2, 2), (2, 9), (3, 3), (1, 7)]
        var rows: [ProgramSamples.Row] = []
        for (index, mark) in marks.enumerated() {
            var row = Self.row(Int64(index * 10), allocated: Int(mark.live))
            row.exact = ExactCounts(liveBytes: mark.live << 20, allocationCalls: 1, allocatedBytes: 1)
            row.exactHighLiveBytes = mark.high << 20
            rows.append(row)
        }
        let samples = ProgramSamples(rows: rows, exitStatus: 0)
        let mebibyte = Int64(Self.mebibyte)
        // 12 to 18 ms lies between the rows at 10 and 20 ms: the 20 ms row's high covers it.
        #expect(samples.exactHighLiveBytes(from: 12 * 1_000_000, to: 18 * 1_000_000) == Int(9 * mebibyte))
        #expect(samples.exactHighLiveBytes(from: 20 * 1_000_000, to: 30 * 1_000_000) == Int(3 * mebibyte))
        #expect(samples.exactHighLiveBytes(from: 0, to: 40 * 1_000_000) == Int(9 * mebibyte))
        // Without highs (sampled mode), no exact peak.
        let sampled = ProgramSamples(
            rows: rows.map {
                var row = $0
                row.exactHighLiveBytes = nil
                return row
            })
        #expect(sampled.exactHighLiveBytes(from: 0, to: 40 * 1_000_000) == nil)
    }

    @Test func aLoneProcessIsItsOwnTree() {
        let root = ProgramSamples(rows: [Self.row(0, allocated: 1), Self.row(1, allocated: 5)], exitStatus: 0)
        let tree = ProgramSamples.tree(root: root, others: [])
        #expect(tree.rows == root.rows)
        #expect(tree.startedProcessRowCount == nil)
    }

    @Test func childrenAddWhatTheyAllocatedAboveTheirStartWhileTheyRan() {
        // The shell holds 1 MiB throughout; an exec'd program starts at 2 MiB (its load) and holds 10 MiB more
        // from 3 ms to 5 ms; a forked child starts with a 6 MiB copy of its parent's heap, frees 4 MiB of it
        // (which frees nothing of the parent's) and adds 3 MiB at 4 ms.
        let root = ProgramSamples(
            rows: (0...8).map { Self.row(Int64($0), allocated: 1, rss: 4, mallocs: 10) }, exitStatus: 0)
        let exec = ProgramSamples(
            rows: [
                Self.row(2, allocated: 2, rss: 5, mallocs: 100), Self.row(3, allocated: 12, rss: 15, mallocs: 110),
                Self.row(5, allocated: 12, rss: 15, mallocs: 110), Self.row(6, allocated: 2, rss: 6, mallocs: 111),
            ])
        let fork = ProgramSamples(
            rows: [Self.row(3, allocated: 6, rss: 4), Self.row(4, allocated: 2, rss: 4), Self.row(4, allocated: 9)])
        let tree = ProgramSamples.tree(root: root, others: [exec, fork])
        /// MiB allocated in the tree at `ms` milliseconds (plus `ns`).
        func allocated(_ ms: Int64, plus ns: Int64 = 0) -> Int? {
            tree.rows.first { $0.time == ms * 1_000_000 + ns }.map { $0.stats.allocatedBytes / Self.mebibyte }
        }
        #expect(allocated(0) == 1 && allocated(2) == 1 && allocated(3) == 11)
        // 4 ms: the shell's 1 + the program's 10 + the fork's 3 (the later of its two samples at 4 ms), until
        // the nanosecond after the fork's last sample.
        #expect(allocated(4) == 14 && allocated(4, plus: 1) == 11)
        #expect(allocated(5) == 11 && allocated(6) == 1 && allocated(6, plus: 1) == 1 && allocated(8) == 1)
        // After each child's last sample it holds nothing: the shell's 1 MiB is what is left at the end.
        #expect(tree.rows.last?.stats.allocatedBytes == Self.mebibyte)
        #expect(tree.rows.map(\.stats.allocatedBytes).max() == 14 * Self.mebibyte)
        #expect(tree.rows.map(\.rss).max() == (4 + 10 + 0) * Self.mebibyte, "the fork's resident set did not grow")
        #expect(tree.rows.map(\.time) == tree.rows.map(\.time).sorted())
        #expect(Set(tree.rows.map(\.time)).count == tree.rows.count, "one row per moment")
        #expect(tree.exitStatus == 0)
        #expect(tree.startedProcessRowCount == 9)

        let measurements = ProgramMeasurements.build(
            tree, usage: nil, harnessRSSBytes: 0, exact: nil,
            report: ProgramReport(commandLine: "sh", termination: .exited(0), stderrTail: ""),
            requestedIntervalNanoseconds: 1_000_000)
        #expect(measurements.peakAllocatedNetBytes == 13 * Self.mebibyte)
        #expect(measurements.residueBytes == 0)
        // The interval is the started process's: 9 samples over 8 ms.
        #expect(measurements.sampling.sampleCount == 9)
        #expect(measurements.sampling.achievedIntervalNanoseconds == 1_000_000)
    }

    @Test func samplesAfterTheStartedProcessEndedAreLeftOut() {
        let root = ProgramSamples(rows: [Self.row(0, allocated: 1), Self.row(2, allocated: 1)], exitStatus: 0)
        let orphan = ProgramSamples(rows: [Self.row(1, allocated: 0), Self.row(3, allocated: 50)])
        let tree = ProgramSamples.tree(root: root, others: [orphan])
        #expect(tree.rows.map(\.time) == [0, 1_000_000, 2_000_000])
        #expect(tree.rows.map(\.stats.allocatedBytes).max() == Self.mebibyte)
    }

    @Test(arguments: [
        // (kernel's ru_maxrss, sampled peak, the harness's RSS at the fork, expected), MiB
        (29, 7, 29, 7),  // not above the harness's own: it may be the harness's, the samples are the figure
        (30, 7, 40, 7),
        (30, 7, 29, 7),  // within the 1 MiB the harness may have grown meanwhile
        (31, 7, 29, 31),  // above it: the program's own, exact, and a spike between samples is kept
        (80, 70, 29, 80),
        (80, 82, 29, 82),
    ])
    func theKernelsPeakCountsOnlyAboveTheHarnesssResidentSet(kernel: Int, sampled: Int, harness: Int, expected: Int) {
        let mebibyte = Self.mebibyte
        #expect(
            ProgramMeasurements.peakRSS(
                kernelBytes: kernel * mebibyte, sampledBytes: sampled * mebibyte, harnessRSSBytes: harness * mebibyte)
                == expected * mebibyte)
        #expect(ProgramMeasurements.peakRSS(kernelBytes: nil, sampledBytes: 5, harnessRSSBytes: 0) == 5)
    }

    static func process(_ pid: Int, baseline: Int, peak: Int, calls: Int = 10) -> ProcessExactPeak {
        ProcessExactPeak(
            processID: pid, executable: "/bin/p\(pid)",
            exact: ExactPeakValues(baselineLiveBytes: baseline, peakLiveBytes: peak, allocationCalls: calls))
    }

    @Test func aTreesExactPeakIsTheSumOfEachProcesssPeakAboveItsStartAndSaysSo() throws {
        let alone = try #require(ProgramMeasurements.treeExact([Self.process(1, baseline: 5, peak: 50)]))
        #expect(alone.peakNetBytes == 45 && alone.summedProcessCount == nil)
        let tree = try #require(
            ProgramMeasurements.treeExact([
                Self.process(1, baseline: 5, peak: 50), Self.process(2, baseline: 100, peak: 130),
                Self.process(3, baseline: 1, peak: 21),
            ]))
        #expect(tree.baselineLiveBytes == 5)
        #expect(tree.peakNetBytes == 45 + 30 + 20)
        #expect(tree.allocationCalls == 30)
        #expect(tree.summedProcessCount == 3)
    }

    @Test func aTreeWithAProcessThatLeftNoCountHasNoExactPeak() {
        let silent = ProcessExactPeak(processID: 2, executable: nil, exact: nil)
        #expect(ProgramMeasurements.treeExact([Self.process(1, baseline: 5, peak: 50), silent]) == nil)
        #expect(ProgramMeasurements.treeExact([silent, Self.process(1, baseline: 5, peak: 50)]) == nil)
        #expect(ProgramMeasurements.treeExact([]) == nil)
    }

    @Test(arguments: [
        // (anonymous resident peak, allocator's resident peak, warned), MiB
        (107, 10, true),  // a JVM: its heap is its own
        (171, 9, true),  // Node
        (40, 10, false),  // 4x, but 30 MiB is thread stacks and the C library's own mappings
        (90, 60, false),  // under twice
        (80, 16, true),
        (6, 4, false),  // swift-format: 44 MiB of RSS, nearly all of it its mapped code, which is not anonymous
    ])
    func anonymousMemoryFarBeyondTheAllocatorsIsNamed(anonymous: Int, resident: Int, warned: Bool) {
        let excess = ProgramMeasurements.residentBeyondAllocator(
            peakAnonymousBytes: anonymous * Self.mebibyte, peakAllocatorResidentBytes: resident * Self.mebibyte,
            peakAllocatedBytes: resident * Self.mebibyte / 2)
        #expect((excess != nil) == warned)
        #expect(excess.map { $0.peakAnonymousBytes == anonymous * Self.mebibyte } ?? true)
    }

    @Test func anExplainedLineIsReadPartByPartAndItsRestIsTheResidentSetLessTheParts() throws {
        // r time point rss-after rss-before allocated active resident metadata dirty muzzy files stacks other pages
        let line = "r 5000 h 100000 99000 60000 61000 75000 9000 3000 0 20000 1000 5000 70000"
        let breakdown = try #require(ProgramSamples.residentBreakdown(line.split(separator: " ")))
        #expect(breakdown.point == .peak && breakdown.timeNanoseconds == 5000)
        #expect(breakdown.liveHeapBytes == 60000 && breakdown.activeBeyondAllocatedBytes == 1000)
        #expect(breakdown.allocatorFreeBytes == 4000 && breakdown.purgeableBytes == 3000)
        // Metadata: jemalloc's pages per the kernel beyond active, dirty and muzzy.
        #expect(breakdown.allocatorMetadataBytes == 70000 - 61000 - 3000)
        #expect(breakdown.explainedBytes == 70000 + 20000 + 1000 + 5000)
        // The set moved from 99,000 to 100,000 while the parts were read: the rest is their sum's distance from the
        // nearer reading.
        #expect(breakdown.unexplainedBytes == 3000 && breakdown.movedWhileReadBytes == 1000)
        #expect(abs(breakdown.unexplainedFraction - 0.03) < 1e-12)
        // A sum between the two readings leaves nothing unexplained; one above both is negative.
        var between = breakdown
        between.stacksBytes += 3500
        #expect(between.unexplainedBytes == 0)
        between.stacksBytes += 1000
        #expect(between.unexplainedBytes == -500)
        // A set read still: the measured set less the parts, as ever.
        var still = breakdown
        still.measuredBeforeBytes = still.measuredBytes
        #expect(still.unexplainedBytes == 4000 && still.movedWhileReadBytes == 0)
        #expect(breakdown.metrics.first { $0.name == "rssStacks" }?.value == 1000)
        // Pages the agent lost track of: jemalloc's own count stands in.
        let lost = try #require(
            ProgramSamples.residentBreakdown("r 1 e 100000 1 60000 61000 75000 0 0 0 0 0 0 -1".split(separator: " ")))
        #expect(lost.point == .end && lost.allocatorPagesBytes == nil && lost.allocatorMetadataBytes == 14000)
        #expect(lost.metrics.contains { $0.name == "rssStacksAtEnd" })
        #expect(ProgramSamples.residentBreakdown("r 1 q 1 1 1 1 1 1 1 1 1 1 1 1".split(separator: " ")) == nil)
        #expect(ProgramSamples.residentBreakdown("r 1 h 1 1".split(separator: " ")) == nil)
    }

    /// The peak is the highest explained point; of equals, the first read while the set held still: lines of a
    /// program that keeps 2 MiB for 200 ms and frees it before exit (read off the agent). Its high read while the
    /// memset still faulted pages in is read again once it settles; a read at the same height after the free would
    /// explain the peak as freed memory. The exit's own sample explains no high (sampler.c): only the end.
    @Test func thePeakIsTheHighestReadWhileTheSetHeldStill() throws {
        let lines = [
            "r 1500000 h 6459392 6451200 172928 200000 2846720 0 0 0 6000000 32768 163840 300000",
            "r 11700000 h 8699904 8568832 2311840 2340000 5091328 0 0 0 6000000 32768 163840 2500000",
            "r 13700000 h 8699904 8699904 2311840 2340000 5091328 0 0 0 6000000 32768 163840 2500000",
            "r 150000000 h 8699904 8699904 214688 249856 5091328 0 2101248 0 6000000 32768 163840 2500000",
            "r 239000000 e 8876032 8876032 214688 249856 5091328 0 2101248 0 6115328 32768 163840 2564096",
        ]
        var samples = ProgramSamples()
        samples.residentExplained = try lines.map {
            try #require(ProgramSamples.residentBreakdown($0.split(separator: " ")))
        }
        let points = samples.residentAtPeakAndEnd
        #expect(points.map(\.point) == [.peak, .end])
        #expect(points[0].timeNanoseconds == 13_700_000 && points[0].liveHeapBytes == 2_311_840)
        #expect(points[1].liveHeapBytes == 214_688)
        // No read of the highest held still: the latest.
        samples.residentExplained.removeSubrange(2...3)
        #expect(samples.residentAtPeakAndEnd[0].timeNanoseconds == 11_700_000)
    }
}
