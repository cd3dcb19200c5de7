extension Excerpt {
    /// The lines of `message` fit for a terminal or a CI log: at most `maximumLines` lines (the last of them
    /// saying how many more there were) of at most `maximumCharacters` characters each (a cut line ends in `…`).
    /// Messages are short at their source; this is the backstop for a value nobody shortened.
    public static func lines(of message: String, maximumLines: Int = 10, maximumCharacters: Int = 600) -> [String] {
        var lines = message.split(separator: "\n").map { line -> String in
            line.count > maximumCharacters ? line.prefix(maximumCharacters) + "…" : String(line)
        }
        let limit = max(1, maximumLines)  // one line at least: the one that says how many were left out
        if lines.count > limit {
            let hidden = lines.count - (limit - 1)
            lines = lines.prefix(limit - 1) + ["... \(hidden) more lines"]
        }
        return lines
    }
}
