/// Where the memory of one case is: the symbolized live set at its peak, net of its baseline.
///
/// Built by `Attribution` from an agent record; the figures are estimates from byte-sampled
/// allocations (one sample per `sampleMeanBytes` on average, each weighted by that mean), so small
/// stacks are noisy while large ones are close. Frames and stacks are in a deterministic order:
/// frames sorted, stacks by live bytes at the peak (largest first), then by their frames.
public struct AllocationProfile: Sendable, Hashable, Codable {
    /// Every frame the stacks use, sorted.
    public var frames: [AllocationFrame]
    /// Every stack live at the peak or at an iteration mark; `peakLiveBytes` is zero for those live only at iterations.
    public var stacks: [AllocationStack]
    /// The peak signal when the peak snapshot was taken (`stats.allocated` or the exact live count), absolute bytes.
    public var peakLevelBytes: Int
    /// The peak signal at the baseline mark, absolute bytes; zero when the record has no baseline.
    public var baselineLevelBytes: Int
    /// When the peak snapshot was taken, nanoseconds since the origin of the record.
    public var peakTimeNanoseconds: Int64
    /// Mean sampling interval of the stacks, bytes: each sampled block stands for about this many bytes.
    public var sampleMeanBytes: Int
    /// The live sets after each `repeat` iteration, sorted by phase (in order of first mark) and iteration.
    public var iterations: [IterationLiveSet]
    /// Stacks that were deeper than the agent's frame limit (their root side is missing).
    public var truncatedStacks: Int
    /// Where the tracked objects that survived the case were tracked from (leaks with a place).
    public var leakSites: [LeakSite] = []
    /// What to know about how the profile was made (a tool missing, a module without symbols), sorted.
    public var notes: [String] = []

    public init(
        frames: [AllocationFrame], stacks: [AllocationStack], peakLevelBytes: Int, baselineLevelBytes: Int,
        peakTimeNanoseconds: Int64, sampleMeanBytes: Int, iterations: [IterationLiveSet] = [],
        truncatedStacks: Int = 0
    ) {
        self.frames = frames
        self.stacks = stacks
        self.peakLevelBytes = peakLevelBytes
        self.baselineLevelBytes = baselineLevelBytes
        self.peakTimeNanoseconds = peakTimeNanoseconds
        self.sampleMeanBytes = sampleMeanBytes
        self.iterations = iterations
        self.truncatedStacks = truncatedStacks
    }

    /// The peak above the baseline as the peak signal measured it, bytes.
    public var peakNetBytes: Int { peakLevelBytes - baselineLevelBytes }

    /// The sampled estimate of the live bytes at the peak above the baseline, summed over stacks, bytes.
    public var sampledPeakLiveBytes: Int { stacks.reduce(0) { $0 + $1.peakLiveBytes } }

    /// The frames of a stack, root first.
    public func frames(of stack: AllocationStack) -> [AllocationFrame] {
        stack.frameIndices.map { frames[$0] }
    }

    /// The allocation site of a stack: its innermost frame that is not library code, or its
    /// innermost frame when all are library code; nil for an empty stack.
    public func site(of stack: AllocationStack) -> AllocationSite? {
        let stackFrames = frames(of: stack)
        guard let frame = stackFrames.last(where: { !$0.isLibrary }) ?? stackFrames.last else { return nil }
        return AllocationSite(frame)
    }
}

extension AllocationProfile {
    /// Live bytes and blocks at the peak per site, largest first (ties by site), all sites.
    public func sitesAtPeak() -> [SiteRow] {
        var bytes: [AllocationSite: (bytes: Int, count: Int, stacks: Int)] = [:]
        for stack in stacks where stack.peakLiveBytes > 0 {
            guard let site = site(of: stack) else { continue }
            let entry = bytes[site] ?? (0, 0, 0)
            bytes[site] = (entry.bytes + stack.peakLiveBytes, entry.count + stack.peakLiveCount, entry.stacks + 1)
        }
        let total = sampledPeakLiveBytes
        return bytes.map { site, entry in
            SiteRow(
                site: site, liveBytes: entry.bytes, shareOfPeak: total > 0 ? Double(entry.bytes) / Double(total) : 0,
                liveCount: entry.count, stacks: entry.stacks)
        }.sorted { ($0.liveBytes, $1.site) > ($1.liveBytes, $0.site) }
    }

