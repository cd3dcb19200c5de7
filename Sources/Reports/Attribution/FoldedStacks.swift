import HarnessModel

/// The live set at the peak as folded stacks: `root;caller;...;leaf BYTES`, one line per stack,
/// the text flamegraph.pl, inferno and speedscope read.
public enum FoldedStacks {
    /// One line per distinct stack with live bytes at the peak (above the baseline), frames by
    /// function name root first, lines sorted; stacks that differ only in line numbers are one line.
    public static func render(_ profile: AllocationProfile) -> String {
        var bytes: [String: Int] = [:]
        for stack in profile.stacks where stack.peakLiveBytes > 0 {
            let path = profile.frames(of: stack).map { frameName($0.function) }.joined(separator: ";")
            bytes[path.isEmpty ? "[no frames]" : path, default: 0] += stack.peakLiveBytes
        }
        return bytes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)\n" }.joined()
    }

    /// A name that cannot break the format: `;` separates frames and a line ends the stack.
    static func frameName(_ function: String) -> String {
        String(
            function.map { character -> Character in
                switch character {
                case ";": return ":"
                case "\n", "\r\n", "\r": return " "
                default: return character
                }
            })
    }
}
