/// The sampled time series of a case, column by column.
///
/// When a run outlives the sampler's reserved storage, neighbouring samples are merged keeping
/// the maximum of every figure, so peaks survive; `mergedSamplesPerRow` says how many were merged.
public struct SampleSeries: Sendable, Hashable, Codable {
    /// Names of the phases, indexed by `phaseIndex`.
    public var phaseNames: [String]
    /// Names of the scenario's gauges, indexed like `gauges`.
    public var gaugeNames: [String]
    /// Time of each row, nanoseconds since the case started.
    public var timeNanoseconds: [Int64] = []
    public var allocatedBytes: [Int] = []
    public var activeBytes: [Int] = []
    public var residentBytes: [Int] = []
    public var mappedBytes: [Int] = []
    public var retainedBytes: [Int] = []
    public var metadataBytes: [Int] = []
    /// The kernel's RSS at each row, bytes.
    public var rssBytes: [Int] = []
    /// Index into `phaseNames` of the phase running at each row.
    public var phaseIndex: [Int] = []
    /// `gauges[g][row]`: the value of gauge `g` at each row.
    public var gauges: [[Int64]] = []
    /// How many raw samples each row stands for (1 when nothing was merged).
    public var mergedSamplesPerRow: Int = 1

    public init(phaseNames: [String], gaugeNames: [String]) {
        self.phaseNames = phaseNames
        self.gaugeNames = gaugeNames
        gauges = gaugeNames.map { _ in [] }
    }

    /// Number of rows.
    public var count: Int { timeNanoseconds.count }
}

extension SampleSeries {
    private enum CodingKeys: String, CodingKey {
        case phaseNames, gaugeNames, mergedSamplesPerRow, timeNanoseconds, allocatedBytes, activeBytes, residentBytes
        case mappedBytes, retainedBytes, metadataBytes, rssBytes, phaseIndex, gauges
    }

    /// Each column is one string of space-separated integers: a run's record stays a readable JSON
    /// file of a few MB instead of millions of lines.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(phaseNames, forKey: .phaseNames)
        try container.encode(gaugeNames, forKey: .gaugeNames)
        try container.encode(mergedSamplesPerRow, forKey: .mergedSamplesPerRow)
        func column<T: BinaryInteger>(_ values: [T]) -> String { values.map { String($0) }.joined(separator: " ") }
        try container.encode(column(timeNanoseconds), forKey: .timeNanoseconds)
        try container.encode(column(allocatedBytes), forKey: .allocatedBytes)
        try container.encode(column(activeBytes), forKey: .activeBytes)
        try container.encode(column(residentBytes), forKey: .residentBytes)
        try container.encode(column(mappedBytes), forKey: .mappedBytes)
        try container.encode(column(retainedBytes), forKey: .retainedBytes)
        try container.encode(column(metadataBytes), forKey: .metadataBytes)
        try container.encode(column(rssBytes), forKey: .rssBytes)
        try container.encode(column(phaseIndex), forKey: .phaseIndex)
        try container.encode(gauges.map { column($0) }, forKey: .gauges)
    }

    /// Refuses columns of different lengths, numbers that do not parse or overflow, phase indices
    /// outside the phase names and a gauge count that does not match the names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        phaseNames = try container.decode([String].self, forKey: .phaseNames)
        gaugeNames = try container.decode([String].self, forKey: .gaugeNames)
        mergedSamplesPerRow = try container.decode(Int.self, forKey: .mergedSamplesPerRow)
        func column<T: FixedWidthInteger>(_ key: CodingKeys, as _: T.Type = T.self) throws -> [T] {
            try Self.parseColumn(try container.decode(String.self, forKey: key), key: key, in: container)
        }
        timeNanoseconds = try column(.timeNanoseconds)
        allocatedBytes = try column(.allocatedBytes)
        activeBytes = try column(.activeBytes)
        residentBytes = try column(.residentBytes)
        mappedBytes = try column(.mappedBytes)
        retainedBytes = try column(.retainedBytes)
        metadataBytes = try column(.metadataBytes)
        rssBytes = try column(.rssBytes)
        phaseIndex = try column(.phaseIndex)
        gauges = try container.decode([String].self, forKey: .gauges).map {
            try Self.parseColumn($0, key: .gauges, in: container)
        }
        let lengths =
            [
                allocatedBytes.count, activeBytes.count, residentBytes.count, mappedBytes.count, retainedBytes.count,
                metadataBytes.count, rssBytes.count, phaseIndex.count,
            ] + gauges.map(\.count)
        guard lengths.allSatisfy({ $0 == timeNanoseconds.count }), gauges.count == gaugeNames.count,
            mergedSamplesPerRow >= 1, phaseIndex.allSatisfy({ $0 >= -1 && $0 <= phaseNames.count })
        else {
            throw Self.problem(.columnsDisagree, key: .timeNanoseconds, in: container)
        }
    }

    private static func parseColumn<T: FixedWidthInteger>(
        _ text: String, key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) throws -> [T] {
        guard !text.isEmpty else { return [] }
        // Within ±2^53 as every figure of a record: differences of times and sizes cannot overflow.
        let limit: T = T.bitWidth > 54 ? T(1) << 53 : T.max
        return try text.split(separator: " ", omittingEmptySubsequences: false).map { field in
            guard let value = T(field), value.magnitude <= limit.magnitude else {
                throw problem(.notAWholeNumber(String(field.prefix(24))), key: key, in: container)
            }
            return value
        }
    }
}

extension SampleSeries {
    /// Why a record's sample columns cannot be read; its words are where a record file is read (FileIO).
    public enum ColumnProblem: Error, Sendable, Hashable {
        /// The columns' lengths, the gauge names or the phase indices disagree.
        case columnsDisagree
        /// A field (its first 24 characters) that is no whole number within ±2^53.
        case notAWholeNumber(String)
    }

    /// `problem` as the decoding error of the value at `key`, the typed problem its underlying error.
    private static func problem(
        _ problem: ColumnProblem, key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>
    ) -> DecodingError {
        .dataCorrupted(
            DecodingError.Context(
                codingPath: container.codingPath + [key], debugDescription: String(describing: problem),
                underlyingError: problem))
    }
}
