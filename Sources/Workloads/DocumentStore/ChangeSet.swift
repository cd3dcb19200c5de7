/// An item that changed position: from an index of the old list to an index of the new list.
public struct Move: Sendable, Hashable, CustomStringConvertible {
    /// Index in the old list.
    public var from: Int
    /// Index in the new list.
    public var to: Int

    public init(from: Int, to: Int) {
        self.from = from
        self.to = to
    }

    public var description: String { "(\(from), \(to))" }
}

/// The changes between two ordered lists of identified items.
///
/// Index conventions of the modelled SDK: `insertions` and `updates` index the new list,
/// `deletions` the old list, `moves` are (old, new) pairs. An item present in both lists may
/// be both moved and updated.
public struct ChangeSet: Sendable, Hashable {
    /// Indexes (new list) of items that were not in the old list, ascending.
    public var insertions: [Int]
    /// Indexes (old list) of items that are not in the new list, ascending.
    public var deletions: [Int]
    /// Indexes (new list) of items in both lists that changed, ascending.
    public var updates: [Int]
    /// Items in both lists whose order relative to the other kept items changed, by ascending `to`.
    public var moves: [Move]

    public init(insertions: [Int] = [], deletions: [Int] = [], updates: [Int] = [], moves: [Move] = []) {
        self.insertions = insertions
        self.deletions = deletions
        self.updates = updates
        self.moves = moves
    }

    /// True when nothing changed.
    public var isEmpty: Bool { insertions.isEmpty && deletions.isEmpty && updates.isEmpty && moves.isEmpty }

    /// The changes that turn `old` into `new`, in time and memory linear in the lists' lengths.
    ///
    /// Items are matched by identity; an identity repeated within a list matches at most once (its
    /// first occurrence), extra copies count as deleted or inserted. `isUpdated(oldIndex, newIndex)`
    /// decides whether a matched item changed.
    ///
    /// Moves are not guaranteed minimal (that needs a longest increasing subsequence, n log n):
    /// two linear greedy passes, one from each end, each keep an increasing run of matched items in
    /// place, and the pass that moves fewer items wins. That is exact for any single moved item,
    /// in either direction, however many items were inserted or deleted around it.
    public static func between<ID: Hashable>(old: [ID], new: [ID], isUpdated: (_ oldIndex: Int, _ newIndex: Int) -> Bool) -> ChangeSet {
        var oldIndexByID = [ID: Int](minimumCapacity: old.count)
        for (index, id) in old.enumerated() where oldIndexByID[id] == nil {
            oldIndexByID[id] = index
        }
        var matched = [Bool](repeating: false, count: old.count)
        // Old index of each matched item, in new-list order, and the new index beside it.
        var pairedOld: [Int] = []
        var pairedNew: [Int] = []
        pairedOld.reserveCapacity(min(old.count, new.count))
        pairedNew.reserveCapacity(min(old.count, new.count))
        var changes = ChangeSet()
        for (newIndex, id) in new.enumerated() {
            if let oldIndex = oldIndexByID[id], !matched[oldIndex] {
                matched[oldIndex] = true
                pairedOld.append(oldIndex)
                pairedNew.append(newIndex)
            } else {
                changes.insertions.append(newIndex)
            }
        }
        for (oldIndex, wasMatched) in matched.enumerated() where !wasMatched {
            changes.deletions.append(oldIndex)
        }

        // Forward pass: keep an item when it comes after the last kept one in the old list.
        var forwardMoves = 0
        var lastKept = -1
        for oldIndex in pairedOld {
            if oldIndex > lastKept { lastKept = oldIndex } else { forwardMoves += 1 }
        }
        // Backward pass: keep an item when it comes before the last kept one (seen from the end).
        var backwardMoves = 0
        var firstKept = Int.max
        for oldIndex in pairedOld.reversed() {
            if oldIndex < firstKept { firstKept = oldIndex } else { backwardMoves += 1 }
        }
        if min(forwardMoves, backwardMoves) > 0 {
            var moved = [Bool](repeating: false, count: pairedOld.count)
            if forwardMoves <= backwardMoves {
                lastKept = -1
                for (position, oldIndex) in pairedOld.enumerated() {
                    if oldIndex > lastKept { lastKept = oldIndex } else { moved[position] = true }
                }
            } else {
                firstKept = Int.max
                for position in pairedOld.indices.reversed() {
                    if pairedOld[position] < firstKept { firstKept = pairedOld[position] } else { moved[position] = true }
                }
            }
            changes.moves.reserveCapacity(min(forwardMoves, backwardMoves))
            for position in pairedOld.indices where moved[position] {
                changes.moves.append(Move(from: pairedOld[position], to: pairedNew[position]))
            }
        }
        for position in pairedOld.indices where isUpdated(pairedOld[position], pairedNew[position]) {
            changes.updates.append(pairedNew[position])
        }
        return changes
    }
}
