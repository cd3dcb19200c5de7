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

    /// The site with its file and binary named without their folders: the same site in another checkout or build
    /// folder (a CI runner's, a worktree's, a release build's), which is how two runs are compared site by site.
    public var portable: AllocationSite {
        func name(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
        return AllocationSite(function: function, file: file.map(name), line: line, module: name(module))
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
