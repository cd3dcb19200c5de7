import Synchronization

/// Computes the changes between the items of consecutive query results (the SDK's `Differ`).
///
/// Identity is `_id`. Each `diff(_:)` compares with the items passed to the previous call on the
/// same differ; the first call reports every item as inserted. An update is a change of value:
/// a write that set a field and another that set it back (metadata only) is not an update.
///
/// The differ reads items without materializing them, and keeps only each item's `_id` and a
/// 64-bit digest of its value between calls (24 bytes per item plus the identity's string storage),
/// never the items themselves. Time and memory are linear in the number of items.
public final class Differ: Sendable {
    private struct Fingerprint: Sendable {
        var id: String
        var valueDigest: Int
    }

    private let previous = Mutex<[Fingerprint]?>(nil)

    public init() {}

    /// The changes from the items of the previous call to `items`.
    public func diff(_ items: [QueryResultItem]) -> ChangeSet {
        let current = items.map { Fingerprint(id: $0.stored.id, valueDigest: $0.stored.valueDigest) }
        let old = previous.withLock { previous -> [Fingerprint]? in
            defer { previous = current }
            return previous
        }
        guard let old else { return ChangeSet(insertions: Array(current.indices)) }
        return ChangeSet.between(old: old.lazy.map(\.id), new: current.lazy.map(\.id)) { oldIndex, newIndex in
            old[oldIndex].valueDigest != current[newIndex].valueDigest
        }
    }
}