    /// The `limit` largest allocation sites at the peak, with what the rest adds up to.
    public func siteTable(limit: Int = 10) -> SiteTable {
        let all = sitesAtPeak()
        // A negative limit means no rows, not a trap in prefix(_:).
        let rows = Array(all.prefix(max(limit, 0)))
        let rest = all.dropFirst(rows.count)
        return SiteTable(
            rows: rows, totalLiveBytes: sampledPeakLiveBytes, otherBytes: rest.reduce(0) { $0 + $1.liveBytes },
            otherSites: rest.count, peakNetBytes: peakNetBytes)
    }

    /// How this profile differs from `base`, site by site (for "`unbounded-dispatch` +138 MiB, of which 131 MiB from
    /// ..."). Sites are matched as `portable` sites: two checkouts or build folders name a site alike.
    public func difference(from base: AllocationProfile, label: String, baseLabel: String) -> ProfileDifference {
        var pairs: [AllocationSite: (base: Int, bytes: Int)] = [:]
        // Each site as this profile names it (the base's name when only the base has it).
        var names: [AllocationSite: AllocationSite] = [:]
        for row in base.sitesAtPeak() {
            pairs[row.site.portable, default: (0, 0)].base += row.liveBytes
            names[row.site.portable] = row.site
        }
        for row in sitesAtPeak() {
            pairs[row.site.portable, default: (0, 0)].bytes += row.liveBytes
            names[row.site.portable] = row.site
        }
        let sites = pairs.map {
            SiteDifference(site: names[$0.key] ?? $0.key, baseBytes: $0.value.base, bytes: $0.value.bytes)
        }
        .filter { $0.deltaBytes != 0 }
        .sorted { ($0.deltaBytes, $1.site) > ($1.deltaBytes, $0.site) }
        return ProfileDifference(
            label: label, baseLabel: baseLabel, peakNetDeltaBytes: peakNetBytes - base.peakNetBytes,
            sampledDeltaBytes: sampledPeakLiveBytes - base.sampledPeakLiveBytes, sites: sites)
    }

    /// Growth per iteration of each site's live bytes over the `iteration.<phase>.<k>` marks, per phase.
    ///
    /// Sites are fitted with `LeakAnalysis.fitSlope` over the iterations after `warmupIterations`
    /// (an iteration where a site has nothing live counts as zero). Phases with fewer than three
    /// measured iterations give no rows (the fit needs three points). Sorted by phase (in order of
    /// the marks), then slope (largest first), then site.
    public func siteGrowth(warmupIterations: Int = 0) -> [SiteGrowth] {
        var phases: [String] = []
        var byPhase: [String: [IterationLiveSet]] = [:]
        for iteration in iterations {
            if byPhase[iteration.phase] == nil { phases.append(iteration.phase) }
            byPhase[iteration.phase, default: []].append(iteration)
        }
        let stackSites = stacks.map { site(of: $0) }
        var result: [SiteGrowth] = []
        for phase in phases {
            // A warm-up longer than the series leaves nothing to fit, not a negative count.
            let measured = Array(
                (byPhase[phase] ?? []).sorted { $0.iteration < $1.iteration }.dropFirst(max(warmupIterations, 0)))
            guard measured.count >= 3 else { continue }
            var series: [AllocationSite: [Int]] = [:]
            for (index, iteration) in measured.enumerated() {
                for entry in iteration.live where stacks.indices.contains(entry.stack) {
                    guard let site = stackSites[entry.stack] else { continue }
                    series[site, default: Array(repeating: 0, count: measured.count)][index] += entry.liveBytes
                }
            }
            var rows: [SiteGrowth] = []
            for (site, values) in series {
                guard let fit = LeakAnalysis.fitSlope(values.map(Double.init)) else { continue }
                rows.append(SiteGrowth(site: site, phase: phase, liveBytesAfterIteration: values, fit: fit))
            }
            rows.sort { ($0.fit.slopeBytesPerIteration, $1.site) > ($1.fit.slopeBytesPerIteration, $0.site) }
            result += rows
        }
        return result
    }
}
