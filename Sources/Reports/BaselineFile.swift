import Foundation
import HarnessModel

/// Reading a baseline file (`memharness baseline save` writes them).
public enum BaselineFile {
    /// The largest baseline read, bytes: a baseline is a few KB per scenario.
    public static let maximumFileBytes = 4 << 20

    /// The baseline at `path`: a readable JSON file of this format with finite, non-negative figures.
    public static func read(_ path: String) throws(ReportError) -> Baseline {
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(path, maximumBytes: maximumFileBytes, what: "baseline file")
        } catch {
            throw .unreadable(path: path, reason: error.reason + "; create one with `memharness baseline save`")
        }
        let baseline: Baseline
        do {
            baseline = try JSONDecoder().decode(Baseline.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw .damaged(file: path, line: nil, reason: "not a memharness baseline: \(ReportError.describe(error))")
        } catch {
            throw .damaged(file: path, line: nil, reason: "not a memharness baseline: \(error)")
        }
        guard baseline.format == Baseline.formatName else {
            throw .damaged(file: path, line: nil, reason: "format '\(baseline.format)' is not \(Baseline.formatName)")
        }
        for (key, figures) in baseline.cases.sorted(by: { $0.key < $1.key }) {
            for (figure, value) in figures.sorted(by: { $0.key < $1.key }) where !value.isFinite || value < 0 {
                throw .damaged(
                    file: path, line: nil, reason: "\(key) \(figure) is \(value); expected a finite size in bytes")
            }
        }
        try checkNoise(baseline, path: path)
        return baseline
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
                            + "\(noise.repetitions) repetitions; expected finite, non-negative fractions over at least 2"
                    )
                }
            }
        }
    }
}
