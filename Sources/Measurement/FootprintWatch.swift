import HarnessModel
import WorkloadKit

/// What the sampler watches the footprint for on every sample, and whom it tells.
public struct FootprintWatch: Sendable {
    /// The levels and the figure compared with them.
    public var budget: MemoryBudget
    /// Called on the sampler thread when the footprint reaches the warning level while armed.
    /// It must not allocate or block (`MemoryWarnings.post()` qualifies).
    public var warn: @Sendable () -> Void
    /// Called once on the sampler thread when a sample exceeds the limit. Sampling has ended by
    /// then and the output holds every sample up to the one that crossed; it may allocate, write
    /// files and end the process. The workload keeps running meanwhile.
    public var limitExceeded: @Sendable (MemoryLimitHit, SamplerOutput) -> Void

    public init(
        budget: MemoryBudget, warn: @escaping @Sendable () -> Void,
        limitExceeded: @escaping @Sendable (MemoryLimitHit, SamplerOutput) -> Void
    ) {
        self.budget = budget
        self.warn = warn
        self.limitExceeded = limitExceeded
    }
}

/// The warning/limit state machine the sampler runs on every sample: a pure value, so its
/// hysteresis is tested with made-up footprints.
///
/// - A footprint **above** the limit is `.limitExceeded` (every time; the caller stops).
/// - A footprint **at or above** the warning level is `.warning` once; the watch then stays
///   quiet until the footprint has fallen to the re-arm level (`MemoryBudget.rearmBytes`) or below.
/// Observing allocates nothing.
public struct MemoryWatch: Sendable, Hashable {
    /// What one observation means.
    public enum Event: Sendable, Hashable {
        case none
        /// The footprint reached the warning level while armed.
        case warning
        /// The footprint exceeded the limit.
        case limitExceeded
    }

    /// Bytes; `Int.max` when there is no limit.
    public let limitBytes: Int
    /// Bytes; `Int.max` when there are no warnings.
    public let warningBytes: Int
    /// Bytes; warnings re-arm at or below this.
    public let rearmBytes: Int
    /// Whether the next crossing of the warning level is delivered.
    public private(set) var armed = true

    public init(_ budget: MemoryBudget) {
        limitBytes = budget.limitBytes ?? Int.max
        warningBytes = budget.warningBytes ?? Int.max
        rearmBytes = budget.rearmBytes ?? Int.max
    }

    /// Takes one footprint reading (bytes) and says what it means.
    public mutating func observe(_ footprintBytes: Int) -> Event {
        if footprintBytes > limitBytes { return .limitExceeded }
        if armed {
            if footprintBytes >= warningBytes {
                armed = false
                return .warning
            }
        } else if footprintBytes <= rearmBytes {
            armed = true
        }
        return .none
    }
}
