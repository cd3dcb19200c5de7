import Foundation
import History

/// `history-bench export STORE...`: every series of the stores, as the recorded-series file
/// (`RecordedSeries.File`) the detection benchmark and HistoryTests replay. A store's folder name names its
/// subject.
enum SeriesExport {
    static func run(stores: [String], recorded: String) throws -> String {
        var series: [RecordedSeries] = []
        for path in stores {
            let subject = URL(fileURLWithPath: path).lastPathComponent
            let table = try HistoryIndex.table(try HistoryStore(path: path, create: false))
            series += table.series.map {
                RecordedSeries(name: "\(subject): \($0.key)", isBytes: $0.isBytes, values: $0.values)
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func json(_ value: some Encodable) throws -> String {
            String(decoding: try encoder.encode(value), as: UTF8.self)
        }
        // One series a line: the file stays readable and its diffs line by line.
        let lines = try series.map { try json($0) }
        return "{\"format\": \(try json(RecordedSeries.File.currentFormat)), \"recorded\": \(try json(recorded)), "
            + "\"series\": [\n" + lines.joined(separator: ",\n") + "\n]}\n"
    }
}
