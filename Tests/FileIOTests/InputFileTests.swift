import FileIO
import Foundation
import Testing

/// The checks every input file gets, on files made for each test in a folder of its own.
struct InputFileTests {
    let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("memharness-input-\(UUID())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = "\(folder)/\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The reason `body` was refused with, or nil when it was not.
    func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let failure as InputFile.Failure {
            return failure.reason
        } catch {
            return "not an InputFile.Failure: \(error)"
        }
    }

    @Test func readsTextAndDropsAByteOrderMark() throws {
        let plain = try file("plain.yaml", Array("scenario: s\n".utf8))
        #expect(try InputFile.readText(plain, maximumBytes: 100, what: "scenario file") == "scenario: s\n")
        let marked = try file("marked.yaml", [0xEF, 0xBB, 0xBF] + Array("a: ü\n".utf8))
        #expect(try InputFile.readText(marked, maximumBytes: 100, what: "scenario file") == "a: ü\n")
        try FileManager.default.removeItem(atPath: folder)
    }

    @Test func refusesWhatIsNotAReadableRegularTextFileWithinTheLimit() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let what = "scenario file"
        #expect(
            refusal { _ = try InputFile.read(folder, maximumBytes: 100, what: what) }
                == "is a directory; expected a \(what)")
        #expect(
            refusal { _ = try InputFile.read("\(folder)/missing", maximumBytes: 100, what: what) }
                == "cannot read the \(what): No such file or directory")
        let large = try file("large.yaml", Array(repeating: 0x61, count: 101))
        #expect(
            refusal { _ = try InputFile.read(large, maximumBytes: 100, what: what) }
                == "the \(what) is 101 bytes (101 B); the largest read is 100 bytes (100 B)")
        #expect(try InputFile.read(large, maximumBytes: 101, what: what).count == 101, "the limit itself is read")
        let latin1 = try file("latin1.yaml", Array("ab".utf8) + [0xE9] + Array("c".utf8))
        #expect(
            refusal { _ = try InputFile.readText(latin1, maximumBytes: 100, what: what) }
                == "is not UTF-8 text (byte 3 is not part of a UTF-8 character); expected a \(what)")
        #expect(throws: InputFile.Failure.self) { try InputFile.read(folder, maximumBytes: 100, what: what) }
        do {
            _ = try InputFile.read(folder, maximumBytes: 100, what: what)
        } catch {
            #expect(error.description == "\(folder): is a directory; expected a \(what)", "the path, then the reason")
        }
    }
}
