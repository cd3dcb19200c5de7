import HarnessModel

/// One parameter or step argument run at several values: `--set burst.duration=1s,2s,4s`.
///
/// A sweep runs the whole scenario once per value (each point an ordinary run with that `--set`
/// override) and fits each strategy's median peak against the value, so a peak that grows with
/// the burst shows as a slope in bytes per second and a bounded one as a slope near zero.
public struct SweepSpec: Sendable, Hashable {
    /// What is swept, as `--set` spells it: `payloadSize` or `burst.duration`.
    public var key: String
    /// The values in the order given, as written.
    public var values: [String]

    /// Reads `NAME=V1,V2,...` (at least two values, none empty or repeated).
    public init(parsing text: String) throws(HarnessError) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw .invalidOverride(text, reason: "expected NAME=V1,V2,..., e.g. burst.duration=1s,2s,4s")
        }
        let values = parts[1].split(separator: ",", omittingEmptySubsequences: false).map {
            String($0.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
        }
        guard values.count >= 2 else {
            throw .invalidOverride(text, reason: "a sweep needs at least two values separated by commas, e.g. \(parts[0])=1s,2s,4s")
        }
        if let empty = values.firstIndex(where: \.isEmpty) {
            throw .invalidOverride(text, reason: "value \(empty + 1) of the sweep is empty; remove the extra comma")
        }
        if let repeated = values.enumerated().first(where: { values[..<$0.offset].contains($0.element) })?.element {
            throw .invalidOverride(text, reason: "'\(repeated)' is listed twice; every point of a sweep needs its own value")
        }
        key = parts[0]
        self.values = values
    }

    /// True when `--set` text lists several values (`name=a,b`) and so asks for a sweep.
    public static func isSweep(_ text: String) -> Bool {
        text.split(separator: "=", maxSplits: 1).dropFirst().first?.contains(",") ?? false
    }

    /// The `--set` override of each point, in order: `burst.duration=1s`, `burst.duration=2s`, ...
    public var overrides: [String] { values.map { "\(key)=\($0)" } }
}

/// The value a scenario runs `key` at: a parameter (`payloadSize`) or a step argument
/// (`burst.duration`, by phase or step name, first match); nil when there is none.
///
/// Read after `applyOverrides`, it gives each sweep point its x in base units (`baseUnitValue`).
public func sweptValue(_ key: String, in scenario: ScenarioSpec) -> ParameterValue? {
    let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { return scenario.parameters[key] }
    return scenario.steps.first { $0.phase == parts[0] || $0.name == parts[0] }?.arguments[parts[1]]
}

