import FileIO
import Foundation
import HarnessModel
import Reports
import Testing
import Verdicts

/// Rendering a record into a report folder, as `report` and `merge` do, and baseline files as `baseline save`
/// writes them.
struct ReportFolderRenderTests {
    func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "memharness-render-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    @Test func rendersTheRecordsFilesAndReadsBackTheSameRecord() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = RunRecord(report: ReportFixture.report, checks: [])
        try ReportFolder.render(record, to: "\(directory)/report")
        #expect(try ReportFolder.read("\(directory)/report") == record)
        let files = try ReportBundle.files(record)
        for file in files {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/report/\(file.path)"))
            #expect(data == file.data, "\(file.path)")
        }
        #expect(!FileManager.default.fileExists(atPath: ReportFolder.lockPath(for: "\(directory)/report")))
    }

    @Test func aFolderAnotherRunHoldsIsLeftAlone() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = RunRecord(report: ReportFixture.report, checks: [])
        try ReportFolder.render(record, to: "\(directory)/report")
        let lock = try ReportFolderLock("\(directory)/report")
        var changed = record
        changed.rendering.samplesMaxRows = 3
        #expect {
            try ReportFolder.render(changed, to: "\(directory)/report")
        } throws: { error in
            guard let error = error as? ReportError, case .locked = error else { return false }
            return error.exitStatus == .locked
        }
        withExtendedLifetime(lock) {}
        #expect(try ReportFolder.read("\(directory)/report") == record)
    }

    @Test func aBaselineIsWrittenSortedAndReadBackAsAReference() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let baseline = Baseline(name: "nightly", report: ReportFixture.report, derivation: ToleranceDerivation())
        let path = "\(directory)/nightly.json"
        try BaselineFile.write(baseline, to: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("}\n"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == (try BaselineFile.encode(baseline)))
        #expect(text.contains("\"cases\" : {"), "pretty-printed")
        #expect(try BaselineFile.encode(baseline) == (try BaselineFile.encode(BaselineFile.read(path))), "stable")
        let reference = try BaselineFile.reference(path)
        #expect(reference.baseline == baseline && reference.file == path)
        #expect(BaselineFile.defaultPath(name: "nightly") == "Scenarios/baselines/nightly.json")
    }

    @Test func theSavedMessageCountsCasesAndDerivedTolerances() {
        let withNoise = Baseline(name: "b", report: ReportFixture.report, derivation: ToleranceDerivation())
        let derived = withNoise.noise?.values.reduce(0) { $0 + $1.count } ?? 0
        #expect(derived == 2, "two strategies measured twice")
        #expect(
            BaselineFile.savedMessage(withNoise, report: ReportFixture.report, from: "R", to: "b.json")
                == "Baseline 'b': the medians of 4 cases (2 strategies) from R written to b.json; 2 figures with a "
                + "tolerance derived from their noise"
        )
        let medians = Baseline(name: "b", report: ReportFixture.report)
        #expect(
            BaselineFile.savedMessage(medians, report: ReportFixture.report, from: "R", to: "b.json")
                == "Baseline 'b': the medians of 4 cases (2 strategies) from R written to b.json")
    }

    @Test(arguments: [
        ("", 3.0, 0.01, "--name '': use letters, digits, '-' and '_'"),
        ("a/b", 3.0, 0.01, "--name 'a/b': use letters"),
        ("ok", 101.0, 0.01, "--noise-factor 101.0 is out of range; allowed: 0...100"),
        ("ok", Double.nan, 0.01, "--noise-factor nan is out of range"),
        ("ok", 3.0, 1.5, "--min-tolerance must be between 0% and 100%"),
    ])
    func badBaselineSettingsAreNamed(name: String, factor: Double, minimum: Double, message: String) {
        #expect(
            BaselineFile.settingsProblem(name: name, noiseFactor: factor, minimumTolerance: minimum)?.hasPrefix(message)
                == true)
    }

    @Test func goodBaselineSettingsPass() {
        #expect(BaselineFile.settingsProblem(name: "night_ly-2", noiseFactor: 0, minimumTolerance: 1) == nil)
    }
}
