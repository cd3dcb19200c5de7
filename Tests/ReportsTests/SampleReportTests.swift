import FileIO
import Foundation
import HarnessModel
import Reports
import Testing

/// The committed sample run (`Reports/sample`, written by `make sample-report`) and the README that quotes it
/// cannot drift apart: the folder is what this version renders from its record, and every figure the README
/// quotes from it is in its report.
struct SampleReportTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let sample = repository.appendingPathComponent("Reports/sample").path

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// The lines of `text` between `<!-- NAME:begin -->` and `<!-- NAME:end -->`.
    static func region(_ name: String, of text: String) throws -> [Substring] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let begin = lines.firstIndex(of: "<!-- \(name):begin -->")
        let end = begin.flatMap { lines[$0...].firstIndex(of: "<!-- \(name):end -->") }
        guard let begin, let end else {
            Issue.record("README.md has no region `<!-- \(name):begin -->` ... `<!-- \(name):end -->`")
            return []
        }
        return Array(lines[(begin + 1)..<end])
    }

    @Test func theSampleFolderIsWhatItsRecordRenders() throws {
        let record = try ReportFolder.read(Self.sample)
        let renderings = ReportBundle.renderings(record)
        // The probe sees the files: a record renders at least the report and both CSVs.
        #expect(Set(renderings.map(\.path)).isSuperset(of: ["report.md", "summary.csv", "samples.csv"]))
        for (path, data) in renderings {
            let committed = try Data(contentsOf: URL(fileURLWithPath: "\(Self.sample)/\(path)"))
            #expect(
                committed == data,
                "Reports/sample/\(path) is not what its run.json renders; `memharness report Reports/sample` rewrites it"
            )
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: Self.sample).filter {
            var isDirectory: ObjCBool = false
            FileManager.default.fileExists(atPath: "\(Self.sample)/\($0)", isDirectory: &isDirectory)
            return !isDirectory.boolValue
        }
        #expect(Set(files) == Set(renderings.map(\.path) + ["run.json"]), "files of another run in Reports/sample")
    }

    /// The README's excerpt of the report (`> ` lines) is the report's own lines, charts linked from the README.
    /// The README's two quotes of the sample: a scenario's reading and ranking, and what held a strategy's peak.
    @Test(arguments: ["sample-excerpt", "sample-peak"])
    func theReadmesExcerptIsTheSampleReportsText(region: String) throws {
        let report = try Self.text("Reports/sample/report.md")
        let reportLines = Set(report.split(separator: "\n").map(String.init))
        let excerpt = try Self.region(region, of: try Self.text("README.md"))
            .filter { $0.hasPrefix("> ") }
            .map { String($0.dropFirst(2)).replacingOccurrences(of: "](Reports/sample/charts/", with: "](charts/") }
        #expect(excerpt.count >= 4, "the excerpt quotes a reading and a table")
        for line in excerpt {
            #expect(reportLines.contains(line), "README quotes a line the sample report does not have: \(line)")
        }
    }

    /// Every figure the README's summary of the shipped scenarios gives (a number with a unit, a ratio, a
    /// share) appears in the sample report.
    @Test func everyFigureOfTheReadmesSummaryIsInTheSampleReport() throws {
        let report = try Self.text("Reports/sample/report.md")
        let summary = try Self.region("sample-figures", of: try Self.text("README.md")).joined(separator: "\n")
        let figure = try Regex(#"[0-9][0-9,]*(\.[0-9]+)? ?(MiB|KiB|GiB|B|ms|s|x|%)(?![A-Za-z0-9])"#)
        let figures = summary.matches(of: figure).map { String(summary[$0.range]) }
        #expect(figures.count >= 8, "the summary gives figures: \(figures)")
        for value in figures {
            // Metrics in milliseconds stand in their tables without the unit (the column says `(ms)`).
            let cell = value.hasSuffix(" ms") ? "| \(value.dropLast(3)) |" : value
            #expect(
                report.contains(value) || report.contains(cell),
                "README gives \(value), which the sample report does not")
        }
    }
}
