/// The repetitions of one strategy in one scenario, reduced to medians (of completed cases only).
public struct StrategySummary: Sendable, Hashable {
    public var strategy: String
    /// Repetitions that completed; only these enter the medians.
    public var okCount: Int
    /// Repetitions that did not complete.
    public var failedCount: Int
    /// Median of the scenario's ranking figure (peak allocated unless the scenario says otherwise); nil
    /// when no completed repetition has it.
    public var rankingMedian: Double?
    /// Smallest and largest ranking figure over the completed repetitions.
    public var rankingMin: Double?
    public var rankingMax: Double?
    /// (max - min) / median of the ranking figure, percent; nil with one repetition.
    public var rankingSpreadPercent: Double?
    /// Median of peak allocated above baseline, bytes.
    public var medianPeakAllocatedNetBytes: Double
    public var minPeakAllocatedNetBytes: Double
    public var maxPeakAllocatedNetBytes: Double
    /// (max - min) / median of the net allocated peak, percent; nil with one repetition.
    public var spreadPercent: Double?
    /// Median peak `stats.resident`, absolute bytes.
    public var medianPeakResidentBytes: Double
    /// Median `VmHWM`, bytes.
    public var medianPeakRSSBytes: Double
    /// Median residue after settle, bytes.
    public var medianResidueBytes: Double
    public var medianDurationNanoseconds: Double
    /// Median net allocated peak per phase (peak minus baseline), bytes, in phase order.
    public var phasePeakNetBytes: [PhaseFigure]
    /// Median of each metric, in the order the first case lists them.
    public var metrics: [Metric]
    /// Median exact net peak (`--peak exact`), bytes; nil when no repetition has one.
    public var medianExactPeakNetBytes: Double?
    /// Median spike excess (exact net peak minus sampled net peak), bytes; nil when no repetition has one.
    public var medianSpikeExcessBytes: Double?
    /// Median exact net peak per phase, bytes, in phase order; empty when no repetition has exact peaks.
    public var phaseExactPeakNetBytes: [PhaseFigure] = []
    /// The 95% interval of the median net allocated peak; nil with fewer than 6 completed repetitions.
    public var peakAllocatedInterval: MedianInterval?
    /// The 95% interval of the median exact net peak; nil with fewer than 6 repetitions that have one.
    public var exactPeakInterval: MedianInterval?
    /// The 95% interval of the median ranking figure; nil with fewer than 6 repetitions that have it.
    public var rankingInterval: MedianInterval?
    /// The largest measurement floor (± of the net peak, see `MeasurementFloor`) of the repetitions, bytes;
    /// nil when none was measured.
    public var peakUncertaintyBytes: Int?
    /// The same for the exact peak; nil when sampled only or not measured.
    public var exactPeakUncertaintyBytes: Int?

    /// Reduces the completed repetitions `ok` (at least one) of a strategy that ran `caseCount` cases.
    init(strategy: String, ok: [CaseMeasurements], caseCount: Int, ranking: Figure) {
        func med(_ values: [Double]) -> Double { Statistics.median(values) ?? 0 }
        let net = ok.map { Double($0.peakAllocatedNetBytes) }
        let ranked = ok.compactMap { ranking.value(in: $0) }
        let phases = ok.first?.phases.map(\.name) ?? []
        self.strategy = strategy
        okCount = ok.count
        failedCount = caseCount - ok.count
        rankingMedian = Statistics.median(ranked)
        rankingMin = ranked.min()
        rankingMax = ranked.max()
        rankingSpreadPercent = Statistics.spreadPercent(ranked)
        rankingInterval = MedianInterval(ranked)
        medianPeakAllocatedNetBytes = med(net)
        minPeakAllocatedNetBytes = net.min() ?? 0
        maxPeakAllocatedNetBytes = net.max() ?? 0
        spreadPercent = Statistics.spreadPercent(net)
        peakAllocatedInterval = MedianInterval(net)
        exactPeakInterval = MedianInterval(ok.compactMap(\.exactPeakNetBytes).map(Double.init))
        medianPeakResidentBytes = med(ok.map { Double($0.peak.residentBytes) })
        medianPeakRSSBytes = med(ok.map { Double($0.peakRSSBytes) })
        medianResidueBytes = med(ok.compactMap { $0.residueBytes.map(Double.init) })
        medianDurationNanoseconds = med(ok.map { Double($0.durationNanoseconds) })
        phasePeakNetBytes = phases.map { phase in
            PhaseFigure(
                name: phase, bytes: med(ok.compactMap { Figure.phasePeakAllocated(phase).value(in: $0) }),
                uncertaintyBytes: ok.compactMap { m in
                    m.phases.first { $0.name == phase }.flatMap { m.floor?.uncertaintyBytes(of: $0) }
                }.max())
        }
        metrics = (ok.first?.metrics ?? []).map { first in
            Metric(name: first.name, value: med(ok.compactMap { $0.metric(first.name)?.value }), unit: first.unit)
        }
        medianExactPeakNetBytes = Statistics.median(ok.compactMap(\.exactPeakNetBytes).map(Double.init))
        medianSpikeExcessBytes = Statistics.median(ok.compactMap(\.spikeExcessBytes).map(Double.init))
        phaseExactPeakNetBytes = phases.compactMap { phase in
            let values = ok.compactMap { measurements in
                measurements.phases.first { $0.name == phase }.flatMap { measurements.exactPeakNetBytes(of: $0) }
            }
            return values.isEmpty
                ? nil
                : PhaseFigure(
                    name: phase, bytes: med(values.map(Double.init)),
                    uncertaintyBytes: ok.compactMap(\.exactPeakUncertaintyBytes).max())
        }
        peakUncertaintyBytes = ok.compactMap(\.peakUncertaintyBytes).max()
        exactPeakUncertaintyBytes = ok.compactMap(\.exactPeakUncertaintyBytes).max()
    }
}

/// A figure of one phase: its name, a value in bytes and its ± (the measurement floor), when known.
public struct PhaseFigure: Sendable, Hashable {
    public var name: String
    public var bytes: Double
    public var uncertaintyBytes: Int?
    public init(name: String, bytes: Double, uncertaintyBytes: Int? = nil) {
        self.name = name
        self.bytes = bytes
        self.uncertaintyBytes = uncertaintyBytes
    }
}
