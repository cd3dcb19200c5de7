import HarnessModel

/// Words with typed values in them: a reading, a table cell, a heading. Built with string interpolation
/// (`"\(code: strategy) peaks at \(Value.bytes(peak))"`); each renderer spells the spans its own way (a code
/// span in Markdown, `<code>` in HTML, the bare name on a terminal) and every value the one way `Value.text` does.
public struct Phrase: Sendable, Hashable, ExpressibleByStringInterpolation {
    public var spans: [Span]

    public init(_ spans: [Span] = []) {
        var phrase = Phrase(spans: [])
        for span in spans { phrase.append(span) }
        self = phrase
    }

    private init(spans: [Span]) { self.spans = spans }

    public init(stringLiteral value: String) { self.init(value.isEmpty ? [] : [.text(value)]) }

    public init(stringInterpolation: StringInterpolation) { self = stringInterpolation.phrase }

    /// Words a user typed in a file (a scenario's description): a name between backticks is code, as report.md
    /// shows it; an unpaired or empty pair of backticks stays as typed. Nothing else in `typed` is read.
    public init(typed: String) {
        let parts = typed.split(separator: "`", omittingEmptySubsequences: false).map(String.init)
        var phrase = Phrase()
        for (index, part) in parts.enumerated() {
            let isCode = index % 2 == 1 && index < parts.count - 1 && !part.isEmpty
            if isCode {
                phrase.append(Span.code(part))
            } else {
                phrase.append(Span.text(index % 2 == 1 ? "`" + part + (index < parts.count - 1 ? "`" : "") : part))
            }
        }
        self = phrase
    }

    /// A name as code: `signal-next`.
    public static func code(_ name: String) -> Phrase { Phrase([.code(name)]) }

    /// One value.
    public static func value(_ value: Value) -> Phrase { Phrase([.value(value)]) }

    public var isEmpty: Bool { spans.isEmpty }

    /// Appends `span`, merging adjacent words into one text span.
    public mutating func append(_ span: Span) {
        if case .text(let next) = span {
            guard !next.isEmpty else { return }
            if case .text(let previous) = spans.last {
                spans[spans.count - 1] = .text(previous + next)
                return
            }
        }
        spans.append(span)
    }

    public mutating func append(_ phrase: Phrase) {
        for span in phrase.spans { append(span) }
    }

    public static func + (left: Phrase, right: Phrase) -> Phrase {
        var result = left
        result.append(right)
        return result
    }

    /// `parts` with `separator` between them.
    public static func joined(_ parts: [Phrase], separator: Phrase) -> Phrase {
        var result = Phrase()
        for (index, part) in parts.enumerated() {
            if index > 0 { result.append(separator) }
            result.append(part)
        }
        return result
    }

    /// The phrase as plain words: names bare, values as `Value.text` spells them, links as their text.
    public var plainText: String {
        spans.map { span in
            switch span {
            case .text(let text), .code(let text): return text
            case .strong(let inner): return inner.plainText
            case .link(let text, _): return text.plainText
            case .value(let value): return value.text
            }
        }.joined()
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var phrase = Phrase()

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) { phrase.append(Span.text(literal)) }
        /// Words.
        public mutating func appendInterpolation(_ text: String) { phrase.append(Span.text(text)) }
        /// A whole number in words: `3`.
        public mutating func appendInterpolation(_ number: Int) { phrase.append(Span.text(String(number))) }
        public mutating func appendInterpolation(_ inner: Phrase) { phrase.append(inner) }
        public mutating func appendInterpolation(_ value: Value) { phrase.append(Span.value(value)) }
        /// A name: a strategy, a phase, a function, a file.
        public mutating func appendInterpolation(code name: String) { phrase.append(Span.code(name)) }
        /// Words that stand out (a finding).
        public mutating func appendInterpolation(strong inner: Phrase) { phrase.append(Span.strong(inner)) }
    }
}

