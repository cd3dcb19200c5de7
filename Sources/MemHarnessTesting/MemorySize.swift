import HarnessModel
import WorkloadKit

/// An amount of memory for a limit: `.mebibytes(64)`, `.kibibytes(512)`, `.bytes(4096)`.
///
/// Binary multiples only (1 KiB = 1024 bytes), like every figure of the harness. Fractions round to
/// the nearest byte (`.mebibytes(1.5)` is 1,572,864 bytes); negative amounts are clamped to zero.
public struct MemorySize: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The amount in bytes.
    public var bytes: Int

    /// An amount of `bytes` bytes.
    public init(bytes: Int) {
        // A negative limit could never be met; zero says the same thing plainly.
        self.bytes = max(0, bytes)
    }

    /// `count` bytes.
    public static func bytes(_ count: Int) -> MemorySize { MemorySize(bytes: count) }

    /// `count` KiB (1024 bytes each).
    public static func kibibytes(_ count: Double) -> MemorySize { scaled(count, by: 1 << 10) }

    /// `count` MiB (1024 KiB each).
    public static func mebibytes(_ count: Double) -> MemorySize { scaled(count, by: 1 << 20) }

    /// `count` GiB (1024 MiB each).
    public static func gibibytes(_ count: Double) -> MemorySize { scaled(count, by: 1 << 30) }

    private static func scaled(_ count: Double, by unit: Int) -> MemorySize {
        let value = (count * Double(unit)).rounded()
        // Beyond Int's range (or NaN) no measurement can reach the limit anyway: saturate.
        guard value.isFinite, value < Double(Int.max) else { return MemorySize(bytes: value.isNaN ? 0 : Int.max) }
        return MemorySize(bytes: Int(value))
    }

    /// The amount as a person writes it: `64 MiB`, `1.5 MiB`, `512 KiB`, `100 B`.
    ///
    /// Whole multiples of a unit print without decimals, others with up to two (trailing zeros dropped).
    public var description: String {
        let units: [(name: String, bytes: Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        guard let unit = units.first(where: { bytes >= $0.bytes }) else { return "\(bytes) B" }
        if bytes % unit.bytes == 0 { return "\(bytes / unit.bytes) \(unit.name)" }
        var text = Units.fixed(Double(bytes) / Double(unit.bytes), decimals: 2)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return "\(text) \(unit.name)"
    }

    /// True when `lhs` is the smaller amount.
    public static func < (lhs: MemorySize, rhs: MemorySize) -> Bool { lhs.bytes < rhs.bytes }
}

/// What a request costs in jemalloc (`AllocatorCost.bytes(forRequest:)`, `arrayBytes(of:count:)`), named here so a
/// test target that imports MemHarnessTesting alone computes its truths with the harness's own size classes.
public typealias AllocatorCost = WorkloadKit.AllocatorCost
