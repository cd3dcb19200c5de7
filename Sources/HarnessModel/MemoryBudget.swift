/// Which figure counts as a case's memory footprint for its limit and warnings.
public enum FootprintMeasure: String, Sendable, Hashable, Codable, CaseIterable {
    /// jemalloc's `stats.allocated`, absolute bytes: everything the process holds through malloc
    /// (the harness's own few MiB included), size-class rounded. Exact at every sample and
    /// unaffected by jemalloc's decay, so the same run kills at the same point. The default.
    case allocated
    /// The kernel's resident set size (`VmRSS`), bytes: what an operating system counts, including
    /// the runtime's code pages (~20 MiB), thread stacks and pages jemalloc has not returned yet
    /// (freed memory stays resident until it decays, ~10 s).
    case resident
}

/// A memory level: absolute bytes, or a share of the memory limit (`80%`).
public enum MemoryLevel: Sendable, Hashable, Codable {
    /// A size in bytes.
    case bytes(Int)
    /// A share of the limit, in 0...1.
    case fractionOfLimit(Double)

    /// Reads `80%` (a share of the limit, 1%...100%) or a size with its unit such as `240MiB`; nil when
    /// malformed, and for a number without a unit (see `isBareNumber`).
    public static func parse(_ text: String) -> MemoryLevel? {
        if text.hasSuffix("%") {
            guard let fraction = Units.parseFraction(text), fraction > 0, fraction <= 1 else { return nil }
            return .fractionOfLimit(fraction)
        }
        guard !isBareNumber(text), let bytes = Units.parseBytes(text), bytes > 0 else { return nil }
        return .bytes(bytes)
    }

    /// True for a number without a unit (`0.8`, `200`): a share written as a fraction or a size in bytes,
    /// it is ambiguous (`0.8` once read as 1 byte), so it is not a level.
    public static func isBareNumber(_ text: String) -> Bool {
        // A size's unit comes last (`240 MiB`, `1_000KiB`): a text ending in a digit or a point has none.
        guard Units.parseBytes(text) != nil, let last = text.last(where: { $0 != " " && $0 != "_" }) else {
            return false
        }
        return last.isASCII && (last.isNumber || last == ".")
    }

    /// The level in bytes; nil for a share when there is no limit.
    public func bytes(limit: Int?) -> Int? {
        switch self {
        case .bytes(let value): return value
        case .fractionOfLimit(let fraction): return limit.map { Int((Double($0) * fraction).rounded()) }
        }
    }
}

/// The memory budget of a case: a limit that stops it and a level that warns it, in footprint bytes.
///
/// Both are compared with the *absolute* footprint of the child process (the harness's baseline
/// included), as a phone compares an app's whole footprint with its budget.
public struct MemoryBudget: Sendable, Hashable, Codable {
    /// The figure compared with the levels.
    public var footprint: FootprintMeasure
    /// The case is stopped at the first sample whose footprint exceeds this, bytes; nil: no limit.
    public var limitBytes: Int?
    /// A memory warning is delivered when the footprint reaches this, bytes; nil: no warnings.
    public var warningBytes: Int?

    /// Warnings re-arm once the footprint has fallen to this share of the warning level.
    ///
    /// 90%: far enough below the level that a footprint hovering around it (one image loaded,
    /// one freed) is one crossing, not a warning per sample; close enough that a cache that
    /// empties on a warning and refills is warned again.
    public static let rearmFraction = 0.9

    public init(footprint: FootprintMeasure = .allocated, limitBytes: Int? = nil, warningBytes: Int? = nil) {
        self.footprint = footprint
        self.limitBytes = limitBytes
        self.warningBytes = warningBytes
    }

    /// The level at or below which warnings re-arm, bytes; nil without warnings.
    public var rearmBytes: Int? {
        warningBytes.map { Int((Double($0) * Self.rearmFraction).rounded(.down)) }
    }

    /// True when there is nothing to watch.
    public var isEmpty: Bool { limitBytes == nil && warningBytes == nil }
}
