import AllocatorProbe
import HarnessCore
import HarnessModel
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The warning/limit state machine, levels, options and the parser keys: plain values.
struct MemoryWatchTests {
    /// Feeds `footprints` to a fresh watch and returns what each one meant.
    func events(_ budget: MemoryBudget, _ footprints: [Int]) -> [MemoryWatch.Event] {
        var watch = MemoryWatch(budget)
        return footprints.map { watch.observe($0) }
    }

    @Test func aWarningComesOncePerCrossingAndReArmsAtNinetyPercentOfItsLevel() {
        // Warning at 800, so re-armed at 720 or below; limit 1000.
        let budget = MemoryBudget(limitBytes: 1000, warningBytes: 800)
        #expect(budget.rearmBytes == 720)
        let footprints = [100, 790, 800, 850, 799, 760, 800, 721, 810, 720, 730, 805, 900, 1000, 1001]
        let expected: [MemoryWatch.Event] = [
            .none, .none, .warning,   // reaching the level warns
            .none, .none, .none,      // staying above the re-arm level, even dipping under the level, does not
            .none, .none, .none,      // back at 800 and 810 without having re-armed: still quiet
            .none,                    // 720: re-armed
            .none, .warning, .none,   // the next crossing warns again, once
            .none,                    // at the limit is not over it
            .limitExceeded,
        ]
        #expect(events(budget, footprints) == expected)
    }

    @Test func everySampleOverTheLimitSaysSoAndAJumpOverBothLevelsIsTheLimit() {
        let budget = MemoryBudget(limitBytes: 1000, warningBytes: 800)
        #expect(events(budget, [2000, 2000, 10]) == [.limitExceeded, .limitExceeded, .none])
    }

    @Test func withoutALimitOnlyWarningsAndWithoutWarningsOnlyTheLimit() {
        #expect(events(MemoryBudget(warningBytes: 50), [10, 60, 1 << 40, 40, 60]) == [.none, .warning, .none, .none, .warning])
        #expect(events(MemoryBudget(limitBytes: 50), [10, 49, 50, 51]) == [.none, .none, .none, .limitExceeded])
    }

    @Test(arguments: [
        ("80%", MemoryLevel.fractionOfLimit(0.8)), ("100%", .fractionOfLimit(1)), ("240MiB", .bytes(240 << 20)),
        ("1.5GiB", .bytes(3 << 29)),
    ])
    func levelsParse(text: String, level: MemoryLevel) {
        #expect(MemoryLevel.parse(text) == level)
    }

    @Test(arguments: ["0%", "120%", "-5%", "0", "lots", "80"])
    func badLevelsDoNot(text: String) {
        // "80" is 80 bytes, which is a size; only the nonsense ones are refused.
        if text == "80" {
            #expect(MemoryLevel.parse(text) == .bytes(80))
        } else {
            #expect(MemoryLevel.parse(text) == nil)
        }
    }

    /// A parsed scenario with these memory keys.
    func scenario(limit: String? = nil, warning: String? = nil) throws -> ScenarioSpec {
        var text = "scenario: s\nworkload: example\n"
        if let limit { text += "memoryLimit: \(limit)\n" }
        if let warning { text += "memoryWarning: \(warning)\n" }
        return try ScenarioParser(catalog: WorkloadCatalog([ExampleWorkload()])).parse(text, file: "Scenarios/s.yaml")
    }

    @Test func optionsOverrideTheDeviceWhichOverridesTheFile() throws {
        let file = try scenario(limit: "300MiB", warning: "50%")
        #expect(MemoryOptions().budget(for: file) == MemoryBudget(limitBytes: 300 << 20, warningBytes: 150 << 20))
        #expect(MemoryOptions().budget(for: try scenario()) == nil)

        let device = try #require(DeviceProfile.named("iphone-6"))
        let onDevice = MemoryOptions(footprint: .resident, device: device).budget(for: file)
        #expect(onDevice == MemoryBudget(footprint: .resident, limitBytes: 645 << 20, warningBytes: Int((Double(645 << 20) * 0.8).rounded())))

        let explicit = MemoryOptions(limit: .value(100 << 20), warning: .off, device: device).budget(for: file)
        #expect(explicit == MemoryBudget(limitBytes: 100 << 20, warningBytes: nil))
        #expect(MemoryOptions(limit: .off, warning: .off).budget(for: file) == nil)
    }

