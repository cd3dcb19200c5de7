extension CheckOutputs {
    /// `text` in lines of at most `width` characters: each line of it broken at the last space that fits (that
    /// space dropped), a word longer than a line cut where the line ends; every line after the first starts
    /// with `indent` spaces. A width that leaves no room after the indent gives the text's lines unbroken.
    static func wrapped(_ text: String, to width: Int, indent: Int) -> [String] {
        let continuation = String(repeating: " ", count: max(0, indent))
        guard width > continuation.count else { return text.split(separator: "\n").map(String.init) }
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var rest = Substring(paragraph)
            var prefix = lines.isEmpty ? "" : continuation
            while prefix.count + rest.count > width {
                let room = width - prefix.count
                // One character past the room: a space there is a break that fills the line exactly.
                let window = rest.prefix(room + 1)
                if let space = window.lastIndex(of: " "), space > rest.startIndex {
                    lines.append(prefix + rest[..<space])
                    rest = rest[rest.index(after: space)...]
                } else {
                    let cut = rest.index(rest.startIndex, offsetBy: room)
                    lines.append(prefix + rest[..<cut])
                    rest = rest[cut...]
                }
                prefix = continuation
            }
            lines.append(prefix + rest)
        }
        return lines
    }
}
