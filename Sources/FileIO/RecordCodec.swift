import Foundation
import HarnessModel

/// Reading and writing `run.json`.
public enum RecordCodec {
    /// The largest `run.json` read, bytes: a long sweep's record is tens of MB; beyond this it is not a record.
    public static let maximumFileBytes = 512 << 20

    /// The record as `run.json`: pretty-printed, keys sorted (stable diffs), non-finite numbers as strings.
    ///
    /// Scenarios are encoded one at a time and spliced into the rest of the record, so the encoder never
    /// holds the whole run's tree (a 1,000-case sweep's would be several times its text); the bytes are
    /// those of encoding the record at once (`encodeWhole`).
    public static func encode(_ record: RunRecord) throws(ReportError) -> Data {
        var out = Data()
        try encode(record) { chunk throws(ReportError) in out.append(chunk) }
        return out
    }

    /// `run.json` in consecutive pieces handed to `emit`: the frame up to the scenarios, each scenario,
    /// then the rest, so neither the encoder nor the caller holds the whole text.
    public static func encode(
        _ record: RunRecord, _ emit: (_ chunk: Data) throws(ReportError) -> Void
    ) throws(ReportError) {
        var frame = record
        frame.report.scenarios = []
        let empty = Data("\n    \"scenarios\" : [\n\n    ]".utf8)
        let text = try encodeWhole(frame)
        guard !record.report.scenarios.isEmpty, let slot = text.range(of: empty),
            text.range(of: empty, in: slot.upperBound..<text.endIndex) == nil
        else { return try emit(encodeWhole(record)) }
        try emit(Data(text[..<slot.lowerBound]) + Data("\n    \"scenarios\" : [".utf8))
        for (index, scenario) in record.report.scenarios.enumerated() {
            try emit(Data((index == 0 ? "\n" : ",\n").utf8) + indented(try encodeValue(scenario), by: 6))
        }
        try emit(Data("\n    ]".utf8) + Data(text[slot.upperBound...]))
    }

    /// The record encoded in one piece, with the final newline.
    public static func encodeWhole(_ record: RunRecord) throws(ReportError) -> Data {
        try encodeValue(record) + Data("\n".utf8)
    }

    private static func encodeValue(_ value: some Encodable) throws(ReportError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return try encoder.encode(value)
        } catch {
            throw .unwritable(path: "run.json", reason: "cannot encode the record: \(error)")
        }
    }

    /// `json` with `spaces` more indentation on every line but empty ones (as the encoder writes nested
    /// values; JSON strings hold no raw line breaks, so every line break is the printer's).
    private static func indented(_ json: Data, by spaces: Int) -> Data {
        let newline = UInt8(ascii: "\n")
        let indent = [UInt8](repeating: UInt8(ascii: " "), count: spaces)
        var out = Data()
        out.reserveCapacity(json.count + json.count / 8)
        var atLineStart = true
        for byte in json {
            if atLineStart && byte != newline { out.append(contentsOf: indent) }
            out.append(byte)
            atLineStart = byte == newline
        }
        return out
    }

    /// Reads `run.json` text; `file` names it in errors, with the line and column of the problem.
    ///
    /// Checked before decoding: strict JSON (`JSONText`: nesting, duplicate keys, finite numbers) with
    /// every number within ±2^53, then the schema; after decoding, what the renderings rely on
    /// (`RecordCheck`). A record that passes renders without a trap.
    public static func decode(_ data: Data, file: String) throws(ReportError) -> RunRecord {
        let bytes = [UInt8](data)
        do {
            try JSONText.check(bytes, numberMagnitudeLimit: RecordCheck.numberMagnitudeLimit)
        } catch {
            throw ReportError.damaged(error, file: file)
        }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        struct Header: Decodable { var schema: String? }
        // Handled: JSONText.check placed syntax errors above, so what fails here is a value that is not an object.
        guard let header = try? decoder.decode(Header.self, from: data) else {
            throw .damaged(
                file: file, line: 1, column: 1,
                reason: "not a JSON object; expected a run.json written by memharness run")
        }
        guard header.schema == RunRecord.currentSchema else {
            let place = JSONText.place(of: [RecordCheck.Key("schema")], in: bytes)
            throw .damaged(
                file: file, line: place?.line ?? 1, column: place?.column ?? 1,
                reason:
                    "schema '\(Excerpt.of(header.schema ?? "none"))' is not \(RunRecord.currentSchema): written by "
                    + "another version of memharness; run the scenarios again with this one")
        }
        let record: RunRecord
        do {
            record = try decoder.decode(RunRecord.self, from: data)
        } catch let error as DecodingError {
            throw ReportError.damaged(error, file: file, bytes: bytes)
        } catch {
            throw .damaged(file: file, line: nil, reason: "\(error)")
        }
        if let problem = RecordCheck.firstProblem(in: record) {
            let place = JSONText.place(of: problem.path, in: bytes)
            throw .damaged(file: file, line: place?.line, column: place?.column, reason: problem.message)
        }
        return record
    }
}
