import FileIO
import Foundation
import HarnessModel

#if os(Linux)
    import Glibc
#endif

/// A history store on disk: a folder of immutable run records, each named by the hash of its content, and
/// a SQLite index built from them.
///
/// ```
/// STORE/store.json            {"format": "memharness-history/1"}
/// STORE/records/<id>.json     one run: provenance and figures (HistoryRecord)
/// STORE/index.sqlite          a cache of the records, rebuilt when it does not list exactly records/
/// ```
/// A record is written to a temporary sibling and renamed into place, so a store never holds half a record;
/// recording the same run twice writes the same name and changes nothing; stores merge by copying records/.
public struct HistoryStore: Sendable {
    /// The store's format: readers refuse any other.
    public static let format = "memharness-history/1"
    /// Hex digits of the SHA-256 of a record's content that name it (80 bits: no collision in any history).
    public static let idLength = 20
    /// The largest record read: a record of 100 figures is about 20 KiB; folded stacks make it larger.
    static let maximumRecordBytes = 64 << 20

    public let path: String
    var recordsPath: String { "\(path)/records" }
    var indexPath: String { "\(path)/index.sqlite" }
    var formatPath: String { "\(path)/store.json" }

    /// Opens the store at `path`; `create` makes it when the folder is missing or empty. Refuses a folder that
    /// holds something else, and a store of another format.
    public init(path: String, create: Bool) throws(HistoryError) {
        self.path = path
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        let exists = manager.fileExists(atPath: path, isDirectory: &isFolder)
        if exists && !isFolder.boolValue { throw .notAStore(path: path, reason: "it is a file") }
        let entries = exists ? ((try? manager.contentsOfDirectory(atPath: path)) ?? []) : []
        if manager.fileExists(atPath: formatPath) {
            try checkFormat()
        } else if !entries.filter({ !$0.hasPrefix(".") }).isEmpty {
            throw .notAStore(path: path, reason: "it has no store.json")
        } else if create {
            do {
                try manager.createDirectory(atPath: recordsPath, withIntermediateDirectories: true)
            } catch {
                throw .unwritable(path: recordsPath, reason: "cannot create the folder: \(error.localizedDescription)")
            }
            try replace(Data("{\"format\": \"\(Self.format)\"}\n".utf8), at: formatPath)
        } else {
            throw .notAStore(path: path, reason: exists ? "it is empty" : "no such folder")
        }
    }

    private func checkFormat() throws(HistoryError) {
        struct Header: Decodable { var format: String }
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(formatPath, maximumBytes: 4096, what: "store.json")
        } catch {
            throw .notAStore(path: path, reason: "\(formatPath): \(error.reason)")
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(bytes)) else {
            throw .damagedRecord(file: formatPath, reason: "expected {\"format\": \"\(Self.format)\"}")
        }
        guard header.format == Self.format else {
            throw .otherVersion(file: formatPath, found: header.format, expected: Self.format)
        }
    }

    /// The ids of every record, sorted (the names in records/ without `.json`; temporary files left out).
    public func recordIDs() throws(HistoryError) -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: recordsPath)
        } catch {
            throw .notAStore(path: path, reason: "cannot list records/: \(error.localizedDescription)")
        }
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// The content of a record as written: sorted keys, so the same record is the same bytes everywhere.
    public static func encode(_ record: HistoryRecord) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A record holds strings and finite doubles only (medians of measurements): encoding cannot fail.
        return (try? encoder.encode(record)) ?? Data()
    }

    /// The id of a record: the first `idLength` hex digits of the SHA-256 of its content.
    public static func id(of data: Data) -> String { String(SHA256.hex([UInt8](data)).prefix(idLength)) }

    /// Adds `record`; returns its id and whether it was new (false: the same run was recorded before).
    @discardableResult
    public func add(_ record: HistoryRecord) throws(HistoryError) -> (id: String, added: Bool) {
        let data = Self.encode(record)
        let id = Self.id(of: data)
        let file = "\(recordsPath)/\(id).json"
        if FileManager.default.fileExists(atPath: file) { return (id, false) }
        try replace(data, at: file)
        return (id, true)
    }

    /// Reads the record `id`, checking its format.
    public func record(_ id: String) throws(HistoryError) -> HistoryRecord {
        let file = "\(recordsPath)/\(id).json"
        let bytes: [UInt8]
        do {
            bytes = try InputFile.read(file, maximumBytes: Self.maximumRecordBytes, what: "run record")
        } catch {
            throw .damagedRecord(file: file, reason: error.reason)
        }
        struct Header: Decodable { var schema: String }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(bytes)) else {
            throw .damagedRecord(file: file, reason: "not a run record: no schema")
        }
        guard header.schema == HistoryRecord.currentSchema else {
            throw .otherVersion(file: file, found: header.schema, expected: HistoryRecord.currentSchema)
        }
        do {
            return try JSONDecoder().decode(HistoryRecord.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw .damagedRecord(file: file, reason: ReportError.describe(error))
        } catch {
            throw .damagedRecord(file: file, reason: "\(error)")
        }
    }

    /// Writes `data` at `path` through a temporary sibling and a rename: the file is whole or absent.
    private func replace(_ data: Data, at path: String) throws(HistoryError) {
        do {
            try ReportFolder.replaceFile(data, at: path)
        } catch {
            if case .unwritable(_, let reason) = error { throw .unwritable(path: path, reason: reason) }
            throw .unwritable(path: path, reason: "\(error)")
        }
    }
}
