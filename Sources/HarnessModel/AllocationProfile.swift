/// One frame of a symbolized allocation stack: a function, where in the source, and which binary.
///
/// Inlined functions are frames of their own (an address inside an inlined call gives the inlined
/// function and then each caller it was inlined into). Names are readable: Swift names demangled
/// (`LiveQueryApp.deliver(_:)`, never `$s...`), C++ names demangled; a frame without symbols is
/// named `module+0xoffset`.
public struct AllocationFrame: Sendable, Hashable, Codable, Comparable {
    /// The function's readable name.
    public var function: String
    /// The source file from the debug information (as compiled, usually an absolute path); nil without DWARF.
    public var file: String?
    /// The line in `file` (1-based); nil when unknown.
    public var line: Int?
    /// Path of the binary (executable or shared library) the code was loaded from.
    public var module: String
    /// True for code that is not the user's but is kept in the stack (the Swift standard library,
    /// Foundation, libc, Dispatch): an allocation site is the innermost frame that is not library code.
    public var isLibrary: Bool

    public init(function: String, file: String? = nil, line: Int? = nil, module: String, isLibrary: Bool = false) {
        self.function = function
        self.file = file
        self.line = line
        self.module = module
        self.isLibrary = isLibrary
    }

    /// The file's last path component and the line: `LiveQueryApp.swift:42`, `LiveQueryApp.swift`, or nil.
    public var shortLocation: String? {
        guard let file else { return nil }
        let name = file.split(separator: "/").last.map(String.init) ?? file
        return line.map { "\(name):\($0)" } ?? name
    }

    /// The module's file name (`libswiftCore.so`).
    public var moduleName: String {
        module.split(separator: "/").last.map(String.init) ?? module
    }

    public static func < (lhs: AllocationFrame, rhs: AllocationFrame) -> Bool {
        (lhs.function, lhs.file ?? "", lhs.line ?? 0, lhs.module, lhs.isLibrary ? 1 : 0)
            < (rhs.function, rhs.file ?? "", rhs.line ?? 0, rhs.module, rhs.isLibrary ? 1 : 0)
    }
}

/// One allocation stack of a profile and what it holds live at the peak.
public struct AllocationStack: Sendable, Hashable, Codable {
    /// Indices into `AllocationProfile.frames`, **root first** (the outermost caller at index 0, the
    /// frame that asked for the memory last). Allocator and harness frames are already folded away.
    public var frameIndices: [Int]
    /// Estimated live bytes of this stack at the peak, net of the baseline (live at the peak minus
    /// live at the baseline, per recorded stack, negatives dropped), size-class bytes.
    public var peakLiveBytes: Int
    /// Estimated live blocks of this stack at the peak, net of the baseline the same way.
    public var peakLiveCount: Int

    public init(frameIndices: [Int], peakLiveBytes: Int, peakLiveCount: Int) {
        self.frameIndices = frameIndices
        self.peakLiveBytes = peakLiveBytes
        self.peakLiveCount = peakLiveCount
    }
}

/// Live bytes and blocks of one stack at one mark.
public struct StackLiveBytes: Sendable, Hashable, Codable {
    /// Index into `AllocationProfile.stacks`.
    public var stack: Int
    /// Estimated live bytes (size-class bytes, absolute: not net of the baseline).
    public var liveBytes: Int
    /// Estimated live blocks.
    public var liveCount: Int

    public init(stack: Int, liveBytes: Int, liveCount: Int) {
        self.stack = stack
        self.liveBytes = liveBytes
        self.liveCount = liveCount
    }
}

/// The live set after one iteration of a `repeat` step (an `iteration.<phase>.<k>` mark).
public struct IterationLiveSet: Sendable, Hashable, Codable {
    /// The phase of the `repeat` step.
    public var phase: String
    /// The iteration's number as the mark gives it.
    public var iteration: Int
    /// When the mark was taken, nanoseconds since the origin of the record.
    public var timeNanoseconds: Int64
    /// The peak signal when the mark was taken, absolute bytes.
    public var levelBytes: Int
    /// Live bytes per stack, absolute (not net of the baseline), sorted by stack index; stacks with nothing live are
    /// left out.
    public var live: [StackLiveBytes]

    public init(phase: String, iteration: Int, timeNanoseconds: Int64, levelBytes: Int, live: [StackLiveBytes]) {
        self.phase = phase
        self.iteration = iteration
        self.timeNanoseconds = timeNanoseconds
        self.levelBytes = levelBytes
        self.live = live
    }
}

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

/// Where allocations come from: one function at one line.
public struct AllocationSite: Sendable, Hashable, Codable, Comparable {
    /// The function's readable name.
    public var function: String
    /// Source file, nil without debug information.
    public var file: String?
    /// Line in `file`, nil when unknown.
    public var line: Int?
    /// Path of the binary.
    public var module: String

    public init(function: String, file: String? = nil, line: Int? = nil, module: String) {
        self.function = function
        self.file = file
        self.line = line
        self.module = module
    }

    public init(_ frame: AllocationFrame) {
        self.init(function: frame.function, file: frame.file, line: frame.line, module: frame.module)
    }

    /// `LiveQueryApp.swift:42`, the module's file name when there is no source file.
    public var shortLocation: String {
        AllocationFrame(function: function, file: file, line: line, module: module).shortLocation
            ?? (module.split(separator: "/").last.map(String.init) ?? module)
    }

    public static func < (lhs: AllocationSite, rhs: AllocationSite) -> Bool {
        (lhs.function, lhs.file ?? "", lhs.line ?? 0, lhs.module) < (
            rhs.function, rhs.file ?? "", rhs.line ?? 0, rhs.module
        )
    }
}

