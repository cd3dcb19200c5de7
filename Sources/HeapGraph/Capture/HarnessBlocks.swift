import HarnessModel

/// The blocks of a capture that memharness's own code allocated (their allocation stack says so:
/// `StackFolder.isHarnessAllocation`), set aside while it is read, as the agent sets aside those it allocated in its
/// harness mode: in no group, census, retainer or path of the user's. What they point at is kept by them: each block of
/// the user's they reference is held by a root of its own kind (`rootDescription`).
struct HarnessBlocks {
    /// The stack ids of the capture whose blocks are the harness's.
    var stacks: Set<UInt32> = []
    /// Each capture block's index in the snapshot (`HeapSnapshot.none`: set aside); empty while nothing is.
    private var indices: ContiguousArray<UInt32> = []
    /// The snapshot's blocks a set-aside block references.
    private(set) var heldBlocks: Set<UInt32> = []

    /// What a root made of a harness block's word is.
    static let rootDescription =
        "memory memharness allocated for itself (its bookkeeping, naming and analysing captures)"

    /// Called for each capture block in order, with the snapshot index it gets if kept: false when it is set aside.
    mutating func keep(stackID: UInt32, as index: Int) -> Bool {
        guard !stacks.isEmpty else { return true }
        let aside = stackID != 0 && stacks.contains(stackID)
        indices.append(aside ? HeapSnapshot.none : UInt32(truncatingIfNeeded: index))
        return !aside
    }

    /// The snapshot index of capture block `block`, nil when it is set aside.
    func block(_ block: Int) -> UInt32? {
        guard !indices.isEmpty else { return UInt32(truncatingIfNeeded: block) }
        let index = indices[block]
        return index == HeapSnapshot.none ? nil : index
    }

    /// An edge between capture blocks, in snapshot indices; nil when either end is set aside (a set-aside block's
    /// reference to a kept one makes that block held, see `heldBlocks`).
    mutating func edge(from: UInt32, to: UInt32) -> (UInt32, UInt32)? {
        guard !indices.isEmpty else { return (from, to) }
        let (source, target) = (indices[Int(from)], indices[Int(to)])
        guard target != HeapSnapshot.none else { return nil }
        guard source != HeapSnapshot.none else {
            heldBlocks.insert(target)
            return nil
        }
        return (source, target)
    }
}
