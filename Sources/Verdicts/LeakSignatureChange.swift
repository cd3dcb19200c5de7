import HarnessModel

/// The leak signatures of one strategy in two runs: those the later run has and the earlier had not (new leaks), and
/// those the earlier had and the later has not (gone). A signature is the same leak in both runs whatever its count
/// (`LeakSignature`: types, fields around the cycle and allocation sites, stable across runs and machines), so this
/// is a set difference, not a comparison of figures within noise: a count that moved is a figure (`leaked_blocks`) and
/// the one comparison (`RunToRun.compare`) judges those.
public struct LeakSignatureChange: Sendable, Hashable {
    /// In the later run only, bytes most first.
    public var new: [LeakSignatureTally]
    /// In the earlier run only, bytes most first.
    public var gone: [LeakSignatureTally]
    /// Signatures both runs have.
    public var kept: Int
    /// False when a run's capture left groups out by its bound (it lists its largest signatures): a signature
    /// counted new or gone may then be one the other run left out.
    public var isComplete: Bool

    /// The change from `before` to `after`; `isComplete`: neither run left a group out.
    public init(before: [LeakSignatureTally], after: [LeakSignatureTally], isComplete: Bool = true) {
        self.isComplete = isComplete
        let old = Set(before.map(\.signature))
        let now = Set(after.map(\.signature))
        new = Self.sorted(after.filter { !old.contains($0.signature) })
        gone = Self.sorted(before.filter { !now.contains($0.signature) })
        kept = now.intersection(old).count
    }

    /// Neither a new nor a gone signature.
    public var isEmpty: Bool { new.isEmpty && gone.isEmpty }

    private static func sorted(_ tallies: [LeakSignatureTally]) -> [LeakSignatureTally] {
        tallies.sorted { ($1.bytes, $0.signature) < ($0.bytes, $1.signature) }
    }
}

extension LeakSignatureChange {
    /// The change between two captures' leak groups (each strategy's last capture, after teardown).
    public init(before: HeapCaptureSummary, after: HeapCaptureSummary) {
        self.init(
            before: before.leakSignatures, after: after.leakSignatures,
            isComplete: before.omittedGroups == 0 && after.omittedGroups == 0)
    }
}
