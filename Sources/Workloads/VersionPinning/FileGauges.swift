import WorkloadKit

/// The database-file gauges both SQLite workloads declare, so the report shows disk beside memory.
struct FileGauges: Sendable {
    static let descriptors = [
        GaugeDescriptor("databaseBytes", "Size of the database file on disk, bytes."),
        GaugeDescriptor(
            "walBytes",
            "Size of the -wal file on disk, bytes (it grows while a reader pins it; only a TRUNCATE checkpoint or "
                + "closing the last connection shrinks it)."
        ),
        GaugeDescriptor("pageCount", "PRAGMA page_count: pages in the database (data plus free), pages."),
        GaugeDescriptor("freePages", "PRAGMA freelist_count: pages that hold no data, pages."),
    ]

    let databaseBytes: Gauge
    let walBytes: Gauge
    let pageCount: Gauge
    let freePages: Gauge

    init(_ context: CaseContext) {
        databaseBytes = context.gauge("databaseBytes")
        walBytes = context.gauge("walBytes")
        pageCount = context.gauge("pageCount")
        freePages = context.gauge("freePages")
    }

    func publish(_ figures: DatabaseFigures) {
        databaseBytes.set(Int64(figures.databaseBytes))
        walBytes.set(Int64(figures.walBytes))
        pageCount.set(Int64(figures.pageCount))
        freePages.set(Int64(figures.freePages))
    }
}

/// The largest database and WAL files seen so far.
struct FilePeaks: Sendable, Hashable {
    /// Largest database file, bytes.
    var databaseBytes = 0
    /// Largest WAL file, bytes.
    var walBytes = 0
    /// Largest database and WAL files together, as seen at one time, bytes.
    var fileBytes = 0

    mutating func note(_ figures: DatabaseFigures) {
        databaseBytes = max(databaseBytes, figures.databaseBytes)
        walBytes = max(walBytes, figures.walBytes)
        fileBytes = max(fileBytes, figures.fileBytes)
    }

    mutating func note(_ other: FilePeaks) {
        databaseBytes = max(databaseBytes, other.databaseBytes)
        walBytes = max(walBytes, other.walBytes)
        fileBytes = max(fileBytes, other.fileBytes)
    }
}

extension Metric {
    static func bytes(_ name: String, _ value: Int) -> Metric { Metric(name: name, value: Double(value), unit: .bytes) }
    static func count(_ name: String, _ value: Int) -> Metric { Metric(name: name, value: Double(value), unit: .count) }
    static func milliseconds(_ name: String, nanoseconds: Int64) -> Metric {
        Metric(name: name, value: Double(nanoseconds) / 1e6, unit: .milliseconds)
    }
}

/// The strategy a scenario names; the scenario parser has checked the name against the descriptor.
func validatedStrategy<Strategy: RawRepresentable & CaseIterable>(_ name: String, of workload: String) -> Strategy
where Strategy.RawValue == String {
    guard let strategy = Strategy(rawValue: name) else {
        // Reaching here means a caller skipped the parser's validation: a programming error.
        preconditionFailure(
            "unknown \(workload) strategy '\(name)'; expected one of: \(Strategy.allCases.map(\.rawValue))")
    }
    return strategy
}
