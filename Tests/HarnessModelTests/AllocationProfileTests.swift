import HarnessModel
import Testing

struct AllocationProfileTests {
    static let app = "/app/bin/app"
    static let core = "/usr/lib/swift/linux/libswiftCore.so"
    let frames = [
        AllocationFrame(function: "main.run()", file: "/app/main.swift", line: 3, module: app),
        AllocationFrame(function: "Cache.store(_:)", file: "/app/Cache.swift", line: 20, module: app),
        AllocationFrame(function: "specialized Array.append(_:)", module: app, isLibrary: true),
        AllocationFrame(function: "Parser.parse(_:)", file: "/app/Parser.swift", line: 9, module: app),
        AllocationFrame(function: "String.init(decoding:as:)", module: core, isLibrary: true),
        AllocationFrame(function: "swift_once", module: core, isLibrary: true),
    ]

    func profile(
        _ stacks: [([Int], Int, Int)], iterations: [IterationLiveSet] = [], peak: Int = 1000, baseline: Int = 0
    ) -> AllocationProfile {
        AllocationProfile(
            frames: frames,
            stacks: stacks.map { AllocationStack(frameIndices: $0.0, peakLiveBytes: $0.1, peakLiveCount: $0.2) },
            peakLevelBytes: peak, baselineLevelBytes: baseline, peakTimeNanoseconds: 5, sampleMeanBytes: 64,
            iterations: iterations)
    }

