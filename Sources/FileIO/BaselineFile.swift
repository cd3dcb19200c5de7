import Foundation
import HarnessModel

/// Reading and writing baseline files (`memharness baseline save` writes them).
public enum BaselineFile {
    /// The largest baseline read, bytes: a baseline is a few KB per scenario.
    public static let maximumFileBytes = 4 << 20

    /// The figures a baseline may hold (`Baseline.figures(of:)`): anything else would be compared with nothing.
    public static let figures: [Figure] = [.peakAllocated, .exactPeak]
    /// Their names, as a baseline file keys them.
    public static let figureNames = figures.map(\.description)

    /// The baseline at `path`: a regular UTF-8 file of at most `maximumFileBytes`, strict JSON
    /// (`JSONText`), this format, keys `scenario/strategy`, known figures, and figures that are
    /// whole, non-negative and at most 2^53 bytes. Every problem is reported at its line and column.
    public static func read(_ path: String) throws(ReportError) -> Baseline {
        let text: String
        do {
            text = try InputFile.readText(path, maximumBytes: maximumFileBytes, what: "baseline file")
        } catch {
            throw .unreadable(path: path, reason: error.reason + "; create one with `memharness baseline save`")
        }
        return try decode(Array(text.utf8), file: path)
    }

    /// The baseline at `path` (`read`) with the file it came from, as comparisons name it.
    public static func reference(_ path: String) throws(ReportError) -> BaselineReference {
        BaselineReference(baseline: try read(path), file: path)
    }

    /// A baseline from the bytes of a file `path` names (in messages), checked as `read` says.
    public static func decode(_ bytes: [UInt8], file path: String) throws(ReportError) -> Baseline {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw .unreadable(path: path, reason: "is not UTF-8 text; expected a baseline file")
        }
        let prefix = "not a memharness baseline: "
        do {
            try JSONText.check(bytes, numberMagnitudeLimit: RecordCheck.numberMagnitudeLimit)
        } catch {
            throw ReportError.damaged(error, file: path, prefix: prefix)
        }
        let baseline: Baseline
        do {
            baseline = try JSONDecoder().decode(Baseline.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw ReportError.damaged(error, file: path, bytes: bytes, prefix: prefix)
        } catch {
            throw .damaged(file: path, line: nil, reason: prefix + "\(error)")
        }
        func damaged(_ path: [RecordCheck.Key], _ reason: String, atKey: Bool = false) -> ReportError {
            let place = JSONText.place(of: path, in: bytes, atKey: atKey)
            return .damaged(file: pathName, line: place?.line, column: place?.column, reason: reason)
        }
        let pathName = path
        guard baseline.format == Baseline.formatName else {
            throw damaged(
                [RecordCheck.Key("format")],
                "format '\(Excerpt.of(baseline.format))' is not \(Baseline.formatName): written by another version "
                    + "of memharness; save it again with `memharness baseline save`")
        }
        for (key, figures) in baseline.cases.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count >= 2, parts.allSatisfy({ !$0.isEmpty }) else {
                throw damaged(
                    [RecordCheck.Key("cases"), RecordCheck.Key(key)],
                    "case '\(Excerpt.of(key))' is not 'scenario/strategy', e.g. 'live-query/signal-next'", atKey: true)
            }
            for (figure, value) in figures.sorted(by: { $0.key < $1.key }) {
                let place = [RecordCheck.Key("cases"), RecordCheck.Key(key), RecordCheck.Key(figure)]
                guard let named = Figure(name: figure), Self.figures.contains(named) else {
                    throw damaged(
                        place,
                        "unknown figure '\(Excerpt.of(figure))' for \(Excerpt.of(key)); a baseline holds "
                            + figureNames.joined(separator: ", ") + suggestion(figure, figureNames), atKey: true)
                }
                guard value >= 0, value == value.rounded() else {
                    throw damaged(
                        place,
                        "\(Excerpt.of(key)) \(figure) is \(value); expected a whole, non-negative number of bytes")
                }
            }
        }
        try checkNoise(baseline, path: path)
        return baseline
    }

    /// The file's bytes: pretty-printed JSON with sorted keys and a final newline, so a committed
    /// baseline diffs well and is the same for the same figures on any machine. Throws `JSONEncoder`'s
    /// error (a figure that is not finite).
    public static func encode(_ baseline: Baseline) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(baseline) + Data("\n".utf8)
    }

    /// Writes `baseline` to `path` (`encode`), replacing the file in one step.
    public static func write(_ baseline: Baseline, to path: String) throws(ReportError) {
        let data: Data
        do {
            data = try encode(baseline)
        } catch {
            throw .unwritable(path: path, reason: "cannot encode the baseline: \(error)")
        }
        try ReportFolder.replaceFile(data, at: path)
    }

    /// Where `baseline save` writes the baseline `name` unless told otherwise.
    public static func defaultPath(name: String) -> String { "Scenarios/baselines/\(name).json" }

    /// Why a baseline cannot be saved with these settings (`baseline save --name --noise-factor
    /// --min-tolerance`), naming the option and what it allows; nil when it can.
    public static func settingsProblem(name: String, noiseFactor: Double, minimumTolerance: Double) -> String? {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            return "--name '\(name)': use letters, digits, '-' and '_'"
        }
        guard noiseFactor.isFinite, (0...100).contains(noiseFactor) else {
            return "--noise-factor \(noiseFactor) is out of range; allowed: 0...100"
        }
        guard minimumTolerance <= 1 else { return "--min-tolerance must be between 0% and 100%" }
        return nil
    }

    /// Every noise figure finite and non-negative, measured over at least two repetitions.
    static func checkNoise(_ baseline: Baseline, path: String) throws(ReportError) {
        for (key, figures) in (baseline.noise ?? [:]).sorted(by: { $0.key < $1.key }) {
            for (figure, noise) in figures.sorted(by: { $0.key < $1.key }) {
                let values =
                    [noise.relativeNoise, noise.tolerance] + [noise.intervalLow, noise.intervalHigh].compactMap { $0 }
                guard values.allSatisfy({ $0.isFinite && $0 >= 0 }), noise.repetitions >= 2 else {
                    throw .damaged(
                        file: path, line: nil,
                        reason: "\(key) \(figure): noise \(noise.relativeNoise), tolerance \(noise.tolerance) over "
                            + "\(noise.repetitions) repetitions; expected finite, non-negative fractions over at "
                            + "least 2"
                    )
                }
            }
        }
    }
}
