import HarnessModel

/// The JSON files memharness reads (`run.json`, baselines), checked before they are decoded: strict
/// RFC 8259 syntax, at most `maximumDepth` levels of nesting, no key twice in an object, every number
/// finite. Foundation's decoder on Linux says only "not valid JSON" and silently keeps one of two
/// duplicate keys; this says where, and `place(of:in:)` turns a decoding error's coding path into a line.
public enum JSONText {
    /// Objects and arrays nested in one another; memharness writes at most about 12.
    public static let maximumDepth = 64

    /// A problem at a place of the text: line and column from 1 (columns in characters).
    public struct Problem: Error, Sendable, Hashable {
        public var line: Int
        public var column: Int
        public var message: String
    }

    /// `text` as a JSON string literal, quotes included (RFC 8259): `"` and `\` escaped, the control
    /// characters below U+0020 written as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`; everything else as is
    /// (the text is written as UTF-8). The one way memharness writes JSON text by hand.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Checks `bytes` (UTF-8); throws the first problem with its place. With `numberMagnitudeLimit`,
    /// a number beyond ± that is a problem too.
    public static func check(_ bytes: [UInt8], numberMagnitudeLimit: Double? = nil) throws(Problem) {
        guard !bytes.isEmpty else {
            throw Problem(line: 1, column: 1, message: "the file is empty; expected a JSON object")
        }
        let result: Problem? = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var scanner = Scanner(base, count: buffer.count)
            scanner.numberMagnitudeLimit = numberMagnitudeLimit
            do throws(Problem) {
                try scanner.skipWhitespace()
                guard scanner.index < buffer.count else {
                    throw scanner.problem("the file is empty; expected a JSON object")
                }
                try scanner.value(depth: 1)
                try scanner.skipWhitespace()
                if scanner.index < buffer.count {
                    throw scanner.problem("unexpected \(scanner.describeCurrent()) after the end of the JSON value")
                }
                return nil
            } catch {
                return error
            }
        }
        if let result { throw result }
    }

    /// The line and column where the value at `path` starts (a decoding error's coding path: keys and
    /// array indices), or of the deepest part of it that exists; with `atKey`, where the key of the last
    /// part is written instead (for a problem with a name). Nil when `bytes` is not valid JSON.
    public static func place(of path: [any CodingKey], in bytes: [UInt8], atKey: Bool = false)
        -> (line: Int, column: Int)?
    {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var scanner = Scanner(base, count: buffer.count)
            do {
                try scanner.skipWhitespace()
                return try scanner.locate(path[...], atKey: atKey)
            } catch {
                return nil
            }
        }
    }

    /// A reader over the bytes, valid for the call that made it.
    private struct Scanner {
        /// The bytes, by pointer: a debug build checks and calls through every access of an array or a
        /// buffer, and this runs over every byte of a record.
        let base: UnsafePointer<UInt8>
        let count: Int
        var index = 0
        var line = 1
        /// Index of the first byte of the current line, for columns.
        var lineStart = 0
        var numberMagnitudeLimit: Double?

        init(_ base: UnsafePointer<UInt8>, count: Int) {
            self.base = base
            self.count = count
        }

        var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

        var current: UInt8? { index < count ? base[index] : nil }

        /// The column of `index`, counting characters (UTF-8 continuation bytes do not start one).
        var column: Int { column(of: index) }

        /// The column of `position`, on the current line. Computed only for a problem: a file of one long
        /// line must not cost a scan of the line per token.
        func column(of position: Int) -> Int {
            var characters = 1
            var scan = lineStart
            while scan < position && scan < count {
                if base[scan] & 0xC0 != 0x80 { characters += 1 }
                scan += 1
            }
            return characters
        }

        func problem(_ message: String) -> Problem { Problem(line: line, column: column, message: message) }

        /// A problem at `position`, a byte of the current line.
        func problem(at position: Int, _ message: String) -> Problem {
            Problem(line: line, column: column(of: position), message: message)
        }

        func describeCurrent() -> String {
            guard let byte = current else { return "end of file" }
            if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            return "byte 0x\(String(byte, radix: 16))"
        }

        mutating func advance() {
            if base[index] == 0x0A {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }

        mutating func skipWhitespace() throws(Problem) {
            // The hottest loop: a pretty-printed record is mostly indentation.
            while index < count {
                let byte = base[index]
                if byte == 0x20 || byte == 0x09 || byte == 0x0D {
                    index += 1
                } else if byte == 0x0A {
                    index += 1
                    line += 1
                    lineStart = index
                } else {
                    return
                }
            }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(Problem) {
            guard current == byte else { throw problem("expected \(what), found \(describeCurrent())") }
            advance()
        }

        mutating func value(depth: Int) throws(Problem) {
            guard let byte = current else { throw problem("unexpected end of file; expected a value") }
            switch byte {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): try skipString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default:
                throw problem(
                    "unexpected \(describeCurrent()); expected a value (object, array, string, number, true, false, "
                        + "null)"
                )
            }
        }

        mutating func nest(_ depth: Int) throws(Problem) {
            guard depth <= JSONText.maximumDepth else {
                throw problem("nested deeper than \(JSONText.maximumDepth) levels; not a file memharness writes")
            }
        }

        mutating func object(depth: Int) throws(Problem) {
            try nest(depth)
            advance()
            try skipWhitespace()
            if current == UInt8(ascii: "}") {
                advance()
                return
            }
            var keys: [String: Int] = [:]
            while true {
                guard current == UInt8(ascii: "\"") else {
                    throw problem("expected a key in double quotes, found \(describeCurrent())")
                }
                // A string holds no raw line break, so the key ends on the line it starts on.
                let keyStart = index
                let key = try string()
                if let first = keys[key] {
                    throw problem(
                        at: keyStart,
                        "duplicate key '\(Excerpt.of(key))' (first at line \(first)); a key may appear once in an "
                            + "object"
                    )
                }
                keys[key] = line
                try skipWhitespace()
                try expect(UInt8(ascii: ":"), "':' after the key")
                try skipWhitespace()
                try value(depth: depth + 1)
                try skipWhitespace()
                if current == UInt8(ascii: ",") {
                    advance()
                    try skipWhitespace()
                    continue
                }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                return
            }
        }

        mutating func array(depth: Int) throws(Problem) {
            try nest(depth)
            advance()
            try skipWhitespace()
            if current == UInt8(ascii: "]") {
                advance()
                return
            }
            while true {
                try value(depth: depth + 1)
                try skipWhitespace()
                if current == UInt8(ascii: ",") {
                    advance()
                    try skipWhitespace()
                    continue
                }
                try expect(UInt8(ascii: "]"), "',' or ']'")
                return
            }
        }

        /// Skips a string (the opening quote is current): the common case, a value nobody needs decoded.
        mutating func skipString() throws(Problem) {
            index += 1
            while index < count {
                let byte = base[index]
                if byte == 0x22 {
                    index += 1
                    return
                }
                if byte == 0x5C || byte < 0x20 { break }
                index += 1
            }
            // An escape, a control character or the end of the file: the careful reader says which.
            var scalars = String.UnicodeScalarView()
            try continueString(into: &scalars)
        }

        /// Reads a string (the opening quote is current) and returns it, escapes decoded.
        mutating func string() throws(Problem) -> String {
            advance()
            // The common case (every key memharness writes): no escape, so the string is its bytes, copied once.
            var end = index
            while end < count, base[end] != 0x22, base[end] != 0x5C, base[end] >= 0x20 { end += 1 }
            if end < count, base[end] == 0x22 {
                defer { index = end + 1 }
                return String(decoding: UnsafeBufferPointer(start: base + index, count: end - index), as: UTF8.self)
            }
            var scalars = String.UnicodeScalarView()
            try continueString(into: &scalars)
            return String(scalars)
        }

        /// Reads the rest of a string from `index` to its closing quote into `scalars`.
        mutating func continueString(into scalars: inout String.UnicodeScalarView) throws(Problem) {
            var run = index
            func flush() {
                scalars.append(contentsOf: String(decoding: bytes[run..<index], as: UTF8.self).unicodeScalars)
            }
            while true {
                guard let byte = current else { throw problem("unterminated string: the file ends inside it") }
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    advance()
                    return
                case UInt8(ascii: "\\"):
                    flush()
                    advance()
                    try escape(into: &scalars)
                    run = index
                case 0x00..<0x20:
                    throw problem("a control character (byte 0x\(String(byte, radix: 16))) inside a string; escape it")
                default:
                    advance()
                }
            }
        }

        mutating func escape(into scalars: inout String.UnicodeScalarView) throws(Problem) {
            guard let byte = current else { throw problem("unterminated string: the file ends inside it") }
            let simple: [UInt8: Unicode.Scalar] = [
                UInt8(ascii: "\""): "\"", UInt8(ascii: "\\"): "\\", UInt8(ascii: "/"): "/", UInt8(ascii: "b"): "\u{08}",
                UInt8(ascii: "f"): "\u{0C}", UInt8(ascii: "n"): "\n", UInt8(ascii: "r"): "\r", UInt8(ascii: "t"): "\t",
            ]
            if let scalar = simple[byte] {
                scalars.append(scalar)
                advance()
                return
            }
            guard byte == UInt8(ascii: "u") else {
                throw problem("unknown escape '\\\(describeCurrent())' in a string")
            }
            advance()
            var unit = try hex4()
            if (0xD800..<0xDC00).contains(unit), current == UInt8(ascii: "\\"),
                index + 1 < count, base[index + 1] == UInt8(ascii: "u")
            {
                advance()
                advance()
                let low = try hex4()
                if (0xDC00..<0xE000).contains(low) {
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                }
            }
            // A lone surrogate reads as U+FFFD, as Foundation's decoder does.
            scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
        }

        mutating func hex4() throws(Problem) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = current, let digit = Character(Unicode.Scalar(byte)).hexDigitValue else {
                    throw problem("'\\u' needs four hexadecimal digits")
                }
                value = value * 16 + UInt32(digit)
                advance()
            }
            return value
        }

        mutating func number() throws(Problem) {
            let start = index
            func digits() -> Int {
                var digits = 0
                while index < count, base[index] >= 0x30, base[index] <= 0x39 {
                    index += 1
                    digits += 1
                }
                return digits
            }
            if current == UInt8(ascii: "-") { index += 1 }
            let leadingZero = current == UInt8(ascii: "0")
            let whole = digits()
            guard whole > 0 else { throw problem("expected a digit in a number, found \(describeCurrent())") }
            if leadingZero && whole > 1 {
                throw problem(at: start, "a number may not start with 0, as in '\(Excerpt.of(text(start)))'")
            }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw problem("expected a digit after the decimal point") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw problem("expected a digit in the exponent") }
            }
            guard let value = Double(text(start)), value.isFinite else {
                throw problem(
                    at: start, "the number \(Excerpt.of(text(start))) is out of range (beyond a 64-bit float)")
            }
            if let limit = numberMagnitudeLimit, abs(value) > limit {
                throw problem(
                    at: start,
                    "the number \(Excerpt.of(text(start))) is beyond ±\(Units.fixed(limit, decimals: 0)); "
                        + "no figure memharness writes comes near it")
            }
        }

        func text(_ start: Int) -> String { String(decoding: bytes[start..<index], as: UTF8.self) }

        mutating func literal(_ word: String) throws(Problem) {
            for expected in word.utf8 {
                guard current == expected else {
                    throw problem(
                        "unexpected \(describeCurrent()); expected a value (object, array, string, number, true, "
                            + "false, null)"
                    )
                }
                advance()
            }
        }

        /// Finds the start of the value at `path` from the value that starts at `index`.
        mutating func locate(_ path: ArraySlice<any CodingKey>, atKey: Bool) throws(Problem) -> (line: Int, column: Int)
        {
            let here = (line: line, column: column)
            guard let key = path.first else { return here }
            if current == UInt8(ascii: "{") {
                advance()
                try skipWhitespace()
                while current == UInt8(ascii: "\"") {
                    let keyPlace = (line: line, column: column)
                    let name = try string()
                    try skipWhitespace()
                    try expect(UInt8(ascii: ":"), "':'")
                    try skipWhitespace()
                    if name == key.stringValue {
                        if path.count == 1 { return atKey ? keyPlace : (line, column) }
                        // A missing key further down is reported at the object that lacks it.
                        return (try? locate(path.dropFirst(), atKey: atKey)) ?? keyPlace
                    }
                    try value(depth: 1)
                    try skipWhitespace()
                    if current == UInt8(ascii: ",") {
                        advance()
                        try skipWhitespace()
                    }
                }
                return here
            }
            if current == UInt8(ascii: "["), let wanted = key.intValue {
                advance()
                try skipWhitespace()
                var position = 0
                while current != UInt8(ascii: "]") && current != nil {
                    if position == wanted { return try locate(path.dropFirst(), atKey: atKey) }
                    try value(depth: 1)
                    try skipWhitespace()
                    if current == UInt8(ascii: ",") {
                        advance()
                        try skipWhitespace()
                    }
                    position += 1
                }
            }
            return here
        }
    }
}
