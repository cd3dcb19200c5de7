import Dispatch
import DocumentStore
import Measurement
import Synchronization
import Testing
import WorkloadKit

@testable import StoreObserverWorkload

/// Rebuilds the new list from the old one and a change set, the way a list view applies a batch:
/// deletions and move sources leave the old list, insertions and move targets take their new
/// places, and the items left keep their order in the remaining slots. Nil when the changes do not fit.
func apply(_ changes: ChangeSet, to old: [String], new: [String]) -> [String]? {
    let count = old.count - changes.deletions.count + changes.insertions.count
    guard count == new.count else { return nil }
    var slots = [String?](repeating: nil, count: count)
    var leaving = Set(changes.deletions)
    for index in changes.insertions {
        guard slots.indices.contains(index) else { return nil }
        slots[index] = new[index]
    }
    for move in changes.moves {
        guard slots.indices.contains(move.to), slots[move.to] == nil, old.indices.contains(move.from),
            leaving.insert(move.from).inserted
        else { return nil }
        slots[move.to] = old[move.from]
    }
    var staying = old.indices.filter { !leaving.contains($0) }.makeIterator()
    for index in slots.indices where slots[index] == nil {
        guard let next = staying.next() else { return nil }
        slots[index] = old[next]
    }
    guard staying.next() == nil else { return nil }
    let rebuilt = slots.compactMap { $0 }
    return rebuilt.count == count ? rebuilt : nil
}

@Suite struct ChangeSetTests {
    struct Example: Sendable, CustomTestStringConvertible {
        var name: String
        var old: [String]
        var new: [String]
        var updated: Set<String> = []
        var expected: ChangeSet
        var testDescription: String { name }
    }

    static let examples: [Example] = [
        Example(name: "nothing", old: [], new: [], expected: ChangeSet()),
        Example(name: "unchanged", old: ["a", "b", "c"], new: ["a", "b", "c"], expected: ChangeSet()),
        Example(
            name: "insert in the middle", old: ["a", "c"], new: ["a", "b", "c"], expected: ChangeSet(insertions: [1])),
        Example(
            name: "delete in the middle", old: ["a", "b", "c"], new: ["a", "c"], expected: ChangeSet(deletions: [1])),
        Example(
            name: "update", old: ["a", "b", "c"], new: ["a", "b", "c"], updated: ["b"],
            expected: ChangeSet(updates: [1])),
        Example(
            name: "last moved to the front", old: ["a", "b", "c", "d"], new: ["d", "a", "b", "c"],
            expected: ChangeSet(moves: [Move(from: 3, to: 0)])),
        Example(
            name: "first moved to the end", old: ["a", "b", "c", "d"], new: ["b", "c", "d", "a"],
            expected: ChangeSet(moves: [Move(from: 0, to: 3)])),
        Example(
            name: "adjacent swap", old: ["a", "b"], new: ["b", "a"],
            expected: ChangeSet(moves: [Move(from: 1, to: 0)])),
        Example(
            name: "reversal", old: ["a", "b", "c"], new: ["c", "b", "a"],
            expected: ChangeSet(moves: [Move(from: 2, to: 0), Move(from: 1, to: 1)])),
        Example(
            name: "two items moved opposite ways", old: ["a", "b", "c", "d", "e", "f"],
            new: ["f", "b", "c", "d", "e", "a"],
            expected: ChangeSet(moves: [Move(from: 5, to: 0), Move(from: 0, to: 5)])),
        Example(
            name: "a block moved ahead", old: ["a", "b", "c", "d", "e", "f"], new: ["e", "f", "a", "b", "c", "d"],
            expected: ChangeSet(moves: [Move(from: 4, to: 0), Move(from: 5, to: 1)])),
        Example(
            name: "insert, delete, move and update together", old: ["a", "b", "c", "d", "e"],
            new: ["e", "a", "c", "x"],
            updated: ["c"],
            expected: ChangeSet(insertions: [3], deletions: [1, 3], updates: [2], moves: [Move(from: 4, to: 0)])),
        Example(
            name: "moved and updated", old: ["a", "b", "c"], new: ["c", "a", "b"], updated: ["c"],
            expected: ChangeSet(updates: [0], moves: [Move(from: 2, to: 0)])),
        Example(
            name: "repeated identity matches once", old: ["a", "a", "b"], new: ["a", "b", "a"],
            expected: ChangeSet(insertions: [2], deletions: [1])),
        Example(
            name: "everything replaced", old: ["a", "b"], new: ["c", "d", "e"],
            expected: ChangeSet(insertions: [0, 1, 2], deletions: [0, 1])),
    ]

