import Foundation
import Scenarios
import TestSupport
import Testing
import WorkloadKit

/// Problems found across scenario files, after each parsed: named at their place in the file.
struct ScenarioFilesTests {
    let catalog = WorkloadCatalog([ExampleWorkload()])

    @Test func aNameTwoFilesUseIsNamedAtTheSecondFilesScenarioKey() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-files-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = "\(folder)/a.yaml"
        let second = "\(folder)/b.yaml"
        try "scenario: same\nworkload: example\n".write(toFile: first, atomically: true, encoding: .utf8)
        try "# again\nworkload: example\nscenario: same\n".write(toFile: second, atomically: true, encoding: .utf8)
        let error = try #require(throws: ScenarioError.self) {
            try ScenarioFiles.load([first, second], directory: folder, catalog: catalog)
        }
        guard case .invalid(let found) = error else {
            Issue.record("expected .invalid, got \(error)")
            return
        }
        #expect(
            found.map(\.description)
                == ["\(second):3:1: scenario name 'same' is also used by \(first); names must be unique"])
    }

    @Test func aManualFileIsLeftOutOfAPlainRunButCheckedAndRunWhenNamed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-files-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "scenario: every-run\nworkload: example\n".write(
            toFile: "\(folder)/a.yaml", atomically: true, encoding: .utf8)
        try "scenario: demo\nworkload: example\nmanual: true\n".write(
            toFile: "\(folder)/demo.yaml", atomically: true, encoding: .utf8)
        #expect(try ScenarioFiles.load([], directory: folder, catalog: catalog).map(\.name) == ["every-run"])
        #expect(try ScenarioFiles.load(["demo"], directory: folder, catalog: catalog).map(\.name) == ["demo"])
        // Left out of the run, but still read: a bad value in it stops a plain run, at its place.
        try "scenario: demo\nworkload: example\nmanual: yes please\n".write(
            toFile: "\(folder)/demo.yaml", atomically: true, encoding: .utf8)
        let error = try #require(throws: ScenarioError.self) {
            try ScenarioFiles.load([], directory: folder, catalog: catalog)
        }
        #expect("\(error)".contains("demo.yaml:3:9"), "\(error)")
        // A folder of manual files only: the plain run names them rather than running nothing.
        try FileManager.default.removeItem(atPath: "\(folder)/a.yaml")
        try "scenario: demo\nworkload: example\nmanual: true\n".write(
            toFile: "\(folder)/demo.yaml", atomically: true, encoding: .utf8)
        let none = try #require(throws: ScenarioError.self) {
            try ScenarioFiles.load([], directory: folder, catalog: catalog)
        }
        #expect("\(none)".contains("manual: true"), "\(none)")
        #expect("\(none)".contains("name one: demo"), "\(none)")
    }

    @Test func theParserKeepsWhereEachTopLevelKeyIs() throws {
        let spec = try ScenarioParser(catalog: catalog).parse(
            "# a comment\nworkload: example\n\nscenario: s\nmemoryWarning: 64MiB\n", file: "x.yaml")
        #expect(spec.location(ofKey: "scenario").description == "x.yaml:4:1")
        #expect(spec.location(ofKey: "memoryWarning").description == "x.yaml:5:1")
        // A key the file does not set is placed at its start.
        #expect(spec.location(ofKey: "memoryLimit").description == "x.yaml:1:1")
    }
}
