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
            "Call every entry point of the malloc family and show how the exact count moved (memharness-exact only).",
        shouldDisplay: false
    )

    func run() throws {
        guard var rows = ExactPeak.selfCheck() else {
            throw Terminal.fail(
                MeasurementError.exactPeakUnavailable(
                    detail:
                        "\(ProcessCaseLauncher.currentExecutable) does not count allocations (\(ExactPeak.missingHint))"
                ).description, status: .caseFailed)
        }
        rows.append(Self.swiftArrayRow())
        Terminal.result(
            "size classes: "
                + (ExactPeak.usesSizeClassFormula
                    ? "jemalloc's formula, checked against nallocx" : "asked of jemalloc (sallocx) per block"))
        Terminal.result(
            "malloc/free: " + (ExactPeak.forwardsToFastPaths ? "jemalloc's malloc and free" : "mallocx and dallocx"))
        Terminal.result("entry point | expected | counted | expected on release | counted on release | calls | ok")
        for row in rows {
            Terminal.result(
                "\(row.name) | \(row.expectedDeltaBytes) | \(row.deltaBytes) | \(row.expectedReleaseBytes) | \(row.releaseBytes) | \(row.countedCalls) | \(row.isConsistent ? "ok" : "MISMATCH")"
            )
        }
        if rows.contains(where: { !$0.isConsistent }) { throw ExitCode(ExitStatus.caseFailed.code) }
    }

    /// A Swift array's buffer, allocated by the Swift runtime (`swift_slowAlloc`, another library).
    static func swiftArrayRow() -> ExactPeak.CheckRow {
        let calls = ExactPeak.allocationCalls() ?? 0
        let before = ExactPeak.liveBytes() ?? 0
        var array = [UInt8](repeating: 1, count: 1_000_000)
        let after = ExactPeak.liveBytes() ?? 0
        let counted = (ExactPeak.allocationCalls() ?? 0) - calls
        // The buffer is a 32-byte header and the elements; the runtime sizes `capacity` to fill the size class.
        let usable = JemallocProbe.sizeClassBytes(for: 32 + array.capacity)
        array = []
        let released = (ExactPeak.liveBytes() ?? 0) - after
        return ExactPeak.CheckRow(
            name: "Swift Array (libswiftCore calls malloc)", expectedDeltaBytes: usable, deltaBytes: after - before,
            expectedReleaseBytes: -usable, releaseBytes: released, countedCalls: counted)
    }
}
