/// Function names short enough to read in a table row or a flame graph box.
///
/// C++ names from the Swift runtime, libstdc++ or a user's C++ come back from the demangler with every
/// template argument and parameter type spelled out (a `DenseMap<...>::grow(unsigned int)` of 2,000
/// characters); Swift names are already simplified. A long name keeps its structure and loses the
/// insides of its angle brackets and parentheses: `swift::ConcurrentReadableHashMap<…>::getOrInsert<…>(…)`.
enum ReadableName {
    /// Names up to this length are kept whole.
    static let longest = 80

    static func shortened(_ name: String) -> String {
        guard name.count > longest else { return name }
        var result = ""
        var depth = 0
        var closers: [Character] = []
        for character in name {
            switch character {
            case "<", "(":
                if depth == 0 { result.append(character) }
                depth += 1
                closers.append(character == "<" ? ">" : ")")
            case ">", ")":
                // An operator such as `operator->` or an unbalanced name: keep the character when outside.
                guard depth > 0, closers.last == character else {
                    if depth == 0 { result.append(character) }
                    continue
                }
                depth -= 1
                closers.removeLast()
                if depth == 0 { result += "…" + String(character) }
            default:
                if depth == 0 { result.append(character) }
            }
        }
        return result
    }
}