    @Test func theSiteIsTheInnermostFrameOfTheUsersCode() {
        let p = profile([([0, 1, 2], 600, 6), ([0, 3, 4], 300, 3), ([5], 100, 1), ([], 0, 0)])
        #expect(
            p.site(of: p.stacks[0])
                == AllocationSite(function: "Cache.store(_:)", file: "/app/Cache.swift", line: 20, module: Self.app))
        #expect(p.site(of: p.stacks[1])?.function == "Parser.parse(_:)")
        // Only library code: the innermost frame is the site.
        #expect(p.site(of: p.stacks[2])?.function == "swift_once")
        #expect(p.site(of: p.stacks[3]) == nil)
    }

    @Test func siteTableRanksSitesWithSharesOfTheSampledPeak() {
        let p = profile(
            [([0, 1, 2], 500, 5), ([0, 3, 4], 300, 3), ([0, 1], 100, 2), ([5], 100, 1), ([0, 3], 0, 0)],
            peak: 1100, baseline: 100)
        let all = p.sitesAtPeak()
        #expect(all.map(\.site.function) == ["Cache.store(_:)", "Parser.parse(_:)", "swift_once"])
        #expect(all.map(\.liveBytes) == [600, 300, 100])
        #expect(all.map(\.liveCount) == [7, 3, 1])
        #expect(all.map(\.stacks) == [2, 1, 1])
        #expect(all.map(\.shareOfPeak) == [0.6, 0.3, 0.1])
        let table = p.siteTable(limit: 2)
        #expect(table.rows.count == 2)
        #expect(table.otherBytes == 100 && table.otherSites == 1)
        #expect(table.totalLiveBytes == 1000)
        #expect(table.peakNetBytes == 1000)
        #expect(p.siteTable(limit: -1).rows.isEmpty)
    }

    @Test func tiesAreBrokenBySiteSoTheOrderIsStable() {
        let p = profile([([0, 3], 100, 1), ([0, 1], 100, 1)])
        #expect(p.sitesAtPeak().map(\.site.function) == ["Cache.store(_:)", "Parser.parse(_:)"])
    }

    @Test func differenceExplainsThePeakBySite() {
        let base = profile([([0, 1], 100, 1), ([0, 3], 300, 3)], peak: 500, baseline: 100)
        let other = profile([([0, 1], 900, 9), ([0, 3], 300, 3), ([5], 50, 1)], peak: 1400, baseline: 100)
        let difference = other.difference(from: base, label: "unbounded", baseLabel: "bounded")
        #expect(difference.peakNetDeltaBytes == 900)
        #expect(difference.sampledDeltaBytes == 850)
        // Parser.parse did not change and is left out; largest increase first.
        #expect(difference.sites.map(\.site.function) == ["Cache.store(_:)", "swift_once"])
        #expect(difference.sites.map(\.deltaBytes) == [800, 50])
        let reverse = base.difference(from: other, label: "bounded", baseLabel: "unbounded")
        #expect(
            reverse.sites.map(\.deltaBytes) == [-50, -800], "increases first, then decreases, the largest decrease last"
        )
        #expect(reverse.peakNetDeltaBytes == -900)
    }

    /// Two runs from two checkouts (a CI runner's and a laptop's build folder) name the same site with other
    /// folders: compared, it is one site that grew, not one that vanished and one that appeared.
    @Test func sitesOfTwoCheckoutsAreComparedWithoutTheirFolders() {
        let base = profile([([0, 1], 100, 1)])
        var moved = frames
        moved[1] = AllocationFrame(
            function: "Cache.store(_:)", file: "/runner/work/app/Cache.swift", line: 20,
            module: "/runner/work/app/.build/release/app")
        let other = AllocationProfile(
            frames: moved, stacks: [AllocationStack(frameIndices: [0, 1], peakLiveBytes: 300, peakLiveCount: 3)],
            peakLevelBytes: 1000, baselineLevelBytes: 0, peakTimeNanoseconds: 5, sampleMeanBytes: 64, iterations: [])
        let difference = other.difference(from: base, label: "now", baseLabel: "before")
        #expect(difference.sites.map(\.deltaBytes) == [200])
        #expect(
            difference.sites.map(\.site.file) == ["/runner/work/app/Cache.swift"], "named as the later run names it")
    }

    @Test func growthPerIterationIsTheLeastSquaresSlopePerSite() throws {
        func iteration(_ k: Int, cache: Int, parser: Int) -> IterationLiveSet {
            IterationLiveSet(
                phase: "loop", iteration: k, timeNanoseconds: Int64(k), levelBytes: 0,
                live: [
                    StackLiveBytes(stack: 0, liveBytes: cache, liveCount: 1),
                    StackLiveBytes(stack: 1, liveBytes: parser, liveCount: 1),
                ])
        }
        // Iteration 0 is warm-up (a lazily built table); then the cache grows 1 KiB per iteration, the parser stays.
        let iterations =
            [iteration(0, cache: 50_000, parser: 4096)] + (1...5).map { iteration($0, cache: 1024 * $0, parser: 4096) }
        let p = profile([([0, 1], 100, 1), ([0, 3], 100, 1)], iterations: iterations)
        let growth = p.siteGrowth(warmupIterations: 1)
        #expect(growth.map(\.site.function) == ["Cache.store(_:)", "Parser.parse(_:)"])
        #expect(growth[0].liveBytesAfterIteration == [1024, 2048, 3072, 4096, 5120])
        #expect(growth[0].fit == LeakAnalysis.fitSlope([1024, 2048, 3072, 4096, 5120]))
        #expect(growth[0].fit.slopeBytesPerIteration == 1024)
        #expect(growth[1].fit.slopeBytesPerIteration == 0)
        // Without leaving out the warm-up the first iteration's table dominates: the fit would be different.
        #expect(p.siteGrowth().first { $0.site.function == "Cache.store(_:)" }?.fit.slopeBytesPerIteration ?? 0 < 0)
        // Fewer than three measured iterations: no fit.
        #expect(p.siteGrowth(warmupIterations: 4).isEmpty)
        #expect(p.siteGrowth(warmupIterations: 100).isEmpty)
    }

    @Test func aSiteMissingFromAnIterationCountsAsZero() {
        let iterations = (0..<4).map { k in
            IterationLiveSet(
                phase: "loop", iteration: k, timeNanoseconds: 0, levelBytes: 0,
                live: k == 0 ? [] : [StackLiveBytes(stack: 0, liveBytes: 100 * k, liveCount: k)])
        }
        let growth = profile([([0, 1], 100, 1)], iterations: iterations).siteGrowth()
        #expect(growth.first?.liveBytesAfterIteration == [0, 100, 200, 300])
        #expect(growth.first?.fit.slopeBytesPerIteration == 100)
    }

    @Test func framesReadWell() {
        #expect(frames[1].shortLocation == "Cache.swift:20")
        #expect(frames[2].shortLocation == nil)
        #expect(frames[4].moduleName == "libswiftCore.so")
        #expect(AllocationSite(frames[4]).shortLocation == "libswiftCore.so")
        #expect(frames.sorted().first?.function == "Cache.store(_:)")
    }
}
