import AllocatorProbe
import ArgumentParser
import HarnessModel
import Measurement
import Runner

/// `_exact-check`: shows that this binary counts every allocation exactly. Not for people; tests run it.
struct ExactCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "_exact-check",
        abstract:
            "Call every entry point of the malloc family and show how the exact count moved (with the agent preloaded).",
        shouldDisplay: false
    )

    func run() throws {
        guard var rows = Agent.selfCheck() else {
            throw Terminal.fail(
                MeasurementError.exactPeakUnavailable(
                    detail: "this process does not count allocations; run it with the agent preloaded: LD_PRELOAD=\""
                        + "\(Agent.libraryName) libjemalloc.so.2\" MEMHARNESS_AGENT_EXACT=1 (\(Agent.buildHint))"
                ).description, status: .caseFailed)
        }
        rows.append(Self.swiftArrayRow())
        Terminal.result(
            "size classes: "
                + (Agent.usesSizeClassFormula
                    ? "jemalloc's formula, checked against nallocx" : "asked of jemalloc (sallocx) per block"))
        Terminal.result(
            "malloc/free: " + (Agent.forwardsToFastPaths ? "jemalloc's malloc and free" : "mallocx and dallocx"))
        Terminal.result("entry point | expected | counted | expected on release | counted on release | calls | ok")
        for row in rows {
            Terminal.result(
                "\(row.name) | \(row.expectedDeltaBytes) | \(row.deltaBytes) | \(row.expectedReleaseBytes) | \(row.releaseBytes) | \(row.countedCalls) | \(row.isConsistent ? "ok" : "MISMATCH")"
            )
        }
        if rows.contains(where: { !$0.isConsistent }) { throw ExitCode(ExitStatus.caseFailed.code) }
    }

    /// A Swift array's buffer, allocated by the Swift runtime (`swift_slowAlloc`, another library).
    static func swiftArrayRow() -> Agent.CheckRow {
        let calls = Agent.allocationCalls() ?? 0
        let before = Agent.liveBytes() ?? 0
        var array = [UInt8](repeating: 1, count: 1_000_000)
        let after = Agent.liveBytes() ?? 0
        let counted = (Agent.allocationCalls() ?? 0) - calls
        // The buffer is a 32-byte header and the elements; the runtime sizes `capacity` to fill the size class.
        let usable = JemallocProbe.sizeClassBytes(for: 32 + array.capacity)
        array = []
        let released = (Agent.liveBytes() ?? 0) - after
        return Agent.CheckRow(
            name: "Swift Array (libswiftCore calls malloc)", expectedDeltaBytes: usable, deltaBytes: after - before,
            expectedReleaseBytes: -usable, releaseBytes: released, countedCalls: counted)
    }
}
