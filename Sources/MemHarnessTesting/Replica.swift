import CMemHarnessTesting
import Foundation
import Synchronization

#if os(Linux)
    import Glibc
#endif

/// The test an expectation runs in, as the test binary's own filter names it.
struct TestIdentity: Sendable, Hashable, Codable {
    /// Swift Testing: the test's ID (`Module.Suite/test()/File.swift:12:4`); XCTest: `Module.Class/testMethod`.
    var id: String
    /// Swift Testing's description of the running test case when the test is parameterized (addresses
    /// blanked, so it reads the same in every process); nil otherwise.
    var caseKey: String?
    /// The arguments (after the executable) that make this test binary run exactly this test, alone.
    var replicaArguments: [String]

    /// The test for messages: its ID, and its case when parameterized.
    var displayName: String { caseKey.map { "\(id) (\($0))" } ?? id }

    /// The identity of a Swift Testing test (`id`: `Test.ID`'s description).
    static func swiftTesting(id: String, caseDescription: String?) -> TestIdentity {
        // swift-testing matches --filter against the whole ID (with its source location); anchored, it
        // selects this test alone. Serial, so a parameterized test's other cases do not run beside it.
        TestIdentity(
            id: id, caseKey: caseDescription.map(blankingAddresses),
            replicaArguments: [
                "--testing-library", "swift-testing", "--filter", "^" + escapingRegex(id) + "$", "--no-parallel",
            ])
    }

    /// The identity of an XCTest test method (`type`: the class's reflected name, `Module.Class`).
    static func xcTest(type: String, name: String) -> TestIdentity {
        // XCTestCase.name is `Class.method` on Linux; the runner's filter is `Module.Class/method`.
        let method = name.split(separator: ".").last.map(String.init) ?? name
        let id = "\(type)/\(method)"
        return TestIdentity(id: id, caseKey: nil, replicaArguments: [id])
    }

    /// `text` with regular-expression metacharacters escaped.
    static func escapingRegex(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// `text` with every `$7f12ab…` and `0x7f12ab…` (addresses, which differ between processes) as `$_`/`0x_`.
    static func blankingAddresses(_ text: String) -> String {
        var result = ""
        var characters = Array(text)[...]
        while let first = characters.first {
            var prefix: String?
            if first == "$" {
                prefix = "$"
            } else if first == "0", characters.dropFirst().first == "x" {
                prefix = "0x"
            }
            guard let prefix else {
                result.append(first)
                characters = characters.dropFirst()
                continue
            }
            let digits = characters.dropFirst(prefix.count).prefix { $0.isHexDigit }
            result += digits.isEmpty ? prefix : prefix + "_"
            characters = characters.dropFirst(prefix.count + digits.count)
        }
        return result
    }
}

/// What a replica is asked to measure: the `occurrence`-th run of the expectation at `site` in `test`.
struct ReplicaRequest: Sendable, Codable {
    /// The environment variable that carries the path of the request (a JSON file) to the replica.
    static let variable = "MEMHARNESS_TESTING_REPLICA"

    var test: TestIdentity
    /// `fileID:line:column` (Swift Testing) or `filePath:line` (XCTest) of the `expectMemory` call.
    var site: String
    /// How many times the expectation at `site` ran before in the test, from 0.
    var occurrence: Int
    /// Where the replica writes its `ReplicaResult` (JSON).
    var resultPath: String
    /// The figures of the expectations that ran before this one in the same run of the test: the replica
    /// returns them from those expectations, so a test that looks at figures takes the same path there.
    var earlier: [EarlierFigures] = []
    /// True when the replica runs with the agent tracking every block and captures its heap before and after the
    /// closure (`leaks: .none`, the agent found beside the test binary).
    var heapGraph = false

    /// The request this process was started with; nil unless it is a replica whose parent still runs.
    static let current: ReplicaRequest? = {
        guard memharness_testing_is_replica_of_live_parent() == 1,
            let path = ProcessInfo.processInfo.environment[variable],
            let data = FileManager.default.contents(atPath: path)
        else { return nil }
        // A request this process cannot read (another version wrote it): it runs as an ordinary test process,
        // writes no result, and the parent reports that the replica did not reach the expectation.
        return try? JSONDecoder().decode(ReplicaRequest.self, from: data)
    }()

    /// True when an expectation at `site` in `test` is the one this replica was asked about (any run).
    func concerns(_ test: TestIdentity, site: String) -> Bool {
        self.test.id == test.id && self.test.caseKey == test.caseKey && self.site == site
    }

    /// The figures the parent got for the `occurrence`-th run of `site`, if it ran before the requested one.
    func earlierFigures(site: String, occurrence: Int) -> MemoryFigures? {
        earlier.first { $0.site == site && $0.occurrence == occurrence }?.figures
    }
}

/// The figures one earlier expectation of a test run gave.
struct EarlierFigures: Sendable, Hashable, Codable {
    var site: String
    var occurrence: Int
    var figures: MemoryFigures
}

/// What a replica sends back.
struct ReplicaResult: Sendable, Codable {
    /// The figures of the measured closure; nil when it could not measure.
    var figures: MemoryFigures?
    /// Why it could not measure.
    var failure: String?
    /// What the closure threw in the replica, if it did.
    var closureError: String?
}

/// The expectations of the current run of each test: how many times each site ran, and what they measured.
///
/// A test runs once at a time per case in a test process (`--repeat` runs it again, one run after the
/// other), so runs are told apart by their owner: the task running a Swift Testing test, the XCTestCase
/// instance of an XCTest method. A new owner starts a new run.
final class TestRunLog: Sendable {
    private struct Run {
        var owner: Int?
        var counts: [String: Int] = [:]
        var figures: [EarlierFigures] = []
    }

    private let runs = Mutex<[String: Run]>([:])

    private static func key(_ test: TestIdentity) -> String { "\(test.id)|\(test.caseKey ?? "")" }

    /// The number of earlier runs of `site` in this run of `test`; counts this one.
    func next(_ test: TestIdentity, site: String, owner: Int?) -> Int {
        runs.withLock { runs in
            var run = runs[Self.key(test)] ?? Run(owner: owner)
            if run.owner != owner { run = Run(owner: owner) }
            let occurrence = run.counts[site, default: 0]
            run.counts[site] = occurrence + 1
            runs[Self.key(test)] = run
            return occurrence
        }
    }

    /// Keeps the figures of the `occurrence`-th run of `site` for the replicas of later expectations.
    func record(_ figures: MemoryFigures, test: TestIdentity, site: String, occurrence: Int, owner: Int?) {
        runs.withLock { runs in
            guard runs[Self.key(test)]?.owner == owner else { return }
            runs[Self.key(test)]?.figures.append(EarlierFigures(site: site, occurrence: occurrence, figures: figures))
        }
    }

    /// The figures of this run of `test` so far.
    func earlier(_ test: TestIdentity, owner: Int?) -> [EarlierFigures] {
        runs.withLock { runs in
            guard let run = runs[Self.key(test)], run.owner == owner else { return [] }
            return run.figures
        }
    }

    /// The log of this process.
    static let shared = TestRunLog()
}
