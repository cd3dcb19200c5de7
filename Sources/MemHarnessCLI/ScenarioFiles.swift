import Foundation
import HarnessCore

/// Finds and parses the scenario files named on the command line (all of them before any work).
enum ScenarioFiles {
    /// Resolves paths and names to files and parses them all; every problem of every file is reported at once.
    static func load(_ arguments: [String], directory: String, catalog: WorkloadCatalog) throws(HarnessError) -> [ScenarioSpec] {
        let fileManager = FileManager.default
        let available = ((try? fileManager.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
        var files: [String] = []
        if arguments.isEmpty {
            guard !available.isEmpty else {
                throw .unknownScenario(directory, available: ["a folder with .yaml scenario files (see --scenarios-dir)"])
            }
            files = available.map { "\(directory)/\($0)" }
        }
        for argument in arguments {
            if fileManager.fileExists(atPath: argument) {
                files.append(argument)
            } else if let match = available.first(where: { $0 == "\(argument).yaml" || $0 == "\(argument).yml" }) {
                files.append("\(directory)/\(match)")
            } else {
                throw .unknownScenario(argument, available: available.map { String($0.split(separator: ".").first ?? "") })
            }
        }
        let parser = ScenarioParser(catalog: catalog)
        var specs: [ScenarioSpec] = []
        var diagnostics: [ScenarioDiagnostic] = []
        for file in files {
            guard let data = fileManager.contents(atPath: file) else {
                throw .io(path: file, reason: "cannot read the scenario file")
            }
            do {
                specs.append(try parser.parse(String(decoding: data, as: UTF8.self), file: file))
            } catch let HarnessError.invalidScenario(found) {
                diagnostics += found
            } catch {
                throw error
            }
        }
        var seen: [String: String] = [:]
        for spec in specs {
            if let other = seen[spec.name] {
                diagnostics.append(ScenarioDiagnostic(SourceLocation(file: spec.file, line: 1, column: 1),
                                                      "scenario name '\(spec.name)' is also used by \(other); names must be unique"))
            }
            seen[spec.name] = spec.file
        }
        if !diagnostics.isEmpty { throw .invalidScenario(diagnostics) }
        return specs
    }
}
