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
    /// Moves are not guaranteed minimal (that needs a longest increasing subsequence, n log n).
    /// Two linear passes, one from each end, keep an increasing run of matched items in place (see
    /// `keptRun`), and the pass that moves fewer items wins. That is exact for any single moved item,
    /// and for scattered moved items and short moved blocks in either direction.
    ///
    /// The lists are any zero-based random-access collections of identities, so a caller can pass
    /// `items.lazy.map(\.id)` without building arrays of identities first.
    public static func between<Old: RandomAccessCollection, New: RandomAccessCollection>(
        old: Old, new: New, isUpdated: (_ oldIndex: Int, _ newIndex: Int) -> Bool
    ) -> ChangeSet where Old.Element: Hashable, New.Element == Old.Element, Old.Index == Int, New.Index == Int {
        precondition(old.startIndex == 0 && new.startIndex == 0, "ChangeSet.between takes zero-based lists")
        var oldIndexByID = [Old.Element: Int](minimumCapacity: old.count)
        for index in old.indices where oldIndexByID[old[index]] == nil {
            oldIndexByID[old[index]] = index
        }
        var matched = [Bool](repeating: false, count: old.count)
        // Old index of each matched item, in new-list order, and the new index beside it.
        var pairedOld: [Int] = []
        var pairedNew: [Int] = []
        pairedOld.reserveCapacity(min(old.count, new.count))
        pairedNew.reserveCapacity(min(old.count, new.count))
        var changes = ChangeSet()
        for newIndex in new.indices {
            if let oldIndex = oldIndexByID[new[newIndex]], !matched[oldIndex] {
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

        // Matched items stay in place when their old indexes increase along the new list; the rest move.
        let forward = keptRun(pairedOld)
        let backward = keptRun(pairedOld.reversed().map { -$0 })
        let moved: (Int) -> Bool =
            forward.moves <= backward.moves
            ? { forward.moved[$0] }
            : { backward.moved[pairedOld.count - 1 - $0] }
        changes.moves.reserveCapacity(min(forward.moves, backward.moves))
        for position in pairedOld.indices where moved(position) {
            changes.moves.append(Move(from: pairedOld[position], to: pairedNew[position]))
        }
        for position in pairedOld.indices where isUpdated(pairedOld[position], pairedNew[position]) {
            changes.updates.append(pairedNew[position])
        }
        return changes
    }

    /// The most kept items one out-of-order value may take back (a block that jumped ahead).
    static let blockLimit = 16

    /// Chooses items of `values` (distinct) to move so that the others increase, in one pass.
    ///
    /// Kept items form a stack. A value below the top either moved itself, or the last few kept
    /// items did (they jumped ahead of it). When the next value continues above the top, the value
    /// is a lone dip and moves. Otherwise the kept items above the value move instead when there
    /// is one, or when there are at most `blockLimit` and the next value continues between the
    /// value and them; else the value moves. Each value is pushed and popped at most once and
    /// looked past at most `blockLimit` times: linear time.
    static func keptRun(_ values: [Int]) -> (moved: [Bool], moves: Int) {
        var moved = [Bool](repeating: false, count: values.count)
        var moves = 0
        var kept: [Int] = []
        kept.reserveCapacity(values.count)
        for position in values.indices {
            let value = values[position]
            guard let top = kept.last, values[top] > value else {
                kept.append(position)
                continue
            }
            let next = position + 1 < values.count ? values[position + 1] : nil
            if let next, next > values[top] {
                moved[position] = true
                moves += 1
                continue
            }
            // How many kept items, from the top, exceed the value.
            var above = 1
            while above <= blockLimit, above < kept.count, values[kept[kept.count - 1 - above]] > value {
                above += 1
            }
            // One kept item is no dearer to move than the value; several only when the run continues below them.
            let runContinues = next.map { value < $0 && $0 < values[top] } ?? false
            if above == 1 || (above <= blockLimit && runContinues) {
                for _ in 0..<above { moved[kept.removeLast()] = true }
                moves += above
                kept.append(position)
            } else {
                moved[position] = true
                moves += 1
            }
        }
        return (moved, moves)
    }
}
