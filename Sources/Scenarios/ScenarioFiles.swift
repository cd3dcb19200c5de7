import FileIO
import Foundation
import HarnessModel
import WorkloadKit

/// Finds and parses the scenario files named on the command line, all of them before any work.
public enum ScenarioFiles {
    /// The largest scenario file read, bytes: a scenario is a page of YAML; anything bigger is a mistake.
    public static let maximumFileBytes = 1 << 20

    /// Resolves `arguments` (paths, or names of files in `directory`; every file of `directory` when
    /// empty) and parses them all; every problem of every file is reported at once. With no arguments the files
    /// that say `manual: true` are checked with the others but left out of the result.
    public static func load(
        _ arguments: [String], directory: String, catalog: WorkloadCatalog
    ) throws(ScenarioError) -> [ScenarioSpec] {
        let files = try resolve(arguments, directory: directory)
        let parser = ScenarioParser(catalog: catalog)
        var specs: [ScenarioSpec] = []
        var diagnostics: [ScenarioDiagnostic] = []
        for file in files {
            do {
                specs.append(try parser.parse(try read(file), file: file))
            } catch let .invalid(found) {
                diagnostics += found
            }
        }
        var seen: [String: String] = [:]
        for spec in specs {
            if let other = seen[spec.name] {
                diagnostics.append(
                    ScenarioDiagnostic(
                        spec.location(ofKey: "scenario"),
                        "scenario name '\(spec.name)' is also used by \(other); names must be unique"))
            }
            seen[spec.name] = spec.file
        }
        if !diagnostics.isEmpty { throw .invalid(diagnostics) }
        guard arguments.isEmpty else { return specs }
        let automatic = specs.filter { !$0.manual }
        guard !automatic.isEmpty else {
            throw .unreadable(
                path: directory,
                reason: "every scenario file in it says `manual: true` (it runs only when named); name one: "
                    + specs.map(\.name).joined(separator: ", "))
        }
        return automatic
    }

    /// The files `arguments` name, in order.
    static func resolve(_ arguments: [String], directory: String) throws(ScenarioError) -> [String] {
        var isDirectory: ObjCBool = false
        let directoryExists = FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
        var available: [String] = []
        var listingFailure: String?
        if directoryExists && isDirectory.boolValue {
            do {
                available = try FileManager.default.contentsOfDirectory(atPath: directory)
                    .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
            } catch {
                listingFailure = error.localizedDescription
            }
        }
        if arguments.isEmpty {
            if let listingFailure {
                throw .unreadable(path: directory, reason: "cannot list the scenario folder: \(listingFailure)")
            }
            guard directoryExists else {
                throw .unreadable(
                    path: directory,
                    reason: "no such folder; expected a folder of .yaml scenario files (--scenarios-dir)")
            }
            guard isDirectory.boolValue else {
                throw .unreadable(
                    path: directory, reason: "not a folder; expected a folder of .yaml scenario files (--scenarios-dir)"
                )
            }
            guard !available.isEmpty else {
                throw .unreadable(
                    path: directory, reason: "holds no .yaml scenario file; name scenario files on the command line")
            }
            return available.map { "\(directory)/\($0)" }
        }
        return try arguments.map { argument throws(ScenarioError) in
            if FileManager.default.fileExists(atPath: argument) { return argument }
            if let match = available.first(where: { $0 == "\(argument).yaml" || $0 == "\(argument).yml" }) {
                return "\(directory)/\(match)"
            }
            // A path that cannot be opened (missing, a dangling link, a loop): reading it says why.
            if argument.contains("/") || argument.hasSuffix(".yaml") || argument.hasSuffix(".yml") { return argument }
            let names = available.map { String($0.split(separator: ".").first ?? "") }
            throw .unknownScenario(Excerpt.of(argument), available: names.isEmpty ? ["none in \(directory)"] : names)
        }
    }

    /// The text of a scenario file: a regular file, at most `maximumFileBytes`, UTF-8.
    public static func read(_ path: String) throws(ScenarioError) -> String {
        do {
            return try InputFile.readText(path, maximumBytes: maximumFileBytes, what: "scenario file")
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
    }
}
