import HarnessModel
import Verdicts

/// `history diff A B`: what moved between two runs: figures beyond their series' noise, allocation sites
/// where both runs were attributed, types where both captured their heap.
public struct HistoryDiff: Sendable, Hashable {
    /// A figure that moved beyond its noise band.
    public struct FigureMove: Sendable, Hashable {
        public var key: SeriesKey
        public var isBytes: Bool
        public var before: Double
        public var after: Double
        /// The half-width of the series' noise band the move exceeds.
        public var band: Double
        public var relative: Double { before != 0 ? (after - before) / abs(before) : 0 }
    }

    /// The folded stacks of one strategy in both runs: path → live bytes at the peak before and after.
    public struct SiteMove: Sendable, Hashable {
        public var scenario: String
        public var strategy: String
        public var before: [String: Int]
        public var after: [String: Int]
    }

    /// A type whose live bytes or blocks differ between the two runs' last heap captures.
    public struct TypeMove: Sendable, Hashable {
        public var scenario: String
        public var strategy: String
        public var type: String
        public var bytesBefore: Int
        public var bytesAfter: Int
        public var countBefore: Int
        public var countAfter: Int
    }

    /// The leak signatures of one strategy whose heap both runs captured, when some are new or gone.
    public struct SignatureMove: Sendable, Hashable {
        public var scenario: String
        public var strategy: String
        public var change: LeakSignatureChange
    }

    public var before: HistoryRun
    public var after: HistoryRun
    /// Figures that moved, largest relative move first.
    public var figures: [FigureMove]
    /// Figures both runs have that stayed within their noise.
    public var steadyFigures: Int
    /// Strategies attributed in both runs, sorted.
    public var sites: [SiteMove]
    /// Types that moved, by scenario, strategy, then bytes moved (most first).
    public var types: [TypeMove]
    /// Strategies with new or gone leak signatures, by scenario and strategy (both runs recorded signatures).
    public var signatures: [SignatureMove]

    /// Compares the records of `before` and `after` with the one comparison (`RunToRun.compare`); a figure's noise
    /// band comes from its series in `analysis` (the relative floor of `ChangePointDetection.Settings` × its band
    /// factor when the series has none).
    public init(
        before: (run: HistoryRun, record: HistoryRecord), after: (run: HistoryRun, record: HistoryRecord),
        analysis: HistoryAnalysis
    ) {
        self.before = before.run
        self.after = after.run
        let bands = Dictionary(analysis.series.map { ($0.series.key, $0.analysis.band) }) { first, _ in first }
        let old = Dictionary(before.record.figures.map { ($0.key, $0) }) { first, _ in first }
        var moved: [FigureMove] = []
        var steady = 0
        let settings = ChangePointDetection.Settings()
        for figure in after.record.figures {
            guard let previous = old[figure.key] else { continue }
            // The series' band; a figure with no series yet gets the detection's least noise.
            let noise =
                bands[figure.key].map(NoiseBand.series(halfWidth:))
                ?? NoiseBand(
                    relative: (figure.key.followsPageCache ? settings.pageCacheNoiseFloor : settings.relativeNoiseFloor)
                        * settings.bandFactor)
            let change = RunToRun.compare(before: previous.value, after: Measured(value: figure.value), noise: noise)
            if change.direction != .unchanged {
                moved.append(
                    FigureMove(
                        key: figure.key, isBytes: figure.isBytes, before: previous.value, after: figure.value,
                        band: change.band))
            } else {
                steady += 1
            }
        }
        figures = moved.sorted { (abs($0.relative), $1.key) > (abs($1.relative), $0.key) }
        steadyFigures = steady
        let oldSites = Dictionary(before.record.sites.map { ("\($0.scenario)/\($0.strategy)", $0) }) { a, _ in a }
        sites = after.record.sites.compactMap { entry in
            oldSites["\(entry.scenario)/\(entry.strategy)"].map {
                SiteMove(scenario: entry.scenario, strategy: entry.strategy, before: $0.stacks, after: entry.stacks)
            }
        }
        types = Self.typeMoves(before.record.types, after.record.types)
        signatures = Self.signatureMoves(before.record.types, after.record.types)
    }

    static func signatureMoves(_ before: [RecordedTypes], _ after: [RecordedTypes]) -> [SignatureMove] {
        let old = Dictionary(before.map { ("\($0.scenario)/\($0.strategy)", $0) }) { first, _ in first }
        return after.compactMap { entry in
            guard let previous = old["\(entry.scenario)/\(entry.strategy)"], let then = previous.leaks,
                let now = entry.leaks
            else { return nil }
            let complete = (previous.omittedLeakGroups ?? 0) == 0 && (entry.omittedLeakGroups ?? 0) == 0
            let change = LeakSignatureChange(before: then, after: now, isComplete: complete)
            return change.isEmpty
                ? nil : SignatureMove(scenario: entry.scenario, strategy: entry.strategy, change: change)
        }
    }

    static func typeMoves(_ before: [RecordedTypes], _ after: [RecordedTypes]) -> [TypeMove] {
        let old = Dictionary(before.map { ("\($0.scenario)/\($0.strategy)", $0) }) { first, _ in first }
        var result: [TypeMove] = []
        for entry in after {
            guard let previous = old["\(entry.scenario)/\(entry.strategy)"] else { continue }
            let names = Set(entry.bytes.keys).union(previous.bytes.keys)
            let rows = names.compactMap { name -> TypeMove? in
                let move = TypeMove(
                    scenario: entry.scenario, strategy: entry.strategy, type: name,
                    bytesBefore: previous.bytes[name] ?? 0, bytesAfter: entry.bytes[name] ?? 0,
                    countBefore: previous.counts[name] ?? 0, countAfter: entry.counts[name] ?? 0)
                return move.bytesBefore == move.bytesAfter && move.countBefore == move.countAfter ? nil : move
            }
            result += rows.sorted {
                (abs($0.bytesAfter - $0.bytesBefore), $1.type) > (abs($1.bytesAfter - $1.bytesBefore), $0.type)
            }
        }
        return result
    }
}

extension HistoryTable {
    /// The run `name` names: a record id or its prefix, else a commit SHA or its prefix (the newest run of
    /// that commit).
    public func run(named name: String) throws(HistoryError) -> HistoryRun {
        let byID = runs.filter { $0.id.hasPrefix(name) }
        if byID.count == 1 { return byID[0] }
        if byID.count > 1 { throw .ambiguousRun(name, matches: byID.map(\.id)) }
        let byCommit = runs.filter { !name.isEmpty && $0.provenance.commit.hasPrefix(name) }
        let commits = Set(byCommit.map(\.provenance.commit))
        if commits.count > 1 { throw .ambiguousRun(name, matches: commits.sorted()) }
        guard let newest = byCommit.last else { throw .unknownRun(name, known: runs.count) }
        return newest
    }
}
