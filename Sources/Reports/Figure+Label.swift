import HarnessModel

extension Figure {
    /// The figure in words, for the report's readings and tables: `peak allocated`, `final database size`.
    public var label: String {
        switch self {
        case .peakAllocated: return "peak allocated"
        case .peakActive: return "peak active"
        case .peakResident: return "peak resident"
        case .peakMapped: return "peak mapped"
        case .peakRetained: return "peak retained"
        case .peakMetadata: return "peak metadata"
        case .peakRSS: return "peak RSS"
        case .residue: return "residue"
        case .duration: return "duration"
        case .phasePeakAllocated(let phase): return "peak allocated in `\(phase)`"
        case .metric(let name): return "`\(name)`"
        case .leakedObjects: return "leaked objects"
        case .growthPerIteration: return "growth per iteration"
        case .exactPeak: return "exact peak"
        case .leakedBlocks: return "leaked blocks"
        case .leakedBytes: return "leaked bytes"
        case .leakedCycles: return "leaked cycles"
        }
    }
}
