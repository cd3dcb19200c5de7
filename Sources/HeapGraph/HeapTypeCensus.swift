import HarnessModel

/// Live count and bytes of every type in one capture: complete (unbounded), for generations.
public struct HeapTypeCensus: Sendable, Hashable {
    /// The capture's label.
    public var label: String
    /// Every type, bytes most first, then by type.
    public var tallies: [HeapTypeTally]

    public init(label: String, tallies: [HeapTypeTally]) {
        self.label = label
        self.tallies = tallies.sorted(by: Self.precedes)
    }

    /// Counts every block of `snapshot` by type.
    public init(_ snapshot: HeapSnapshot) {
        label = snapshot.label
        tallies = TypeCounter(snapshot, blocks: 0..<snapshot.blockCount).tallies(snapshot)
    }

    /// Bytes most first, then by type (name, kind, size): the order of every type table.
    static func precedes(_ lhs: HeapTypeTally, _ rhs: HeapTypeTally) -> Bool {
        lhs.bytes != rhs.bytes ? lhs.bytes > rhs.bytes : lhs.type < rhs.type
    }
}

/// Counts blocks by (type name index, kind, size and allocation stack when unnamed) without building a string per block.
///
/// Many blocks (a whole heap, a giant group): named blocks in flat columns indexed by name and kind, no
/// hashing per block; few: in a dictionary, so no columns as long as the names table are allocated for them.
struct TypeCounter {
    private struct Unnamed: Hashable {
        var kind: HeapBlockKind
        var bytes: UInt64
        var stack: UInt32
    }

    private static let kindCount = HeapBlockKind.allCases.count
    private var denseCounts: [Int] = []
    private var denseBytes: [Int] = []
    private var named: [Int: (count: Int, bytes: Int)] = [:]
    private var unnamed: [Unnamed: (count: Int, bytes: Int)] = [:]

    init(_ snapshot: HeapSnapshot, blocks: some Collection<Int>) {
        let isUnnamed = snapshot.names.map(\.isEmpty)
        let dense = blocks.count >= snapshot.names.count * Self.kindCount / 4
        if dense {
            denseCounts = Array(repeating: 0, count: snapshot.names.count * Self.kindCount)
            denseBytes = denseCounts
        }
        for block in blocks {
            let name = Int(snapshot.typeNames[block])
            let size = snapshot.sizes[block]
            let kind = snapshot.kinds[block]
            let slot = name * Self.kindCount + Int(kind.rawValue)
            if isUnnamed[name] {
                let key = Unnamed(kind: kind, bytes: size, stack: snapshot.stackIndices[block])
                unnamed[key, default: (0, 0)].count += 1
                unnamed[key, default: (0, 0)].bytes += Int(size)
            } else if dense {
                denseCounts[slot] += 1
                denseBytes[slot] += Int(size)
            } else {
                named[slot, default: (0, 0)].count += 1
                named[slot, default: (0, 0)].bytes += Int(size)
            }
        }
        for slot in denseCounts.indices where denseCounts[slot] > 0 {
            named[slot] = (denseCounts[slot], denseBytes[slot])
        }
    }

    /// The tallies in table order (bytes most first). Unnamed blocks of one size whose stacks start at one site are
    /// one tally.
    func tallies(_ snapshot: HeapSnapshot) -> [HeapTypeTally] {
        var bySite: [HeapTypeName: (count: Int, bytes: Int)] = [:]
        for (key, value) in unnamed {
            let site = key.stack == HeapSnapshot.none ? nil : snapshot.stacks[Int(key.stack)].first
            let type = HeapTypeName(name: "", kind: key.kind, unnamedBlockBytes: Int(key.bytes), allocationSite: site)
            bySite[type, default: (0, 0)].count += value.count
            bySite[type, default: (0, 0)].bytes += value.bytes
        }
        let unnamedTallies = bySite.map { HeapTypeTally(type: $0.key, count: $0.value.count, bytes: $0.value.bytes) }
        let namedTallies = named.map { slot, value in
            let kind = HeapBlockKind(rawValue: UInt8(slot % Self.kindCount)) ?? .unknown
            return HeapTypeTally(
                type: HeapTypeName(name: snapshot.names[slot / Self.kindCount], kind: kind), count: value.count,
                bytes: value.bytes)
        }
        return (unnamedTallies + namedTallies).sorted(by: HeapTypeCensus.precedes)
    }
}

extension HeapAnalysis {
    /// The generations: each type's count and bytes at each census, and whether it grew in every one.
    ///
    /// Types that never change are left out; suspects first, then by bytes grown from first to last
    /// (most first), then by type. At most `limit` types; the second value counts the rest.
    public static func growth(_ censuses: [HeapTypeCensus], limit: Int = 100) -> ([HeapTypeGrowth], Int) {
        guard censuses.count >= 2 else { return ([], 0) }
        var series: [HeapTypeName: (counts: [Int], bytes: [Int])] = [:]
        for (index, census) in censuses.enumerated() {
            for tally in census.tallies {
                let empty = [Int](repeating: 0, count: censuses.count)
                series[tally.type, default: (empty, empty)].counts[index] = tally.count
                series[tally.type, default: (empty, empty)].bytes[index] = tally.bytes
            }
        }
        let changed = series.compactMap { type, values -> HeapTypeGrowth? in
            guard Set(values.counts).count > 1 || Set(values.bytes).count > 1 else { return nil }
            let countGrows = zip(values.counts.dropFirst(), values.counts).allSatisfy { $0 > $1 }
            let bytesGrow = zip(values.bytes.dropFirst(), values.bytes).allSatisfy { $0 > $1 }
            // Two differences at least: one step up is a change, not a trend.
            let suspect = censuses.count >= 3 && (countGrows || bytesGrow)
            return HeapTypeGrowth(type: type, counts: values.counts, bytes: values.bytes, isSuspect: suspect)
        }
        let sorted = changed.sorted { lhs, rhs in
            if lhs.isSuspect != rhs.isSuspect { return lhs.isSuspect }
            let left = (lhs.bytes.last ?? 0) - (lhs.bytes.first ?? 0)
            let right = (rhs.bytes.last ?? 0) - (rhs.bytes.first ?? 0)
            if left != right { return left > right }
            return lhs.type < rhs.type
        }
        return (Array(sorted.prefix(limit)), max(sorted.count - limit, 0))
    }
}
