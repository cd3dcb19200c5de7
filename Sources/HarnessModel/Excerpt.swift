/// Text from an input file or a command line, made fit to quote in a one-line message.
public enum Excerpt {
    /// The longest excerpt quoted in a message, in characters: enough to recognise a value, short
    /// enough that a 2 MB value cannot flood a terminal.
    public static let maximumCharacters = 40

    /// `text` shortened to `maximumCharacters` (ending in `…` and its length when cut) with line
    /// breaks, tabs and other control characters spelled as escapes, so a message stays one line.
    public static func of(_ text: some StringProtocol, maximumCharacters: Int = Excerpt.maximumCharacters) -> String {
        var result = ""
        var count = 0
        for character in text {
            if count == maximumCharacters {
                return result + "… (\(text.count) characters)"
            }
            result += escaped(character)
            count += 1
        }
        return result
    }

    private static func escaped(_ character: Character) -> String {
        switch character {
        case "\n": return "\\n"
        case "\r\n": return "\\r\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            if let ascii = character.asciiValue, ascii >= 0x20, ascii != 0x7F { return String(character) }
            guard character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                return String(character)
            }
            return character.unicodeScalars.map { "\\u{\(String($0.value, radix: 16))}" }.joined()
        }
    }
}
