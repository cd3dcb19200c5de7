import FileIO
import HarnessModel
import Yams

/// Reads a suppressions file: known leaks (of libraries) left out of leak verdicts, each with its reason.
///
/// ```yaml
/// suppressions:
///   - signature: 3f9a0c12be47
///     reason: OpenCombine's Assign keeps its object until cancelled (OpenCombine issue 250)
///   - type: Foundation.Thread
///     reason: the toolchain's Foundation keeps its main thread object
/// ```
///
/// Every problem is reported with file:line:column, the value as typed and the valid choices, before any work.
public enum SuppressionsFile {
    /// The keys of one suppression: exactly one of `signature` and `type`, and a `reason`.
    public static let entryKeys = ["signature", "type", "reason"]

    /// Reads and parses the file at `path`.
    public static func load(_ path: String) throws(ScenarioError) -> [LeakSuppression] {
        let text: String
        do {
            text = try InputFile.readText(
                path, maximumBytes: ScenarioFiles.maximumFileBytes, what: "suppressions file")
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        return try parse(text, file: path)
    }

    /// Parses a suppressions file's text. Throws `ScenarioError.invalid` with every problem found.
    public static func parse(_ text: String, file: String) throws(ScenarioError) -> [LeakSuppression] {
        var context = ParseContext(file: file)
        let expected =
            "a suppressions file is a mapping with one key, suppressions: a list of entries with keys "
            + entryKeys.joined(separator: ", ")
        guard let root = ScenarioParser.compose(text, context: &context, expected: expected) else {
            throw .invalid(context.diagnostics)
        }
        guard let mapping = root.mapping, let list = mapping["suppressions"] else {
            context.report(root, expected)
            throw .invalid(context.diagnostics)
        }
        context.checkKeys(mapping, allowed: ["suppressions"], what: "key")
        guard let entries = list.sequence else {
            context.report(list, "'suppressions' is a list of entries with keys " + entryKeys.joined(separator: ", "))
            throw .invalid(context.diagnostics)
        }
        let suppressions = entries.compactMap { context.readSuppression($0) }
        guard context.diagnostics.isEmpty else { throw .invalid(context.diagnostics) }
        return suppressions
    }
}

extension ParseContext {
    /// One entry: `signature: <12 hexadecimal digits>` or `type: <name>`, and `reason: <words>`.
    mutating func readSuppression(_ node: Node) -> LeakSuppression? {
        let keys = SuppressionsFile.entryKeys
        guard let mapping = node.mapping else {
            report(node, "a suppression is a mapping with keys \(keys.joined(separator: ", "))")
            return nil
        }
        checkKeys(mapping, allowed: keys, what: "key")
        let reason = requiredString(mapping, "reason")
        let signature = mapping["signature"].flatMap { string($0, "signature") }
        let type = mapping["type"].flatMap { string($0, "type") }
        switch (signature, type) {
        case (let signature?, nil):
            guard signature.count == 12, signature.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
                report(
                    mapping["signature"],
                    "signature '\(Excerpt.of(signature))' is not a leak signature; expected 12 lowercase hexadecimal "
                        + "digits, as report.md and instrumented.csv (leak_signatures) print them")
                return nil
            }
            return reason.map { LeakSuppression(.signature(signature), reason: $0) }
        case (nil, let type?):
            guard !type.isEmpty else {
                report(mapping["type"], "'type' must not be empty; expected a type name as report.md prints it")
                return nil
            }
            return reason.map { LeakSuppression(.type(type), reason: $0) }
        case (.some, .some):
            report(mapping["type"], "a suppression has one of signature and type, not both")
        case (nil, nil):
            if mapping["signature"] == nil && mapping["type"] == nil {
                report(node, "a suppression needs signature or type (and a reason)")
            }
        }
        return nil
    }
}

extension ParseContext {
    /// A scenario's `suppressions: FILE`, relative to the scenario file: its problems are reported at their own
    /// places in that file, a file that cannot be read at the key.
    mutating func readSuppressionsFile(_ node: Node) -> [LeakSuppression] {
        guard let path = string(node, "suppressions"), !path.isEmpty else {
            if case .scalar = node { report(node, "'suppressions' must not be empty; expected a suppressions file") }
            return []
        }
        let directory = file.contains("/") ? String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)]) : "."
        let resolved = path.hasPrefix("/") ? path : directory + "/" + path
        do {
            return try SuppressionsFile.load(resolved)
        } catch let .invalid(found) {
            diagnostics += found
        } catch {
            report(node, "suppressions file '\(Excerpt.of(path))': \(error)")
        }
        return []
    }
}
