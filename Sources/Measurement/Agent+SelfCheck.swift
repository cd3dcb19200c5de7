import AllocatorProbe
import WorkloadKit

extension Agent {
    /// Why `selfCheck()` has nothing to show: this process does not count allocations, and how to make it.
    public static var notCountingError: MeasurementError {
        .exactPeakUnavailable(
            detail: "this process does not count allocations; run it with the agent preloaded: LD_PRELOAD=\""
                + "\(libraryName) libjemalloc.so.2\" MEMHARNESS_AGENT_EXACT=1 (\(buildHint))")
    }

    /// The self-check as `memharness _exact-check` prints it: how sizes are classed and how malloc and free
    /// reach jemalloc, then a header and one ` | `-separated row per entry point (name, expected and counted
    /// bytes on the call and on release, counted calls, `ok` or `MISMATCH`), each line ending in a newline.
    public static func selfCheckTable(
        _ rows: [CheckRow], sizeClassFormula: Bool = usesSizeClassFormula, fastPaths: Bool = forwardsToFastPaths
    ) -> String {
        var lines = [
            "size classes: "
                + (sizeClassFormula
                    ? "jemalloc's formula, checked against nallocx" : "asked of jemalloc (sallocx) per block"),
            "malloc/free: " + (fastPaths ? "jemalloc's malloc and free" : "mallocx and dallocx"),
            "entry point | expected | counted | expected on release | counted on release | calls | ok",
        ]
        for row in rows {
            let cells: [String] = [
                row.name, "\(row.expectedDeltaBytes)", "\(row.deltaBytes)", "\(row.expectedReleaseBytes)",
                "\(row.releaseBytes)", "\(row.countedCalls)", row.isConsistent ? "ok" : "MISMATCH",
            ]
            lines.append(cells.joined(separator: " | "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The self-check's row for a Swift array's buffer, allocated by the Swift runtime (`swift_slowAlloc`,
    /// another library than the C check's): a 1 MB array made and dropped while the count is watched.
    public static func swiftArrayRow() -> CheckRow {
        let calls = allocationCalls() ?? 0
        let before = liveBytes() ?? 0
        var array = [UInt8](repeating: 1, count: 1_000_000)
        let after = liveBytes() ?? 0
        let counted = (allocationCalls() ?? 0) - calls
        // The runtime sizes `capacity` to fill the size class: the array's cost at its capacity is its block.
        let usable = AllocatorCost.arrayBytes(of: UInt8.self, count: array.capacity)
        array = []
        let released = (liveBytes() ?? 0) - after
        return CheckRow(
            name: "Swift Array (libswiftCore calls malloc)", expectedDeltaBytes: usable, deltaBytes: after - before,
            expectedReleaseBytes: -usable, releaseBytes: released, countedCalls: counted)
    }
}
