import Foundation

/// A real program of this machine that memharness is measured against: its command line, what it exercises in the
/// agent, and the files it works on (made fresh in a scratch folder before each run).
public struct CorpusProgram: Sendable {
    /// What a program exercises in a preloaded agent.
    public enum Trait: String, Sendable, CaseIterable {
        /// Starts other programs (fork and exec), or forks without exec.
        case processTree = "fork+exec"
        /// Runs several threads at once.
        case threads
        /// Loads libraries after start-up (`dlopen`).
        case dlopen
        /// Handles or sends signals.
        case signals
        /// Ends through `_exit` (no atexit handlers run).
        case quickExit = "_exit"
        /// A Swift program (the Swift runtime's heap: metadata, generics, closures, tasks).
        case swift
        /// A runtime with a heap of its own (a JVM's, V8's) beside malloc.
        case runtimeHeap = "own heap"
    }

    /// The row's name.
    public var name: String
    /// The program (an absolute path) and its arguments; `{dir}` in an argument is the scratch folder.
    public var command: [String]
    public var traits: [Trait]
    /// False when the program's standard output varies from run to run (times, paths of its own): only the exit
    /// status is compared.
    public var deterministicOutput: Bool
    /// Files to write into the scratch folder first, path relative to it -> contents (`{dir}` in them is the folder;
    /// a file ending in `.lsp` holds one Language Server Protocol message a line, framed when written).
    public var files: [String: String]
    /// Part of the quick corpus that `make test` runs (a few seconds each, base system programs only).
    public var quick: Bool

    public init(
        _ name: String, _ command: [String], traits: [Trait], deterministicOutput: Bool = true,
        files: [String: String] = [:], quick: Bool = false
    ) {
        self.name = name
        self.command = command
        self.traits = traits
        self.deterministicOutput = deterministicOutput
        self.files = files
        self.quick = quick
    }

    /// The command line with `{dir}` replaced by `directory`.
    public func commandLine(in directory: String) -> [String] {
        command.map { $0.replacingOccurrences(of: "{dir}", with: directory) }
    }

    /// Whether every program the command needs is installed (the first word, and `sh -c` scripts' own programs are
    /// not checked: a missing one fails the plain run too, and the row says so).
    public var isInstalled: Bool { command.first.map { FileManager.default.isExecutableFile(atPath: $0) } ?? false }

    /// Writes `files` into `directory` (made if missing).
    public func prepare(in directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (path, contents) in files.sorted(by: { $0.key < $1.key }) {
            let url = URL(fileURLWithPath: directory).appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let text = contents.replacingOccurrences(of: "{dir}", with: directory)
            try (path.hasSuffix(".lsp") ? LSPMessages.frame(text) : text).write(
                to: url, atomically: true, encoding: .utf8)
            if path.hasSuffix(".sh") { chmod(url.path, 0o755) }
        }
    }
}
