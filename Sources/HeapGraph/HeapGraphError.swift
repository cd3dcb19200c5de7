/// Why a heap snapshot could not be built from what a capture (or a test) gave the builder.
public enum HeapGraphError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A column of `table` has `count` entries where the table has `expected`.
    case columnLengthsDiffer(table: String, column: String, count: Int, expected: Int)
    /// Two blocks start at the same address.
    case duplicateAddress(UInt64)
    /// Entry `item` of `column` is `index`, outside `0..<count`.
    case indexOutOfRange(column: String, item: Int, index: Int, count: Int)
    /// More `what` than 32-bit indices can number.
    case tooLarge(what: String, count: Int, limit: Int)
    /// The capture file could not be read as the snapshot was built from it.
    case unreadableCapture(CaptureFileError)

    public var description: String {
        switch self {
        case .columnLengthsDiffer(let table, let column, let count, let expected):
            return "heap snapshot: the \(table) column '\(column)' has \(count) entries but the table has "
                + "\(expected); append one entry to every column per \(table == "block" ? "block" : "edge")"
        case .duplicateAddress(let address):
            return "heap snapshot: two blocks start at 0x\(String(address, radix: 16)); each live block must be "
                + "listed once (a freed block's address reused during the capture means the world was not stopped)"
        case .indexOutOfRange(let column, let item, let index, let count):
            return "heap snapshot: \(column) of entry \(item) is \(index), outside 0..<\(count); indices refer to "
                + "the builder's blocks, names and stacks in the order they were added"
        case .tooLarge(let what, let count, let limit):
            return "heap snapshot: \(count) \(what), more than the \(limit) 32-bit indices can number; "
                + "capture a smaller heap"
        case .unreadableCapture(let error):
            return error.description
        }
    }
}
