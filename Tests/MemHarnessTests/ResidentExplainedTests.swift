import Foundation
import HarnessModel
import TestSupport
import Testing

/// A program's resident set explained, on programs whose memory is known by construction (`agent-probe`): each part
/// measured (jemalloc's split, its pages per the kernel, smaps for stacks, files and other anonymous mappings), and
/// their sum within 2% of the resident set read right after them.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ResidentExplainedTests {
    static let mebibyte = 1 << 20
    /// The quality bar: the parts add up to the measured resident set within 2%.
    static let bar = 0.02

    /// The peak and the end of the one case of a profile, and the case.
    func explained(_ trial: ProgramTrial) throws -> (ResidentBreakdown, ResidentBreakdown, CaseResult) {
        let cases = try trial.record().report.scenarios.flatMap(\.cases)
        let result = try #require(cases.first)
        let parts = try #require(result.measurements?.program?.residentExplained, "\(result)")
        let peak = try #require(parts.first { $0.point == .peak }, "\(parts)")
        let end = try #require(parts.first { $0.point == .end }, "\(parts)")
        return (peak, end, result)
    }

    static func within(_ breakdown: ResidentBreakdown) -> Bool { abs(breakdown.unexplainedFraction) <= bar }

    @Test func aProgramsOwnMappingIsOtherAnonymousAndItsBlockTheLiveHeap() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        // 48 MiB mapped and touched by the program itself (mmap), beside a 16 MiB block from malloc, held 400 ms.
        let outcome = try trial.profile([], [ProgramTrial.agentProbe, "mmap", "48MiB", "400", "16MiB"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let (peak, end, result) = try explained(trial)
        // The probe sees what the program holds: the block in the live heap, its pages among jemalloc's resident ones.
        #expect(peak.liveHeapBytes >= 16 * Self.mebibyte, "\(peak)")
        #expect((peak.allocatorPagesBytes ?? 0) >= 16 * Self.mebibyte, "\(peak)")
        // The mapping is no allocator's: other anonymous memory holds it (and little else), at the peak, not at exit.
        #expect(peak.otherAnonymousBytes >= 48 * Self.mebibyte, "\(peak)")
        #expect(peak.otherAnonymousBytes <= 52 * Self.mebibyte, "\(peak)")
        #expect(end.otherAnonymousBytes < 4 * Self.mebibyte, "\(end)")
        #expect(end.liveHeapBytes < 4 * Self.mebibyte, "\(end)")
        #expect(peak.mappedFilesBytes > 0 && peak.stacksBytes > 0, "\(peak)")
        #expect(Self.within(peak), "unexplained \(peak.unexplainedBytes) of \(peak.measuredBytes): \(peak)")
        #expect(Self.within(end), "unexplained \(end.unexplainedBytes) of \(end.measuredBytes): \(end)")
        #expect(result.metric("rssOtherAnonymous")?.value == Double(peak.otherAnonymousBytes))
        #expect(result.metric("rssLiveHeapAtEnd")?.value == Double(end.liveHeapBytes))
        let row = try trial.onlyRow()
        #expect(row["metric.rssUnexplainedRatio_ratio"] != nil, "\(row.keys.sorted())")
        let report = try String(contentsOfFile: "\(trial.out)/report.md", encoding: .utf8)
        #expect(report.contains("Resident memory explained"), "\(report)")
    }

    @Test func freedPagesJemallocKeepsAreWhatAPurgeWouldGiveBack() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        // A 4 MiB block (below jemalloc's 8 MiB oversize threshold, so its pages decay over 10 s) held, then freed
        // before exit: at exit its pages are jemalloc's dirty pages, still resident.
        let outcome = try trial.profile([], [ProgramTrial.agentProbe, "hold", "4MiB", "100"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let (peak, end, _) = try explained(trial)
        // The resident set's peak is a plateau: freed, the block's pages stay resident as jemalloc's dirty pages, so
        // a high read again once it settled may be read after the free. Either way the block is jemalloc's there:
        // live, or free and resident.
        #expect(peak.liveHeapBytes + peak.allocatorFreeBytes >= 4 * Self.mebibyte, "\(peak)")
        #expect(end.liveHeapBytes < 4 * Self.mebibyte, "\(end)")
        #expect(end.purgeableBytes >= 4 * Self.mebibyte, "\(end)")
        #expect(end.allocatorFreeBytes >= end.purgeableBytes)
        // Dirty pages are resident: the kernel counts them among jemalloc's pages.
        #expect((end.allocatorPagesBytes ?? 0) >= end.purgeableBytes + end.liveHeapBytes, "\(end)")
        #expect(Self.within(peak), "unexplained \(peak.unexplainedBytes) of \(peak.measuredBytes): \(peak)")
        #expect(Self.within(end), "unexplained \(end.unexplainedBytes) of \(end.measuredBytes): \(end)")
    }
}