/// One row of a site table: what one site holds live at the peak.
public struct SiteRow: Sendable, Hashable, Codable {
    /// Where the bytes were allocated.
    public var site: AllocationSite
    /// Estimated live bytes at the peak above the baseline from this site, bytes.
    public var liveBytes: Int
    /// `liveBytes` over the sampled live bytes of the whole profile (0...1; the rows of a full table sum to 1).
    public var shareOfPeak: Double
    /// Estimated live blocks at the peak above the baseline from this site.
    public var liveCount: Int
    /// Distinct stacks that end in this site.
    public var stacks: Int

    public init(site: AllocationSite, liveBytes: Int, shareOfPeak: Double, liveCount: Int, stacks: Int) {
        self.site = site
        self.liveBytes = liveBytes
        self.shareOfPeak = shareOfPeak
        self.liveCount = liveCount
        self.stacks = stacks
    }
}

/// The top allocation sites of a profile at its peak.
public struct SiteTable: Sendable, Hashable, Codable {
    /// The largest sites, largest first (ties by site), at most the limit asked for.
    public var rows: [SiteRow]
    /// Sampled live bytes at the peak above the baseline, all sites, bytes.
    public var totalLiveBytes: Int
    /// Bytes of the sites left out by the limit.
    public var otherBytes: Int
    /// Number of sites left out by the limit.
    public var otherSites: Int
    /// The peak above the baseline as the peak signal measured it, bytes (for comparison with the sampled total).
    public var peakNetBytes: Int

    public init(rows: [SiteRow], totalLiveBytes: Int, otherBytes: Int, otherSites: Int, peakNetBytes: Int) {
        self.rows = rows
        self.totalLiveBytes = totalLiveBytes
        self.otherBytes = otherBytes
        self.otherSites = otherSites
        self.peakNetBytes = peakNetBytes
    }
}

/// How one site differs between two profiles (two strategies of a scenario).
public struct SiteDifference: Sendable, Hashable, Codable {
    /// Where the bytes were allocated.
    public var site: AllocationSite
    /// Live bytes at the peak above the baseline in the profile compared against, bytes.
    public var baseBytes: Int
    /// Live bytes at the peak above the baseline in the profile being explained, bytes.
    public var bytes: Int
    /// `bytes - baseBytes`.
    public var deltaBytes: Int { bytes - baseBytes }

    public init(site: AllocationSite, baseBytes: Int, bytes: Int) {
        self.site = site
        self.baseBytes = baseBytes
        self.bytes = bytes
    }
}

/// Why one profile's peak is higher (or lower) than another's, site by site.
public struct ProfileDifference: Sendable, Hashable, Codable {
    /// Name of the profile being explained (`unbounded-dispatch`).
    public var label: String
    /// Name of the profile compared against (`signal-next`).
    public var baseLabel: String
    /// Difference of the peaks above baseline as the peak signal measured them, bytes (`label` minus `baseLabel`).
    public var peakNetDeltaBytes: Int
    /// Difference of the sampled live bytes at the peaks, bytes.
    public var sampledDeltaBytes: Int
    /// Every site of either profile whose bytes differ, largest increase first, then largest decrease (ties by site).
    public var sites: [SiteDifference]

    public init(
        label: String, baseLabel: String, peakNetDeltaBytes: Int, sampledDeltaBytes: Int, sites: [SiteDifference]
    ) {
        self.label = label
        self.baseLabel = baseLabel
        self.peakNetDeltaBytes = peakNetDeltaBytes
        self.sampledDeltaBytes = sampledDeltaBytes
        self.sites = sites
    }
}

/// How much one site's live bytes grow per iteration of a `repeat` step.
public struct SiteGrowth: Sendable, Hashable, Codable {
    /// Where the bytes were allocated.
    public var site: AllocationSite
    /// The phase of the `repeat` step.
    public var phase: String
    /// Live bytes from this site after each measured iteration (warm-up left out), absolute bytes.
    public var liveBytesAfterIteration: [Int]
    /// Least-squares line through `liveBytesAfterIteration` (`LeakAnalysis.fitSlope`).
    public var fit: SlopeFit

    public init(site: AllocationSite, phase: String, liveBytesAfterIteration: [Int], fit: SlopeFit) {
        self.site = site
        self.phase = phase
        self.liveBytesAfterIteration = liveBytesAfterIteration
        self.fit = fit
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
    /// ...").
    public func difference(from base: AllocationProfile, label: String, baseLabel: String) -> ProfileDifference {
        var pairs: [AllocationSite: (base: Int, bytes: Int)] = [:]
        for row in base.sitesAtPeak() { pairs[row.site, default: (0, 0)].base += row.liveBytes }
        for row in sitesAtPeak() { pairs[row.site, default: (0, 0)].bytes += row.liveBytes }
        let sites = pairs.map { SiteDifference(site: $0.key, baseBytes: $0.value.base, bytes: $0.value.bytes) }
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

/// Surviving tracked objects of one type tracked from one place, with that place's frames.
public struct LeakSite: Sendable, Hashable, Codable {
    public var typeName: String
    public var count: Int
    /// The stack of the `track` call, root first, folded like allocation stacks.
    public var frames: [AllocationFrame]

    public init(typeName: String, count: Int, frames: [AllocationFrame]) {
        self.typeName = typeName
        self.count = count
        self.frames = frames
    }

    /// Where the objects were made: the innermost frame that is not library code.
    public var site: AllocationSite? {
        (frames.last(where: { !$0.isLibrary }) ?? frames.last).map(AllocationSite.init)
    }
}