    @Test(arguments: examples)
    func findsTheExpectedChanges(_ example: Example) {
        let changes = ChangeSet.between(old: example.old, new: example.new) { oldIndex, _ in
            example.updated.contains(example.old[oldIndex])
        }
        #expect(changes == example.expected)
        #expect(apply(changes, to: example.old, new: example.new) == example.new)
    }

    @Test func randomListsRoundTripAndEveryIndexMeansWhatItSays() {
        var random = SeededRandom(seed: 2)
        for _ in 0..<500 {
            let universe = (0..<30).map { "id\($0)" }
            let old = Array(universe.shuffled(using: &random).prefix(Int.random(in: 0...20, using: &random)))
            var new = old.filter { _ in Double.random(in: 0..<1, using: &random) > 0.2 }
            for id in universe where !old.contains(id) && Double.random(in: 0..<1, using: &random) < 0.15 {
                new.insert(id, at: Int.random(in: 0...new.count, using: &random))
            }
            for _ in 0..<Int.random(in: 0...3, using: &random) where new.count > 1 {
                let item = new.remove(at: Int.random(in: new.indices, using: &random))
                new.insert(item, at: Int.random(in: 0...new.count, using: &random))
            }
            let updated = Set(old.filter { _ in Double.random(in: 0..<1, using: &random) < 0.3 })
            let changes = ChangeSet.between(old: old, new: new) { oldIndex, _ in updated.contains(old[oldIndex]) }

            #expect(apply(changes, to: old, new: new) == new, "\(old) -> \(new): \(changes)")
            #expect(Set(changes.insertions.map { new[$0] }) == Set(new).subtracting(old))
            #expect(Set(changes.deletions.map { old[$0] }) == Set(old).subtracting(new))
            #expect(Set(changes.updates.map { new[$0] }) == updated.intersection(new))
            #expect(changes.moves.allSatisfy { old[$0.from] == new[$0.to] })
            #expect(changes.insertions == changes.insertions.sorted())
            #expect(changes.deletions == changes.deletions.sorted())
            #expect(changes.updates == changes.updates.sorted())
            #expect(changes.moves.map(\.to) == changes.moves.map(\.to).sorted())
        }
    }

    @Test func aSingleMovedItemIsOneMoveWhateverElseChanged() {
        var random = SeededRandom(seed: 3)
        for _ in 0..<300 {
            let old = (0..<Int.random(in: 2...40, using: &random)).map { "id\($0)" }
            var new = old
            let item = new.remove(at: Int.random(in: new.indices, using: &random))
            let target = Int.random(in: 0...new.count, using: &random)
            new.insert(item, at: target)
            // Insertions and deletions around it do not change the relative order of the rest.
            new.insert("fresh", at: Int.random(in: 0...new.count, using: &random))
            if let deleted = new.indices.filter({ new[$0] != item && new[$0] != "fresh" }).randomElement(using: &random)
            {
                new.remove(at: deleted)
            }
            let changes = ChangeSet.between(old: old, new: new) { _, _ in false }
            let expectedMoves = old.filter { new.contains($0) } == new.filter { old.contains($0) } ? 0 : 1
            #expect(changes.moves.count == expectedMoves, "\(old) -> \(new): \(changes.moves)")
        }
    }

    /// Fewest moves possible: the items outside a longest increasing run of old indexes (n log n, tests only).
    static func minimalMoves(_ oldIndexes: [Int]) -> Int {
        var tails: [Int] = []
        for value in oldIndexes {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if tails[middle] < value { low = middle + 1 } else { high = middle }
            }
            if low == tails.count { tails.append(value) } else { tails[low] = value }
        }
        return oldIndexes.count - tails.count
    }

    @Test(arguments: [0.001, 0.01, 0.05])
    func scatteredMovesAreReportedNearlyAsFewAsPossible(_ share: Double) {
        var random = SeededRandom(seed: 4)
        var reported = 0
        var fewest = 0
        for _ in 0..<40 {
            let old = Array(0..<1000)
            var new = old
            for _ in 0..<max(1, Int(1000 * share)) {
                let item = new.remove(at: Int.random(in: new.indices, using: &random))
                new.insert(item, at: Int.random(in: 0...new.count, using: &random))
            }
            let moves = ChangeSet.between(old: old, new: new) { _, _ in false }.moves.count
            let minimal = Self.minimalMoves(new)
            #expect(moves <= minimal * 3 / 2 + 1, "\(moves) moves where \(minimal) would do")
            reported += moves
            fewest += minimal
        }
        #expect(Double(reported) <= Double(fewest) * 1.05)
    }
}

