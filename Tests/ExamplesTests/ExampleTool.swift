import Foundation
import TestSupport

/// Paths of the repository, the example package and the programs the tests spawn.
enum ExamplePaths {
    /// The repository's root (this file is Tests/ExamplesTests/ExampleTool.swift).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let example = repository.appendingPathComponent("Examples/JSONCache")
    static let fixtures = repository.appendingPathComponent("Tests/ExamplesTests/Fixtures")
    /// The example's harness, built in the example's own `.build` by `make test` (debug).
    static let harness = example.appendingPathComponent(".build/debug/json-cache-harness").path
    /// Why the example's harness is missing, and how to build it; nil when it is there.
    static var missingHarness: String? {
        FileManager.default.isExecutableFile(atPath: harness)
            ? nil
            : "\(harness) is not built; `make test` builds it (or: swift build --package-path Examples/JSONCache)"
    }

    /// The example's test bundle, built by `make test` (`swift test --package-path Examples/JSONCache`).
    static let tests = example.appendingPathComponent(".build/debug/JSONCachePackageTests.xctest").path
    /// Why the example's tests are not built, and how to build them; nil when they are.
    static var missingTests: String? {
        FileManager.default.isExecutableFile(atPath: tests)
            ? nil
            : "\(tests) is not built; `make test` builds it (or: swift build --package-path Examples/JSONCache --build-tests)"
    }

    /// A product of this package in the test bundle's build folder (`swift test` builds it).
    static func built(_ name: String) -> String {
        let testBinary =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent(name).path
    }
}

/// How a tool ended and what it printed.
typealias ToolOutcome = ChildRun

extension ChildRun {
    /// stdout and stderr together (SwiftPM prints a plugin's output on its stdout, its errors on stderr).
    var output: String { stdout + stderr }
}

/// Runs `executable` with `arguments` (in `directory` when given) and waits at most `timeout`, then stops it with
/// SIGTERM (SwiftPM then ends what it started) and says so. GitHub's variables of the test run are not passed on. Its
/// temporary files go to a folder of its own, removed when it ends: SwiftPM compiles a plugin in a
/// `TemporaryDirectory.*` of `TMPDIR` and leaves it there, with lock files for scratch paths outside a package.
func runTool(
    _ executable: String, _ arguments: [String], in directory: URL? = nil, environment extra: [String: String] = [:],
    timeout: Duration
) throws -> ToolOutcome {
    var environment = ProcessInfo.processInfo.environment
    // A test run inside GitHub Actions must not leak its own settings into the programs under test.
    environment["GITHUB_ACTIONS"] = nil
    environment["GITHUB_STEP_SUMMARY"] = nil
    environment.merge(extra) { $1 }
    let scratch = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: scratch) }
    environment["TMPDIR"] = scratch.path
    return try ChildRun.run(
        executable, arguments, environment: environment, timeout: timeout, directory: directory?.path,
        stopSignal: SIGTERM)
}

/// `swift test ARGUMENTS` in the package at `package`, without building (`make test` built its tests).
func swiftTest(
    _ package: URL, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(300)
) throws -> ToolOutcome {
    try runTool(
        "/usr/bin/env", ["swift", "test", "--package-path", package.path, "--skip-build"] + arguments,
        environment: environment, timeout: timeout)
}

/// `swift package ARGUMENTS` on the package at `package` (SwiftPM from PATH, as a user runs it). Should SwiftPM itself
/// crash, the Swift runtime's backtrace of it is in the outcome's stderr: SwiftPM once ended with SIGSEGV (139) in a
/// fresh clone's run, and 670 runs of the same plugin invocations here, under loads up to 21, never did again.
func swiftPackage(_ package: URL, _ arguments: [String], timeout: Duration = .seconds(300)) throws -> ToolOutcome {
    try runTool(
        "/usr/bin/env", ["swift", "package", "--package-path", package.path] + arguments,
        environment: ["SWIFT_BACKTRACE": "enable=yes,interactive=no,output-to=stderr"], timeout: timeout)
}

/// A fresh temporary folder for one test's report (or one tool's temporary files).
func temporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("examples-out-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Removes the lock files SwiftPM leaves in the temporary directory for a scratch path outside a package
/// (`/tmp/examples-out-X` gives `/tmp/_tmp_examples-out-X.lock`, `..._Package.resolved.lock`, ...).
func removeLockFiles(ofScratchPath path: String) {
    let folder = FileManager.default.temporaryDirectory
    let prefix = path.replacingOccurrences(of: "/", with: "_")
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    for name in names where name.hasPrefix(prefix) && name.hasSuffix(".lock") {
        try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
    }
}
