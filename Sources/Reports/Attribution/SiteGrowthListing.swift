import HarnessModel
import Verdicts

/// `memharness compare --against DIR`: per scenario and strategy recorded with `--attribute` in both runs,
/// the allocation sites whose live bytes at the peak grew since the earlier run beyond the noise of byte sampling
/// (`RunToRun.compare` with `NoiseBand.sampling`); per strategy recorded with `--heap-graph` in both, the leak
/// signatures that are new and gone (`LeakSignatureChange`).
public enum SiteGrowthListing {
    /// The least band: a site that grew by less than this share of the peak is not listed, whatever its sampling.
    static let noiseShare = 0.02

    public static func render(_ report: RunReport, since earlier: RunReport, earlierFolder: String, limit: Int = 5)
        -> String
    {
        var lines: [String] = []
        for run in report.scenarios {
            guard let before = earlier.scenarios.first(where: { $0.name == run.name }) else { continue }
            let old = Dictionary(AttributionSection.profiles(before).map { ($0.strategy, $0.profile) }) { first, _ in
                first
            }
            for (strategy, profile) in AttributionSection.profiles(run) {
                guard let base = old[strategy] else { continue }
                let difference = profile.difference(from: base, label: "now", baseLabel: earlierFolder)
                let least = max(Double(max(profile.peakNetBytes, base.peakNetBytes)) * noiseShare, 0)
                let grew = difference.sites.filter { site in
                    let noise = NoiseBand.sampling(
                        before: (Double(site.baseBytes), Double(base.sampleMeanBytes)),
                        after: (Double(site.bytes), Double(profile.sampleMeanBytes)), least: least)
                    let change = RunToRun.compare(
                        before: Double(site.baseBytes), after: Measured(value: Double(site.bytes)), noise: noise)
                    return change.direction == .increased
                }
                .sorted { ($0.deltaBytes, $1.site) > ($1.deltaBytes, $0.site) }
                let head =
                    "\(run.name) / \(strategy): peak \(signed(difference.peakNetDeltaBytes)) since \(earlierFolder)"
                guard !grew.isEmpty else {
                    lines.append(
                        head + "; no allocation site grew beyond the noise of byte sampling (nor by more than "
                            + "\(Int(noiseShare * 100))% of the peak)")
                    continue
                }
                lines.append(head + "; sites that grew:")
                for site in grew.prefix(limit) {
                    lines.append(
                        "  \(signed(site.deltaBytes))  \(site.site.function)  (\(site.site.shortLocation)): "
                            + "\(Units.formatBytes(site.baseBytes)) → \(Units.formatBytes(site.bytes))")
                }
            }
        }
        if lines.isEmpty {
            lines.append("No strategy was recorded with --attribute in both runs: nothing to compare site by site.")
        }
        lines += signatureLines(report, since: earlier, earlierFolder: earlierFolder, limit: limit)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Per strategy whose last heap capture both runs have: its new and gone leak signatures.
    static func signatureLines(_ report: RunReport, since earlier: RunReport, earlierFolder: String, limit: Int)
        -> [String]
    {
        var lines: [String] = []
        for run in report.scenarios {
            guard let before = earlier.scenarios.first(where: { $0.name == run.name }) else { continue }
            for result in run.instrumentedCases {
                guard let now = result.measurements?.heapGraph?.last,
                    let then = before.instrumentedCases.first(where: { $0.strategy == result.strategy })?
                        .measurements?.heapGraph?.last
                else { continue }
                let change = LeakSignatureChange(before: then, after: now)
                let partial = change.isComplete ? "" : " (among the largest groups each run lists)"
                lines.append(
                    "\(run.name) / \(result.strategy): leak signatures since \(earlierFolder)\(partial): "
                        + "\(change.new.count) new, \(change.gone.count) gone, \(change.kept) in both")
                for (word, tallies) in [("new", change.new), ("gone", change.gone)] {
                    for tally in tallies.prefix(limit) {
                        lines.append(
                            "  \(word)  \(tally.signature)  \(HeapGraphSection.typeLabel(tally.rootType)) "
                                + "×\(tally.groups), \(Units.formatBytes(tally.bytes))")
                    }
                    if tallies.count > limit { lines.append("  \(word)  … and \(tallies.count - limit) more") }
                }
            }
        }
        return lines
    }

    static func signed(_ bytes: Int) -> String { Value.signedBytes(Double(bytes)).text }
}
