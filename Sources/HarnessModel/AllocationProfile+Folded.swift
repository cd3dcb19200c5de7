extension AllocationProfile {
    /// The live set at the peak folded by call path: `root;caller;...;leaf` → live bytes above the baseline,
    /// frames by function name root first; stacks that differ only in line numbers are one path. A function name's
    /// `;` becomes `:` and its line breaks spaces (they would break the path); a stack of no frames is `[no frames]`.
    public var foldedStacks: [String: Int] {
        var bytes: [String: Int] = [:]
        for stack in stacks where stack.peakLiveBytes > 0 {
            let path = frames(of: stack).map { Self.foldedName($0.function) }.joined(separator: ";")
            bytes[path.isEmpty ? "[no frames]" : path, default: 0] += stack.peakLiveBytes
        }
        return bytes
    }

    /// A function name that cannot break a folded path: `;` separates frames and a line ends the stack.
    static func foldedName(_ function: String) -> String {
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
