import HarnessModel

/// The kind of a parameter, which fixes its unit and how a scenario file spells it.
public enum ParameterKind: Sendable, Hashable {
    /// A whole number: `2000`.
    case count
    /// A size: `4KiB`, `1.5MiB`, `512`.
    case bytes
    /// Events per second: `500/s`, `30/min`.
    case rate
    /// A duration: `5ms`, `3s`.
    case duration
    /// A share: `50%` or `0.5`.
    case fraction
    /// `true` or `false`.
    case flag
    /// One of the listed words.
    case choice([String])
    /// Any text, kept as written (the parameters of a `workload: command` scenario, substituted into commands).
    case text

    /// How a value of this kind is written, for error messages and `memharness list`.
    public var spelling: String {
        switch self {
        case .count: return "a whole number, e.g. 2000"
        case .bytes: return "a size with a binary unit, e.g. 4KiB, 1.5MiB, 512B"
        case .rate: return "a rate, e.g. 500/s, 30/min"
        case .duration: return "a duration, e.g. 5ms, 3s, 200us"
        case .fraction: return "a share, e.g. 50% or 0.5"
        case .flag: return "true or false"
        case .choice(let words): return "one of: \(words.joined(separator: ", "))"
        case .text: return "any text, e.g. 1000 or large"
        }
    }
}

/// A parameter a workload (or one of its steps) accepts.
public struct ParameterSpec: Sendable, Hashable {
    public var name: String
    public var kind: ParameterKind
    public var defaultValue: ParameterValue
    /// Allowed values in base units (count, bytes, per second, nanoseconds, fraction), inclusive.
    public var range: ClosedRange<Double>?
    public var summary: String

    public init(
        _ name: String, _ kind: ParameterKind, default defaultValue: ParameterValue,
        range: ClosedRange<Double>? = nil, _ summary: String
    ) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.range = range
        self.summary = summary
    }

    /// A count parameter.
    public static func count(_ name: String, default value: Int, range: ClosedRange<Int>, _ summary: String)
        -> ParameterSpec
    {
        ParameterSpec(
            name, .count, default: .count(value), range: Double(range.lowerBound)...Double(range.upperBound), summary)
    }

    /// A byte-size parameter.
    public static func bytes(_ name: String, default value: Int, range: ClosedRange<Int>, _ summary: String)
        -> ParameterSpec
    {
        ParameterSpec(
            name, .bytes, default: .bytes(value), range: Double(range.lowerBound)...Double(range.upperBound), summary)
    }

    /// A rate parameter, events per second.
    public static func rate(_ name: String, default value: Double, range: ClosedRange<Double>, _ summary: String)
        -> ParameterSpec
    {
        ParameterSpec(name, .rate, default: .rate(perSecond: value), range: range, summary)
    }

    /// A duration parameter.
    public static func duration(
        _ name: String, default value: Duration, range: ClosedRange<Duration>, _ summary: String
    ) -> ParameterSpec {
        ParameterSpec(
            name, .duration, default: .duration(nanoseconds: value.nanoseconds),
            range: Double(range.lowerBound.nanoseconds)...Double(range.upperBound.nanoseconds), summary)
    }

    /// A share parameter in 0...1.
    public static func fraction(
        _ name: String, default value: Double, range: ClosedRange<Double> = 0...1, _ summary: String
    ) -> ParameterSpec {
        ParameterSpec(name, .fraction, default: .fraction(value), range: range, summary)
    }

    /// A switch.
    public static func flag(_ name: String, default value: Bool, _ summary: String) -> ParameterSpec {
        ParameterSpec(name, .flag, default: .flag(value), summary)
    }

    /// Any text, kept as written.
    public static func text(_ name: String, default value: String, _ summary: String) -> ParameterSpec {
        ParameterSpec(name, .text, default: .choice(value), summary)
    }

    /// One of a fixed set of words.
    public static func choice(_ name: String, _ words: [String], default value: String, _ summary: String)
        -> ParameterSpec
    {
        ParameterSpec(name, .choice(words), default: .choice(value), summary)
    }

    /// Reads `text` as a value of this parameter; returns a reason when it cannot.
    public func parse(_ text: String) -> Result<ParameterValue, ParameterParseFailure> {
        let value: ParameterValue?
        switch kind {
        case .count: value = Int(text.filter { $0 != "_" }).map(ParameterValue.count)
        case .bytes: value = Units.parseBytes(text).map(ParameterValue.bytes)
        case .rate: value = Units.parseRatePerSecond(text).map { .rate(perSecond: $0) }
        case .duration: value = Units.parseDurationNanoseconds(text).map { .duration(nanoseconds: $0) }
        case .fraction: value = Units.parseFraction(text).map(ParameterValue.fraction)
        case .flag:
            switch text.lowercased() {
            case "true", "yes", "on": value = .flag(true)
            case "false", "no", "off": value = .flag(false)
            default: value = nil
            }
        case .choice(let words): value = words.contains(text) ? .choice(text) : nil
        case .text: value = text.isEmpty ? nil : .choice(text)
        }
        guard let value else { return .failure(.malformed(expected: kind.spelling)) }
        if let range, let base = value.baseUnitValue, !range.contains(base) {
            return .failure(.outOfRange(allowed: describe(range)))
        }
        return .success(value)
    }

    /// The allowed range spelled in the parameter's unit.
    public func describe(_ range: ClosedRange<Double>) -> String {
        func spell(_ bound: Double) -> String {
            switch kind {
            case .bytes: return Units.formatBytes(bound)
            case .duration: return Units.formatDuration(nanoseconds: Int64(bound))
            case .rate: return "\(Units.fixed(bound, decimals: bound == bound.rounded() ? 0 : 2))/s"
            case .fraction: return "\(Units.fixed(bound * 100, decimals: 0))%"
            default: return Units.fixed(bound, decimals: bound == bound.rounded() ? 0 : 2)
            }
        }
        return "\(spell(range.lowerBound))...\(spell(range.upperBound))"
    }
}

/// Why a parameter value was refused.
public enum ParameterParseFailure: Error, Sendable, Hashable {
    case malformed(expected: String)
    case outOfRange(allowed: String)

    /// The refusal in words: the bad value, the parameter when named, and what is allowed.
    public func message(text: String, name: String? = nil) -> String {
        let subject = name.map { " for '\($0)'" } ?? ""
        switch self {
        case .malformed(let expected): return "bad value '\(Excerpt.of(text))'\(subject); expected \(expected)"
        case .outOfRange(let allowed):
            return "value '\(Excerpt.of(text))'\(subject) is out of range; allowed: \(allowed)"
        }
    }
}
