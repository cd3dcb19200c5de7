import HarnessModel
import Measurement
import Testing
import WorkloadKit

/// The warning/limit state machine and memory levels: plain values.
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
            .none, .none, .warning,  // reaching the level warns
            .none, .none, .none,  // staying above the re-arm level, even dipping under the level, does not
            .none, .none, .none,  // back at 800 and 810 without having re-armed: still quiet
            .none,  // 720: re-armed
            .none, .warning, .none,  // the next crossing warns again, once
            .none,  // at the limit is not over it
            .limitExceeded,
        ]
        #expect(events(budget, footprints) == expected)
    }

    @Test func everySampleOverTheLimitSaysSoAndAJumpOverBothLevelsIsTheLimit() {
        let budget = MemoryBudget(limitBytes: 1000, warningBytes: 800)
        #expect(events(budget, [2000, 2000, 10]) == [.limitExceeded, .limitExceeded, .none])
    }

    @Test func withoutALimitOnlyWarningsAndWithoutWarningsOnlyTheLimit() {
        #expect(
            events(MemoryBudget(warningBytes: 50), [10, 60, 1 << 40, 40, 60]) == [
                .none, .warning, .none, .none, .warning,
            ])
        #expect(events(MemoryBudget(limitBytes: 50), [10, 49, 50, 51]) == [.none, .none, .none, .limitExceeded])
    }

    @Test(arguments: [
        ("80%", MemoryLevel.fractionOfLimit(0.8)), ("100%", .fractionOfLimit(1)), ("240MiB", .bytes(240 << 20)),
        ("1.5GiB", .bytes(3 << 29)),
    ])
    func levelsParse(text: String, level: MemoryLevel) {
        #expect(MemoryLevel.parse(text) == level)
    }

    @Test(arguments: ["0%", "120%", "-5%", "0", "lots", "80", "0.8", "0B"])
    func badLevelsDoNot(text: String) {
        #expect(MemoryLevel.parse(text) == nil)
    }

    @Test func aNumberWithoutAUnitIsAmbiguousAndOneWithAUnitIsNot() {
        // `0.8` could be 80% or 1 byte (it was once read as 1 byte); `80` could be 80% or 80 bytes.
        #expect(["0.8", "80", "1_000", " 12 "].allSatisfy(MemoryLevel.isBareNumber))
        #expect(!["80%", "80B", "240 MiB", "1.5GiB", "lots", ""].contains(where: MemoryLevel.isBareNumber))
        #expect(MemoryLevel.parse("80B") == .bytes(80))
    }
}