/// A piece of a phrase.
public indirect enum Span: Sendable, Hashable {
    /// Words, as they are (no markup: a renderer escapes what its syntax needs).
    case text(String)
    /// A name spelled as code: a strategy, a phase, a function, a type, a file.
    case code(String)
    /// Words that stand out.
    case strong(Phrase)
    /// A link: its text and where it goes.
    case link(Phrase, LinkTarget)
    /// A typed figure.
    case value(Value)
}

/// Where a link goes.
public enum LinkTarget: Sendable, Hashable {
    /// The section whose heading reads `heading`, in this document.
    case section(heading: String)
    /// A file of the report folder, by its relative path (or a folder's file: `run-1/report.md`).
    case file(String)
}

/// A figure as a phrase holds it: the number and its unit; `text` spells it (the one formatter of each kind, for
/// every renderer).
public enum Value: Sendable, Hashable {
    /// `1.25 MiB`.
    case bytes(Double)
    /// `1.12 KiB ± 96 B`: a measured figure with its measurement floor; the figure alone when the floor is nil or 0.
    case bytesWithFloor(Double, floorBytes: Int?)
    /// `+1.25 MiB`, `-96 B`, `0 B`: a change.
    case signedBytes(Double)
    /// `312.40 MiB/s`.
    case bytesPerSecond(Double)
    /// `12`.
    case count(Int)
    /// `+3`, `-1`, `0`: a change in a count.
    case signedCount(Int)
    /// `2.9x` (with `decimals`).
    case ratio(Double, decimals: Int)
    /// `12.5%` of a fraction (0.125), with `decimals`.
    case percent(Double, decimals: Int)
    /// `+12.5%`, `-3.0%` of a fractional change; `from 0` when it is not finite.
    case signedPercent(Double, decimals: Int)
    /// `±2.7%`: a reach either way, in percent; `±∞` when it is not finite.
    case plusMinusPercent(Double, decimals: Int)
    /// `1.25 ms`, `3.40 s`: a duration as `Units.formatDuration` spells it.
    case duration(nanoseconds: Int64)
    /// `3.1 s`: seconds with one decimal.
    case seconds(nanoseconds: Int64)
    /// A plain number with fixed decimals.
    case number(Double, decimals: Int)

    /// The value in words, the same in every rendering.
    public var text: String {
        switch self {
        case .bytes(let bytes): return Units.formatBytes(bytes)
        case .bytesWithFloor(let bytes, let floor):
            guard let floor, floor > 0 else { return Units.formatBytes(bytes) }
            return Units.formatBytes(bytes) + " ± " + Units.formatBytes(floor)
        case .signedBytes(let bytes): return (bytes > 0 ? "+" : "") + Units.formatBytes(bytes)
        case .bytesPerSecond(let rate): return Units.formatBytes(rate) + "/s"
        case .count(let count): return String(count)
        case .signedCount(let count): return count > 0 ? "+\(count)" : "\(count)"
        case .ratio(let ratio, let decimals): return Units.fixed(ratio, decimals: decimals) + "x"
        case .percent(let fraction, let decimals): return Units.fixed(fraction * 100, decimals: decimals) + "%"
        case .signedPercent(let fraction, let decimals):
            guard fraction.isFinite else { return "from 0" }
            return (fraction > 0 ? "+" : "") + Units.fixed(fraction * 100, decimals: decimals) + "%"
        case .plusMinusPercent(let percent, let decimals):
            return percent.isFinite ? "±" + Units.fixed(percent, decimals: decimals) + "%" : "±∞"
        case .duration(let nanoseconds): return Units.formatDuration(nanoseconds: nanoseconds)
        case .seconds(let nanoseconds): return Units.fixed(Double(nanoseconds) / 1e9, decimals: 1) + " s"
        case .number(let value, let decimals): return Units.fixed(value, decimals: decimals)
        }
    }
}
