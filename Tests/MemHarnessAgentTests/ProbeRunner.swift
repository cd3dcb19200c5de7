import Foundation
import TestSupport
import Testing

/// Runs `agent-probe` with the built agent preloaded and reads what it and the agent wrote.
///
/// Nothing links the agent (it would replace the test bundle's allocator), so both products are found beside
/// the test bundle in the build folder; `swift build --product memharness-agent` and
/// `swift build --product agent-probe` build them (`swift test` alone does not).
struct ProbeRunner {
    /// The build folder: the directory of the running test binary.
    static let buildDirectory: URL = {
        let testBinary =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: testBinary).deletingLastPathComponent()
    }()

    /// The agent under test: the one built beside the tests, or the one MEMHARNESS_AGENT_LIBRARY names (another
    /// build of it, e.g. an older one, to show what a test finds there).
    static let agentPath =
        ProcessInfo.processInfo.environment["MEMHARNESS_AGENT_LIBRARY"]
        ?? buildDirectory.appendingPathComponent("libmemharness-agent.so").path
    static let probePath = buildDirectory.appendingPathComponent("agent-probe").path
    static let forkStressPath = buildDirectory.appendingPathComponent("fork-stress").path

    /// Debian's jemalloc, which the contract preloads after the agent.
    static let jemallocPath: String? = [
        "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
        "/usr/lib/libjemalloc.so.2",
    ].first { FileManager.default.fileExists(atPath: $0) }

    /// What to build or install when a test finds a piece missing; nil when everything is there.
    static var missingPieces: String? {
        var missing: [String] = []
        if !FileManager.default.fileExists(atPath: agentPath) {
            missing.append("\(agentPath) (swift build --product memharness-agent)")
        }
        if !FileManager.default.isExecutableFile(atPath: probePath) {
            missing.append("\(probePath) (swift build --product agent-probe)")
        }
        if jemallocPath == nil { missing.append("libjemalloc.so.2 (apt-get install libjemalloc-dev)") }
        return missing.isEmpty ? nil : "missing: " + missing.joined(separator: ", ")
    }

    /// What the probe printed and how it ended.
    struct Outcome {
        var status: Int32
        var timedOut: Bool
        var stdout: String
        var stderr: String

        init(_ outcome: ChildRun) {
            status = outcome.status
            timedOut = outcome.timedOut
            stdout = outcome.stdout
            stderr = outcome.stderr
        }

        /// The words of the first stdout line starting with `prefix` (the prefix's own words included).
        func line(_ prefix: String) -> [String]? {
            stdout.split(separator: "\n").first { $0.hasPrefix(prefix + " ") || $0 == prefix }
                .map { $0.split(separator: " ").map(String.init) }
        }

        /// The integer after `key` in the first line starting with `prefix`.
        func value(_ prefix: String, _ key: String) -> Int? {
            guard let words = line(prefix), let index = words.firstIndex(of: key), index + 1 < words.count else {
                return nil
            }
            return Int(words[index + 1])
        }

        /// Runtime addresses the probe printed for its functions (`function <name> 0x...`).
        var functionAddresses: [String: UInt64] {
            var addresses: [String: UInt64] = [:]
            for line in stdout.split(separator: "\n") where line.hasPrefix("function ") {
                let words = line.split(separator: " ")
                if words.count == 3, let address = UInt64(words[2].dropFirst(2), radix: 16) {
                    addresses[String(words[1])] = address
                }
            }
            return addresses
        }
    }

    /// A scratch directory for one test's files; removed by `cleanUp()`.
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "memharness-agent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs the probe with `arguments`, the agent preloaded and `environment` added; waits at most `timeout`
    /// (then kills it and says so in the outcome).
    func run(
        _ arguments: [String], environment: [String: String] = [:], preload: Bool = true,
        timeout: Duration = .seconds(60)
    ) throws -> Outcome {
        var childEnvironment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MEMHARNESS_AGENT_") }
        childEnvironment["LD_PRELOAD"] =
            preload ? "\(Self.agentPath) \(Self.jemallocPath ?? "")" : Self.jemallocPath ?? ""
        for (key, value) in environment { childEnvironment[key] = value }
        return try runTool(Self.probePath, arguments, environment: childEnvironment, timeout: timeout)
    }

    /// Runs `executable` and waits at most `timeout` (then kills it and says so in the outcome).
    func runTool(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Duration
    ) throws -> Outcome {
        Outcome(try ChildRun.run(executable, arguments, environment: environment, timeout: timeout))
    }
}

/// Functions of the probe binary with their file addresses and sizes, from `nm -S` (binutils or llvm-nm).
struct ProbeSymbols {
    struct Symbol {
        var name: String
        var start: UInt64
        var size: UInt64
    }

    let symbols: [String: Symbol]

    init(binary: String) throws {
        var listing = ""
        let scratch = try ProbeRunner()
        defer { scratch.cleanUp() }
        for tool in ["nm", "llvm-nm"] {
            let outcome = try scratch.runTool(
                "/usr/bin/env", [tool, "-S", "--defined-only", binary], timeout: .seconds(30))
            if outcome.status == 0, !outcome.timedOut {
                listing = outcome.stdout
                break
            }
        }
        var symbols: [String: Symbol] = [:]
        for line in listing.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count == 4, let start = UInt64(words[0], radix: 16), let size = UInt64(words[1], radix: 16)
            else { continue }
            symbols[String(words[3])] = Symbol(name: String(words[3]), start: start, size: size)
        }
        self.symbols = symbols
    }

    /// The probe function whose code holds `fileAddress`, if any.
    func function(at fileAddress: UInt64) -> String? {
        symbols.values.first { $0.size > 0 && fileAddress >= $0.start && fileAddress < $0.start + $0.size }?.name
    }
}
