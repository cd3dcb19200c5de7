import HarnessModel
import TestSupport
import Testing
import Verdicts

/// Known leaks a suppressions file names are left out of the leak verdict, and counted as suppressed.
@Suite struct SuppressionVerdictTests {
    /// The fixture's one group (3 blocks, 1 cycle through `App.Screen`) with a signature.
    static func run(suppressions: [LeakSuppression]?) -> ScenarioRun {
        var heap = HeapLeakFixture.graph(leaked: 3, cycles: 1)
        heap.captures[0].groups[0].signature = "3f9a0c12be47"
        let screen = HeapTypeName(name: "App.Screen", kind: .swiftObject)
        let edge = HeapCycleEdge(from: screen, fieldName: "a", byteOffset: 16, kind: .strong, to: screen)
        heap.captures[0].groups[0].cycle = HeapCycle(memberBlocks: 3, memberBytes: 3072, edges: [edge])
        var run = HeapLeakFixture.run(expectation: .leakFree, heap: heap)
        for index in run.instrumentedCases.indices { run.instrumentedCases[index].suppressions = suppressions }
        return run
    }

    @Test func aSuppressedSignatureOrTypeIsNoLeakAndIsCounted() throws {
        let leaking = try #require(StrategyLeakSummary.summaries(Self.run(suppressions: nil)).first)
        #expect(leaking.verdict == .leaks && leaking.heap?.new.blocks == 3)
        let other = [LeakSuppression(.signature("000000000000"), reason: "another library's leak")]
        #expect(StrategyLeakSummary.summaries(Self.run(suppressions: other)).first?.verdict == .leaks)
        for match in [LeakSuppression.Match.signature("3f9a0c12be47"), .type("Screen"), .type("App.Screen")] {
            let suppressions = [LeakSuppression(match, reason: "known: upstream issue 12")]
            let summary = try #require(StrategyLeakSummary.summaries(Self.run(suppressions: suppressions)).first)
            #expect(summary.verdict == .leakFree && summary.outcome == .asExpected, "\(match)")
            let heap = try #require(summary.heap)
            #expect(heap.new == .none && heap.suppressed.groups == 1)
            #expect(heap.suppressed.unreachable == UnreachableBlocks(blocks: 3, bytes: 3072, cycles: 1))
            #expect(LeakChecks.checks(Self.run(suppressions: suppressions)).allSatisfy { $0.passed })
        }
        let group = try #require(
            Self.run(suppressions: nil).instrumentedCases.first?.completed?.heapGraph?.last?.groups)
        #expect(!LeakSuppression(.type("Scree"), reason: "").matches(group[0]))
    }
}
