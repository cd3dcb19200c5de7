import Foundation

/// A deterministic random source for fuzz tests (SplitMix64): the same seed gives the same inputs
/// on every machine, so a failure is reproduced by its seed and index alone.
public struct FuzzRandom: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A random element of `choices` (which must not be empty).
    public mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &self)] }

    /// True with probability `chance`.
    public mutating func chance(_ chance: Double) -> Bool { Double.random(in: 0..<1, using: &self) < chance }
}

/// Mutations of a valid input, the kinds a damaged or hostile file shows: flipped and dropped bytes,
/// truncation, numbers replaced by NaN, infinities and values far out of range, keys swapped or
/// repeated, lines duplicated, nesting and aliases inserted.
public enum Mutation {
    /// Numbers a mutation puts in place of a number: each is out of range, non-finite or unusual somewhere.
    public static let hostileNumbers = [
        "nan", "NaN", ".nan", "inf", "-inf", ".inf", "1e400", "-1e400", "1e308", "-1", "-0", "0", "0.0", "4.5",
        "9223372036854775807", "-9223372036854775808", "18446744073709551616", "9007199254740993", "1e16",
        "0x10", "1_000", "+5", ".5", "5.", "99999999999999999999999999999", "1e-400", "\"nan\"", "\"inf\"",
        "\"-inf\"",
    ]

    /// One mutation of `input`, chosen by `random`; `fragments` are extra texts to insert (aliases, keys).
    /// Each mutation costs about one copy of the input: fuzz tests run thousands of them in a debug build.
    public static func mutate(_ input: [UInt8], fragments: [String] = [], using random: inout FuzzRandom) -> [UInt8] {
        guard !input.isEmpty else { return Array(random.pick(fragments + ["x"]).utf8) }
        var bytes = input
        let position = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0:  // flip a bit
            bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
        case 1:  // truncate
            bytes.removeSubrange(position...)
        case 2:  // drop a few bytes
            bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...8, using: &random)))
        case 3, 4:  // replace a number
            replaceNumber(in: &bytes, near: position, with: random.pick(hostileNumbers))
        case 5:  // duplicate a line (a key twice, a list item twice)
            let line = Array(bytes[lineRange(of: position, in: bytes)]) + [0x0A]
            let other = lineRange(of: Int.random(in: 0..<bytes.count, using: &random), in: bytes)
            bytes.insert(contentsOf: line, at: other.lowerBound)
        case 6:  // move a line elsewhere (keys, values and indentation out of place)
            let line = lineRange(of: position, in: bytes)
            let moved = Array(bytes[line])
            bytes.removeSubrange(line)
            guard !bytes.isEmpty else { return moved }
            let other = lineRange(of: Int.random(in: 0..<bytes.count, using: &random), in: bytes)
            bytes.insert(contentsOf: moved, at: other.lowerBound)
        case 7:  // insert a fragment
            let fragment = Array(
                random.pick(fragments + ["\u{0}", "\u{FEFF}", "\t", "\r\n", "{", "[", "\"", "'"]).utf8)
            bytes.insert(contentsOf: fragment, at: position)
        case 8:  // an arbitrary byte, invalid UTF-8 included
            bytes[position] = UInt8.random(in: 0...255, using: &random)
        default:  // swap two words (keys and values trade places)
            swapWords(in: &bytes, at: position, and: Int.random(in: 0..<bytes.count, using: &random))
        }
        return bytes
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    static func isWordByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    /// The line holding `position`, without its line break.
    static func lineRange(of position: Int, in bytes: [UInt8]) -> Range<Int> {
        var start = position
        while start > 0 && bytes[start - 1] != 0x0A { start -= 1 }
        var end = position
        while end < bytes.count && bytes[end] != 0x0A { end += 1 }
        return start..<end
    }

    /// Replaces the first number at or after `position` (wrapping around) by `replacement`.
    static func replaceNumber(in bytes: inout [UInt8], near position: Int, with replacement: String) {
        var start = position
        var steps = 0
        while !isDigit(bytes[start]) {
            start = (start + 1) % bytes.count
            steps += 1
            if steps == bytes.count { return }
        }
        while start > 0 && (isDigit(bytes[start - 1]) || bytes[start - 1] == 0x2E || bytes[start - 1] == 0x2D) {
            start -= 1
        }
        var end = start
        while end < bytes.count && (isDigit(bytes[end]) || [0x2E, 0x2D, 0x2B, 0x65, 0x45].contains(bytes[end])) {
            end += 1
        }
        bytes.replaceSubrange(start..<end, with: Array(replacement.utf8))
    }

    /// Swaps the words at or after `first` and `second`.
    static func swapWords(in bytes: inout [UInt8], at first: Int, and second: Int) {
        func word(from position: Int) -> Range<Int>? {
            var start = position
            while start < bytes.count && !isWordByte(bytes[start]) { start += 1 }
            while start > 0 && isWordByte(bytes[start - 1]) { start -= 1 }
            var end = start
            while end < bytes.count && isWordByte(bytes[end]) { end += 1 }
            return start < end ? start..<end : nil
        }
        guard var a = word(from: first), var b = word(from: second) else { return }
        if a.lowerBound > b.lowerBound { swap(&a, &b) }
        guard a.upperBound <= b.lowerBound else { return }
        let (wordA, wordB) = (Array(bytes[a]), Array(bytes[b]))
        bytes.replaceSubrange(b, with: wordA)
        bytes.replaceSubrange(a, with: wordB)
    }
}