    @Test func aShareWithoutALimitAndAWarningAboveTheLimitAreProblems() throws {
        let shareOnly = try scenario(warning: "80%")
        #expect(MemoryOptions().problems(for: [shareOnly]).first?.contains("there is no memory limit") == true)
        #expect(MemoryOptions(limit: .value(1 << 30)).problems(for: [shareOnly]).isEmpty)
        let above = MemoryOptions(limit: .value(100 << 20), warning: .value(.bytes(200 << 20))).problems(for: [try scenario()])
        #expect(above.first?.contains("is above the memory limit") == true)
    }

    @Test func deviceProfilesAreOrderedAndNamedUniquely() {
        let names = DeviceProfile.builtIn.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(DeviceProfile.builtIn.allSatisfy { $0.limitBytes > 100 << 20 && $0.warningFraction < 1 })
        #expect(DeviceProfile.named("IPHONE-4S")?.limitBytes == 286 << 20)
    }
}

struct MemoryBudgetParserTests {
    let parser = ScenarioParser(catalog: WorkloadCatalog([ExampleWorkload()]))

    func parse(_ extra: String) -> Result<ScenarioSpec, HarnessError> {
        Result { () throws(HarnessError) in
            try parser.parse("scenario: s\nworkload: example\n" + extra, file: "Scenarios/x.yaml")
        }
    }

    @Test func readsTheLimitAndTheWarning() throws {
        let spec = try parse("memoryLimit: 300MiB\nmemoryWarning: 80%\n").get()
        #expect(spec.memoryLimitBytes == 300 << 20)
        #expect(spec.memoryWarning == .fractionOfLimit(0.8))
        let absolute = try parse("memoryWarning: 64MiB\n").get()
        #expect(absolute.memoryLimitBytes == nil)
        #expect(absolute.memoryWarning == .bytes(64 << 20))
    }

    @Test(arguments: [
        ("memoryLimit: 300XB\n", "Scenarios/x.yaml:3:14: bad value '300XB' for 'memoryLimit'; expected a size from 1MiB to 1TiB"),
        ("memoryLimit: 100MiB\nmemoryWarning: 200MiB\n", "Scenarios/x.yaml:4:16: 'memoryWarning' 200.00 MiB is above 'memoryLimit' 100.00 MiB"),
        ("memoryWarning: 180%\n", "Scenarios/x.yaml:3:16: bad value '180%' for 'memoryWarning'; expected a share of memoryLimit"),
        ("memoryLimt: 1GiB\n", "unknown key 'memoryLimt'; expected one of: "),
    ])
    func reportsBadValuesWithTheirPlace(text: String, message: String) {
        guard case let .failure(.invalidScenario(found)) = parse(text) else {
            Issue.record("\(text) parsed")
            return
        }
        #expect(found.contains { $0.description.contains(message) }, "\(found)")
    }
}

/// The sampler's side: warnings posted and the limit enforced on scripted footprints.
@Suite(.serialized)
struct SamplerBudgetTests {
    final class Calls: Sendable {
        let warnings = Atomic<Int>(0)
        let limit = Mutex<[(MemoryLimitHit, SamplerOutput)]>([])
    }

    @Test func warnsOncePerCrossingAndStopsAtTheFirstSampleOverTheLimit() throws {
        // Warning at 80 (re-armed at 72), limit 150.
        let probe = ScriptedProbe([10, 50, 85, 90, 70, 95, 60, 85, 200, 300, 400])
        let warnings = MemoryWarnings()
        let calls = Calls()
        let budget = MemoryBudget(limitBytes: 150, warningBytes: 80)
        let watch = FootprintWatch(budget: budget, warn: {
            calls.warnings.add(1, ordering: .relaxed)
            warnings.post()
        }, limitExceeded: { hit, output in
            calls.limit.withLock { $0.append((hit, output)) }
        })
        let sampler = Sampler(probe: probe, interval: .microseconds(100), capacity: 64, gauges: [warnings.gauge],
                              phaseNames: ["a"], phaseIndex: { 0 }, watch: watch)
        sampler.start()
        while calls.limit.withLock({ $0.isEmpty }) { usleep(500) }
        let output = sampler.stop()

        #expect(calls.warnings.load(ordering: .relaxed) == 3)
        #expect(warnings.postedCount == 3)
        let (hit, seen) = try #require(calls.limit.withLock { $0.first })
        #expect(calls.limit.withLock { $0.count } == 1)
        #expect(hit.footprintBytes == 200 && hit.limitBytes == 150 && hit.overshootBytes == 50 && hit.warningsBefore == 3)
        // Every sample up to the one over the limit, and none after it.
        #expect(seen.series.allocatedBytes == [10, 50, 85, 90, 70, 95, 60, 85, 200])
        #expect(seen.series.gauges[0] == [0, 0, 1, 1, 1, 2, 2, 3, 3])
        #expect(seen.series.timeNanoseconds.last == hit.timeNanoseconds)
        #expect(seen.peak.allocatedBytes == 200)
        #expect(probe.readings == 9, "sampling ended at the sample over the limit")
        #expect(output.series.allocatedBytes == seen.series.allocatedBytes)
    }

