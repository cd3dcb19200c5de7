import FileIO
import Foundation
import HarnessModel
import Testing

@testable import Reports

#if os(Linux)
    import Glibc
#endif

/// One escaping helper per output format, and what it must survive: control characters in JSON,
/// backticks and pipes in Markdown code spans.
struct EscapingTests {
    /// Every character below U+0020, quotes, backslashes and text beyond ASCII.
    static let awkward = "a\"b\\c\nd\re\tf\u{08}g\u{0C}h\u{01}i\u{1F}j\u{7F}k é ✓"

    @Test func aJSONStringLiteralReadsBackAsTheText() throws {
        let literal = JSONText.quoted(Self.awkward)
        #expect(!literal.unicodeScalars.contains { $0.value < 0x20 }, "no raw control character in \(literal)")
        let decoded = try JSONDecoder().decode(String.self, from: Data(literal.utf8))
        #expect(decoded == Self.awkward)
        #expect(JSONText.quoted("\u{01}") == "\"\\u0001\"")
        #expect(JSONText.quoted("tab\there") == "\"tab\\there\"")
    }

    @Test func benchmarkJSONKeepsControlCharactersOfScenarioNames() throws {
        var report = ReportFixture.report
        report.scenarios[0].name = "live\tquery\r\u{01}"
        let text = CheckOutputs.benchmarkJSON(report)
        try JSONText.check(Array(text.utf8))
        struct Entry: Decodable { var name: String }
        let entries = try JSONDecoder().decode([Entry].self, from: Data(text.utf8))
        #expect(!entries.isEmpty)
        #expect(entries.allSatisfy { $0.name.hasPrefix("live\tquery\r\u{01}/") }, "\(entries.map(\.name))")
    }

    @Test func codeSpansSurviveBackticksAndPipes() {
        #expect(MarkdownReport.code("plain") == "`plain`")
        #expect(MarkdownReport.code("a|b") == "`a\\|b`")
        #expect(MarkdownReport.code("a|b", inTable: false) == "`a|b`")
        #expect(MarkdownReport.code("one`two") == "``one`two``")
        #expect(MarkdownReport.code("`edge`") == "`` `edge` ``")
        #expect(MarkdownReport.code("two\nlines", inTable: false) == "`two lines`")
    }

    @Test func anUnlistableFolderIsNotTakenForAnEmptyOne() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "memharness-unlistable-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("the user's".utf8).write(to: URL(fileURLWithPath: "\(folder)/notes.txt"))
        defer {
            chmod(folder, 0o755)
            try? FileManager.default.removeItem(atPath: folder)  // cleanup of the test's own folder
        }
        // The folder is seen: the check looks inside it and refuses it as the user's.
        #expect(throws: ReportError.self) { try ReportFolder.checkReplaceable(folder) }
        chmod(folder, 0o000)
        let error = FilesystemIdentity.withoutPermissionOverride {
            #expect(throws: ReportError.self) { try ReportFolder.checkReplaceable(folder) }
        }
        guard case .unwritable(let path, let reason)? = error else {
            Issue.record("expected .unwritable, got \(String(describing: error))")
            return
        }
        #expect(path == folder)
        #expect(reason.contains("cannot list the folder"), "\(reason)")
        chmod(folder, 0o755)
        #expect(FileManager.default.fileExists(atPath: "\(folder)/notes.txt"), "the user's file is untouched")
    }
}

/// Runs code with the calling thread's file-system identity set to `nobody`, so permission bits hold even
/// for root: a file-system uid other than 0 drops the thread's CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, and
/// setting it back to 0 restores them (capabilities(7)). `setfsuid` acts on the calling thread only; Glibc's
/// Swift module does not declare it (it is a GNU extension), so it is looked up.
enum FilesystemIdentity {
    static func withoutPermissionOverride<T>(_ body: () throws -> T) rethrows -> T {
        typealias SetFSUID = @convention(c) (uid_t) -> Int32
        guard geteuid() == 0, let symbol = dlsym(nil, "setfsuid") else { return try body() }
        let setfsuid = unsafeBitCast(symbol, to: SetFSUID.self)
        let nobody: uid_t = 65_534
        _ = setfsuid(nobody)
        defer { _ = setfsuid(0) }
        return try body()
    }
}