@Suite(.timeLimit(.minutes(2))) struct DifferTests {
    /// A store observer's results, one per `next()`: the observer waits for the signal, so the
    /// test decides exactly which writes each result reflects.
    final class Results: Sendable {
        let store = DocumentStore()
        let queue = DispatchQueue(label: "differ-tests")
        private let latest = LatestResult()
        private let observer: StoreObserver

        init(_ documents: [Document]) throws {
            let cars = store.collection("cars")
            for document in documents { try cars.insert(document) }
            let latest = latest
            observer = try store.registerObserver(query: "SELECT * FROM cars ORDER BY rank", deliverOn: queue) {
                result, signalNext in
                latest.set(result, signalNext)
            }
            queue.sync {}
        }

        var cars: DocumentCollection { store.collection("cars") }
        var current: QueryResult? { latest.result }

        /// Asks for the result after the writes made since the last one.
        func next() -> QueryResult? {
            latest.signalNext?()
            queue.sync {}
            return latest.result
        }

        func cancel() { observer.cancel() }
    }

    static func car(_ id: String, rank: Int, color: String = "red") -> Document {
        Document(id: id, fields: ["rank": .int(rank), "color": .string(color)], payload: [1, 2, 3])
    }

    @Test func theFirstDiffReportsEveryItemAsInserted() throws {
        let results = try Results([Self.car("a", rank: 1), Self.car("b", rank: 2), Self.car("c", rank: 3)])
        defer { results.cancel() }
        let differ = Differ()
        let first = differ.diff(try #require(results.current).items)
        #expect(first == ChangeSet(insertions: [0, 1, 2]))
        #expect(differ.diff(try #require(results.current).items).isEmpty)
    }

    @Test func aValueChangeIsAnUpdateAndAMetadataOnlyChangeIsNot() throws {
        let results = try Results([Self.car("a", rank: 1), Self.car("b", rank: 2), Self.car("c", rank: 3)])
        defer { results.cancel() }
        let differ = Differ()
        _ = differ.diff(try #require(results.current).items)

        // A field changed and set back, and a field rewritten with its own value: revisions move, values do not.
        try results.cars.update("a") { $0.fields["color"] = .string("blue") }
        try results.cars.update("a") { $0.fields["color"] = .string("red") }
        try results.cars.update("b") { $0.fields["color"] = $0.fields["color"] }
        try results.cars.update("c") { $0.fields["color"] = .string("green") }
        let next = try #require(results.next())
        #expect(next.items.map(\.value.id) == ["a", "b", "c"])
        #expect(differ.diff(next.items) == ChangeSet(updates: [2]))
    }

    @Test func insertionsDeletionsAndMovesIndexTheRightLists() throws {
        let results = try Results([
            Self.car("a", rank: 10), Self.car("b", rank: 20), Self.car("c", rank: 30), Self.car("d", rank: 40),
        ])
        defer { results.cancel() }
        let differ = Differ()
        _ = differ.diff(try #require(results.current).items)

        #expect(results.cars.remove("b"))
        try results.cars.insert(Self.car("e", rank: 25))
        try results.cars.update("d") { $0.fields["rank"] = .int(5) }
        let next = try #require(results.next())
        // Old: a b c d; new: d a e c.
        #expect(next.items.map(\.value.id) == ["d", "a", "e", "c"])
        let changes = differ.diff(next.items)
        #expect(changes.deletions == [1])
        #expect(changes.insertions == [2])
        #expect(changes.moves == [Move(from: 3, to: 0)])
        #expect(changes.updates == [0], "d's rank changed: a value change")
    }

    @Test func diffingDoesNotMaterializeItems() throws {
        let results = try Results((0..<50).map { Self.car("car\($0)", rank: $0) })
        defer { results.cancel() }
        let items = try #require(results.current).items
        items[0].materialize()
        #expect(results.store.materializedItemCount == 1, "the count sees a materialized item")
        let differ = Differ()
        _ = differ.diff(items)
        _ = differ.diff(items)
        #expect(results.store.materializedItemCount == 1)
        #expect(items.dropFirst().allSatisfy { !$0.isMaterialized })
    }
}

/// The latest result an observer delivered, and the signal asking for the next.
final class LatestResult: Sendable {
    private let value = Mutex<(QueryResult?, SignalNext?)>((nil, nil))
    func set(_ result: QueryResult, _ signalNext: @escaping SignalNext) { value.withLock { $0 = (result, signalNext) } }
    var result: QueryResult? { value.withLock { $0.0 } }
    var signalNext: SignalNext? { value.withLock { $0.1 } }
}
