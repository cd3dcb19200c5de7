/// A known leak left out of leak verdicts: a library's, reported upstream, that the program cannot fix. Written in a
/// suppressions file (`--suppressions FILE`, a scenario's `suppressions:` key), each with the reason it is known.
public struct LeakSuppression: Sendable, Hashable, Codable {
    /// What a suppression matches.
    public enum Match: Sendable, Hashable, Codable {
        /// The leak groups of this signature (`HeapLeakGroup.signature`).
        case signature(String)
        /// The leak groups whose root is of this type, or whose root cycle goes through it: the name as the heap
        /// graph spells it, with or without its module (`Assign<…>` is matched by `OpenCombine.Assign<…>`).
        case type(String)
    }

    public var match: Match
    /// Why the leak is known and left out (a link to the library's issue, say).
    public var reason: String

    public init(_ match: Match, reason: String) {
        self.match = match
        self.reason = reason
    }

    /// True when `group` is this suppression's leak.
    public func matches(_ group: HeapLeakGroup) -> Bool {
        switch match {
        case .signature(let signature):
            return group.signature == signature
        case .type(let name):
            let types = [group.rootType] + (group.cycle?.edges.map(\.from) ?? [])
            return types.contains { $0.name == name || $0.name.hasSuffix("." + name) }
        }
    }
}

/// What suppressions left out of one capture's leaks: groups, blocks, bytes and the cycles among them.
public struct SuppressedLeaks: Sendable, Hashable, Codable {
    /// Leak groups matched by a suppression.
    public var groups: Int
    /// What no root reaches in them.
    public var unreachable: UnreachableBlocks

    public init(groups: Int, unreachable: UnreachableBlocks) {
        self.groups = groups
        self.unreachable = unreachable
    }

    public static let none = SuppressedLeaks(groups: 0, unreachable: .none)

    /// The groups of `capture` that `suppressions` match (only the groups the capture lists: the largest signatures).
    /// A group's cycles are its root cycle and the cycles it holds, the same in every group of its signature.
    public init(_ capture: HeapCaptureSummary, suppressions: [LeakSuppression]) {
        var (groups, blocks, bytes, cycles) = (0, 0, 0, 0)
        for group in capture.groups where suppressions.contains(where: { $0.matches(group) }) {
            groups += group.count
            blocks += group.blocks
            bytes += group.bytes
            let perGroup = (group.cycle == nil ? 0 : 1) + group.nestedCycles.count + group.omittedNestedCycles
            cycles += group.count * perGroup
        }
        self.init(groups: groups, unreachable: UnreachableBlocks(blocks: blocks, bytes: bytes, cycles: cycles))
    }
}

extension Sequence<CaseResult> {
    /// The known leaks `strategy`'s cases were run with (every case of a strategy states the same); none when no case
    /// states any.
    public func suppressions(of strategy: String) -> [LeakSuppression] {
        first { $0.strategy == strategy && $0.suppressions != nil }?.suppressions ?? []
    }
}
