import FileIO
import Foundation
import HarnessModel

/// The bounded JSON summary of one heap capture, for tools (`heap/<scenario>/<strategy>/<capture>.json`):
/// the capture's summary value under a format name and version, keys sorted, pretty-printed, one final newline.
public enum HeapGraphJSON {
    /// The format's name, so a tool can tell the file apart from `run.json`.
    public static let format = "memharness-heap-capture"
    /// Raised when a field changes meaning or is removed (additions keep it).
    public static let version = 1

    private struct Document: Encodable {
        var format: String
        var version: Int
        var scenario: String
        var strategy: String
        var capture: HeapCaptureSummary
    }

    /// Renders `capture` of `strategy` in `scenario`. Throws `ReportError.unwritable` when it cannot be encoded.
    public static func render(
        _ capture: HeapCaptureSummary, scenario: String, strategy: String
    ) throws(ReportError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let document = Document(
            format: format, version: version, scenario: scenario, strategy: strategy, capture: capture)
        do {
            return String(decoding: try encoder.encode(document), as: UTF8.self) + "\n"
        } catch {
            throw .unwritable(path: "heap/\(strategy)", reason: "cannot encode the heap capture summary: \(error)")
        }
    }
}
