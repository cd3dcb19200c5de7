import HarnessModel

/// The live set at the peak as folded stacks: `root;caller;...;leaf BYTES`, one line per stack,
/// the text flamegraph.pl, inferno and speedscope read.
public enum FoldedStacks {
    /// One line per call path of `AllocationProfile.foldedStacks`, lines sorted.
    public static func render(_ profile: AllocationProfile) -> String {
        profile.foldedStacks.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)\n" }.joined()
    }
}
