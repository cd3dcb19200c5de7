import Measurement
import Testing

/// How `memharness _exact-check` shows the agent's self-check (the rows themselves come from the agent,
/// tested by driving the binary with it preloaded).
struct AgentSelfCheckTableTests {
    @Test func showsTheAllocatorPathsThenOneRowPerEntryPoint() {
        let rows = [
            Agent.CheckRow(
                name: "malloc", expectedDeltaBytes: 48, deltaBytes: 48, expectedReleaseBytes: -48, releaseBytes: -48,
                countedCalls: 1),
            Agent.CheckRow(
                name: "posix_memalign", expectedDeltaBytes: 4096, deltaBytes: 4160, expectedReleaseBytes: -4096,
                releaseBytes: -4096, countedCalls: 1),
        ]
        #expect(
            Agent.selfCheckTable(rows, sizeClassFormula: true, fastPaths: true)
                == """
                size classes: jemalloc's formula, checked against nallocx
                malloc/free: jemalloc's malloc and free
                entry point | expected | counted | expected on release | counted on release | calls | ok
                malloc | 48 | 48 | -48 | -48 | 1 | ok
                posix_memalign | 4096 | 4160 | -4096 | -4096 | 1 | MISMATCH

                """)
        let other = Agent.selfCheckTable([], sizeClassFormula: false, fastPaths: false).split(separator: "\n")
        #expect(other.first == "size classes: asked of jemalloc (sallocx) per block")
        #expect(other.dropFirst().first == "malloc/free: mallocx and dallocx")
    }

    @Test func aRowIsConsistentOnlyWhenBothWaysMatchAndTheCallWasCounted() {
        let row = Agent.CheckRow(
            name: "x", expectedDeltaBytes: 16, deltaBytes: 16, expectedReleaseBytes: -16, releaseBytes: -16,
            countedCalls: 1)
        #expect(row.isConsistent)
        var uncounted = row
        uncounted.countedCalls = 0
        #expect(!uncounted.isConsistent)
        var leaked = row
        leaked.releaseBytes = 0
        #expect(!leaked.isConsistent)
    }

    @Test func withoutTheAgentTheSelfCheckSaysHowToPreloadIt() {
        #expect(Agent.selfCheck() == nil, "no test process loads the agent")
        let message = Agent.notCountingError.description
        #expect(message.contains("LD_PRELOAD=\"\(Agent.libraryName) libjemalloc.so.2\" MEMHARNESS_AGENT_EXACT=1"))
        #expect(message.hasPrefix("exact peaks (--peak exact, peak: exact) need every allocation counted, but"))
    }
}
