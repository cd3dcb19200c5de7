import CExactPeakHooks
import WorkloadKit

/// The exact-peak counters of the `memharness-exact` executable (the CExactPeak target), reached
/// through weak hooks: in any other binary `isAvailable` is false and every reading is nil.
///
/// The counters are process-wide: live size-class bytes of every block the malloc family handed
/// out and not yet freed, on whatever thread.
public enum ExactPeak {
    /// The executable that counts every allocation, built beside `memharness`.
    public static let executableName = "memharness-exact"

    /// What to do when it is missing.
    public static var missingHint: String { "run it in \(executableName); \(buildHint)" }

    /// How to build it.
    public static let buildHint =
        "build it with `make build` or `swift build --product \(executableName)` (add `-c release` for a release build)"

    /// True when this process counts every allocation.
    public static var isAvailable: Bool { memharness_exact_available() != 0 }

    /// Live size-class bytes now; nil without the counters.
    public static func liveBytes() -> Int? { reading(memharness_exact_hook_live_bytes()) }

    /// The high-water mark since the last call (absolute bytes), restarting it from the live bytes now; nil without the counters.
    public static func takePeak() -> Int? { reading(memharness_exact_hook_take_peak()) }

    /// The phase high-water mark since the last call (absolute bytes), restarting it from the live bytes now; nil without the counters.
    public static func takePhasePeak() -> Int? { reading(memharness_exact_hook_take_phase_peak()) }

    /// Allocating calls counted so far; nil without the counters.
    public static func allocationCalls() -> Int? { reading(memharness_exact_hook_allocation_count()) }

    /// True when malloc and calloc take their sizes from jemalloc's size-class formula (verified at start-up).
    public static var usesSizeClassFormula: Bool { memharness_exact_hook_fast_size_classes() == 1 }

    /// True when malloc and free forward to jemalloc's own malloc and free.
    public static var forwardsToFastPaths: Bool { memharness_exact_hook_forwards_to_fast_paths() == 1 }

    /// One call of the malloc family made by `selfCheck()`, with what the count should and did do.
    public struct CheckRow: Sendable, Hashable {
        /// The entry point, e.g. `posix_memalign`.
        public var name: String
        /// Expected move of the live bytes on the call (the block's usable size), bytes.
        public var expectedDeltaBytes: Int
        /// Observed move, bytes.
        public var deltaBytes: Int
        /// Expected move when the block is released, bytes.
        public var expectedReleaseBytes: Int
        /// Observed move, bytes.
        public var releaseBytes: Int
        /// Allocating calls counted during the call.
        public var countedCalls: Int

        public init(
            name: String, expectedDeltaBytes: Int, deltaBytes: Int, expectedReleaseBytes: Int, releaseBytes: Int,
            countedCalls: Int
        ) {
            self.name = name
            self.expectedDeltaBytes = expectedDeltaBytes
            self.deltaBytes = deltaBytes
            self.expectedReleaseBytes = expectedReleaseBytes
            self.releaseBytes = releaseBytes
            self.countedCalls = countedCalls
        }

        /// True when the count moved exactly as expected both ways and the call was counted.
        public var isConsistent: Bool {
            deltaBytes == expectedDeltaBytes && releaseBytes == expectedReleaseBytes && countedCalls >= 1
        }
    }

    /// Calls every entry point of the malloc family (C and C++, and a free on another thread) and
    /// reports how the count moved; nil without the counters. Run it while no other thread allocates.
    public static func selfCheck() -> [CheckRow]? {
        let capacity = 64
        var rows = [memharness_exact_check_row](repeating: memharness_exact_check_row(), count: capacity)
        let count = Int(
            rows.withUnsafeMutableBufferPointer { memharness_exact_hook_self_check($0.baseAddress, Int32(capacity)) })
        guard count >= 0 else { return nil }
        return rows.prefix(min(count, capacity)).map { row in
            CheckRow(
                name: row.name.map { String(cString: $0) } ?? "?",
                expectedDeltaBytes: Int(row.expected_delta_bytes), deltaBytes: Int(row.delta_bytes),
                expectedReleaseBytes: Int(row.expected_release_bytes), releaseBytes: Int(row.release_bytes),
                countedCalls: Int(row.counted_calls))
        }
    }

    private static func reading(_ value: Int64) -> Int? {
        value < 0 ? nil : Int(value)
    }
}