    @Test func theResidentFootprintIsTheKernelsRSS() throws {
        // The scripted probe reports RSS as 4x allocated: 40 is over a limit of 30 only as RSS.
        let probe = ScriptedProbe([5, 10])
        let calls = Calls()
        let watch = FootprintWatch(budget: MemoryBudget(footprint: .resident, limitBytes: 30), warn: {}, limitExceeded: { hit, output in
            calls.limit.withLock { $0.append((hit, output)) }
        })
        let sampler = Sampler(probe: probe, interval: .microseconds(100), capacity: 64, gauges: [],
                              phaseNames: ["a"], phaseIndex: { 0 }, watch: watch)
        sampler.start()
        while calls.limit.withLock({ $0.isEmpty }) { usleep(500) }
        _ = sampler.stop()
        let hit = try #require(calls.limit.withLock { $0.first?.0 })
        #expect(hit.footprintBytes == 40 && hit.footprint == .resident)
    }

    @Test func watchingAndPostingAllocateNothingOnTheSamplerThread() throws {
        let probe = try JemallocProbe()
        let warnings = MemoryWarnings()
        let delivered = Atomic<Int>(0)
        warnings.onWarning { delivered.add(1, ordering: .relaxed) }
        // Warn from the first sample on; limit far away.
        let budget = MemoryBudget(limitBytes: 1 << 50, warningBytes: 1)
        let watch = FootprintWatch(budget: budget, warn: { warnings.post() }, limitExceeded: { _, _ in })
        let sampler = Sampler(probe: probe, interval: .microseconds(200), capacity: 64, gauges: [warnings.gauge],
                              phaseNames: ["x"], phaseIndex: { 0 }, watch: watch)
        sampler.start()
        usleep(50_000)
        let output = sampler.stop()
        while warnings.deliveredCount < 1 { usleep(500) }
        #expect(warnings.postedCount == 1, "one crossing, one warning")
        #expect(delivered.load(ordering: .relaxed) == 1)
        #expect(output.sampleCount > 50)
        #expect(output.samplerAllocatedBytes == 0)
        warnings.end()
    }
}

/// Memory warnings: handlers off the posting thread, once per post, dropped at the end.
@Suite(.serialized)
struct MemoryWarningsTests {
    final class Witness: Sendable {}

    @Test func handlersRunOnTheWarningThreadOncePerPost() {
        let warnings = MemoryWarnings()
        let calls = Mutex<[Bool]>([])
        let poster = pthread_self()
        warnings.onWarning { calls.withLock { $0.append(pthread_equal(pthread_self(), poster) != 0) } }
        warnings.onWarning { calls.withLock { $0.append(pthread_equal(pthread_self(), poster) != 0) } }
        for _ in 0..<3 { warnings.post() }
        while warnings.deliveredCount < 3 { usleep(500) }
        #expect(calls.withLock { $0 } == Array(repeating: false, count: 6), "two handlers × three warnings, never on the poster's thread")
        #expect(warnings.gauge.value == 3)
        warnings.end()
    }

    @Test func endDropsTheHandlersAndWhatTheyCapture() {
        let warnings = MemoryWarnings()
        weak var weakWitness: Witness?
        do {
            let witness = Witness()
            weakWitness = witness
            warnings.onWarning { _ = witness }
        }
        #expect(weakWitness != nil, "the handler keeps what it captures alive")
        warnings.end()
        #expect(weakWitness == nil)
        warnings.post()
        #expect(warnings.postedCount == 1 && warnings.deliveredCount == 0, "after the end, warnings are only counted")
    }
}
