import HarnessModel
import Verdicts

/// What a memory expectation says about leaks.
public enum LeakTolerance: String, Sendable, Hashable, Codable {
    /// No tracked object may survive the closure, over 4 or more runs the live heap may not grow per run (the
    /// harness's leak criteria: growth whose 95% lower bound exceeds 16 bytes per run), and, measured in a replica
    /// with the agent built beside the test binary, no block may be left unreachable (the heap graph: a retain
    /// cycle or a lost pointer, tracked or not).
    case none
    /// Leaks are reported in the figures but do not fail the test.
    case allowed
}

/// The limits of one memory expectation, and the findings they give for a set of figures.
///
/// A pure value: `findings(in:)` is what the `expectMemory` functions record as test failures, so a test
/// (or a CI gate over stored figures) can judge figures without running anything.
public struct MemoryExpectation: Sendable, Hashable, Codable {
    /// The peak above the start must stay below this; nil: no limit.
    public var peakLimit: MemorySize?
    /// The residue must stay below this; nil: no limit.
    public var residueLimit: MemorySize?
    /// Whether tracked survivors and growth per run fail the expectation.
    public var leaks: LeakTolerance

    /// An expectation with these limits.
    public init(
        peakBelow peakLimit: MemorySize? = nil, residueBelow residueLimit: MemorySize? = nil,
        leaks: LeakTolerance = .none
    ) {
        self.peakLimit = peakLimit
        self.residueLimit = residueLimit
        self.leaks = leaks
    }

    /// Every way `figures` break this expectation, in a fixed order (peak, residue, survivors, unreachable blocks,
    /// growth); empty when they meet it. Leaks are judged by the one leak judgement (`LeakJudgement`).
    public func findings(in figures: MemoryFigures) -> [MemoryFinding] {
        var findings: [MemoryFinding] = []
        if let limit = peakLimit, figures.peakBytes >= limit.bytes {
            let runs = figures.iterations > 1 ? " over \(figures.iterations) runs" : ""
            findings.append(
                MemoryFinding(
                    kind: .peak,
                    message: "peak \(Units.formatBytes(figures.peakBytes)) above the start\(runs), "
                        + Self.excess(figures.peakBytes, over: limit)
                        + ". The peak is the most the closure had allocated at once; hold less at once (stream or "
                        + "page the work, release what is done early), or raise the limit if the growth is intended."))
        }
        if let limit = residueLimit, figures.residueBytes >= limit.bytes {
            let uncertainty = figures.leaks.residueUncertaintyBytes
            // The live heap's floor when it was measured; in figures without it, the thread caches.
            let source = figures.leaks.liveResidueUncertaintyBytes == nil ? " of thread caches" : ""
            let margin = uncertainty > 0 ? " (± \(Units.formatBytes(uncertainty))\(source))" : ""
            let settle = Units.formatDuration(nanoseconds: figures.settleNanoseconds)
            findings.append(
                MemoryFinding(
                    kind: .residue,
                    message: "residue \(Units.formatBytes(figures.residueBytes))\(margin) after the closure and a "
                        + "\(settle) settle, " + Self.excess(figures.residueBytes, over: limit)
                        + ". The closure left this allocated: a cache, a global, work still queued, or a leak; "
                        + "track the objects it should free with track(_:as:) to see which survive."))
        }
        guard leaks == .none else { return findings }
        // The one leak judgement (Verdicts), as a case of `run` is judged: its typed reasons worded for a test.
        let reasons = LeakJudgement([figures.leakEvidence], expectation: .leakFree).reasons
        var survivors: [(TypeCount, tracked: Int?)] = []
        var unreachable: [MemoryFinding] = []
        var growth: [MemoryFinding] = []
        for reason in reasons {
            switch reason {
            case .survived(let survivor, let tracked): survivors.append((survivor, tracked))
            case .unreachable(let heap):
                unreachable.append(MemoryFinding(kind: .unreachable, message: Self.words(heap)))
            case .grows(let phase, let warmup, let fit):
                growth.append(Self.growthFinding(phase: phase, warmupIterations: warmup, fit: fit))
            }
        }
        if !survivors.isEmpty { findings.append(Self.survivorFinding(survivors)) }
        return findings + unreachable + growth
    }

    /// The finding of tracked objects that survived the closure, every type in one.
    static func survivorFinding(_ survivors: [(TypeCount, tracked: Int?)]) -> MemoryFinding {
        let counts = survivors.map { survivor, tracked in
            "\(survivor.count)\(tracked.map { " of \($0)" } ?? "") \(survivor.typeName)"
        }
        let one = survivors.count == 1 && survivors[0].0.count == 1
        return MemoryFinding(
            kind: .survivors,
            message: "leak: \(Self.list(counts)) survived the closure. Something still holds "
                + "\(one ? "it" : "them"): a reference cycle (a stored closure capturing its owner strongly), a cache, "
                + "a global, or work still queued; capture weakly or release before the closure returns, or pass "
                + "leaks: .allowed.")
    }

    /// The finding of a series of the live heap that grows: over the closure's runs, or over the iterations of a
    /// workload's `repeat` step (`expectMemory(of:strategy:)`).
    static func growthFinding(phase: String, warmupIterations: Int, fit: SlopeFit) -> MemoryFinding {
        let runs = phase == MemoryMeter.phase
        let each = runs ? "run" : "iteration of `\(phase)`"
        let all = runs ? "runs" : "iterations of `\(phase)`"
        let warmup = "\(warmupIterations) warm-up \(runs ? "run" : "iteration")"
        let slope =
            "\(Units.formatBytes(fit.slopeBytesPerIteration)) ± \(Units.formatBytes(fit.boundBytesPerIteration))"
        return MemoryFinding(
            kind: .growth,
            message: "leak: the live heap grows \(slope) per \(each) over "
                + "\(fit.iterations) \(all) after \(warmup)\(warmupIterations == 1 ? "" : "s"). Every "
                + "\(runs ? "run" : "iteration") keeps something; track the objects the closure creates with "
                + "track(_:as:) to find which, or pass leaks: .allowed.")
    }

    /// The leak the heap graph found, with the largest group's cycle (or type) named, and what to do.
    static func words(_ heap: HeapEvidence) -> String {
        let new = heap.new
        let blocks = "\(new.blocks) block\(new.blocks == 1 ? "" : "s")"
        let cycles = new.cycles == 0 ? "" : ", in \(new.cycles) cycle\(new.cycles == 1 ? "" : "s")"
        let before =
            heap.before.blocks > 0
            ? " (\(heap.capture?.leakedBlocks ?? 0) after it, \(heap.before.blocks) of them already before it)" : ""
        var message =
            "leak: the closure left \(blocks) that no root reaches\(before): \(Units.formatBytes(new.bytes))\(cycles)"
        if let group = heap.capture?.groups.first {
            let name =
                group.rootType.name.isEmpty
                ? "a block of \(group.rootType.unnamedBlockBytes ?? 0) bytes" : group.rootType.name
            message +=
                "; the largest group is \(group.count > 1 ? "\(group.count) × " : "")"
                + "\(group.kind == .rootCycle ? "a cycle through " : "")\(name) ("
                + "\(group.blocks) block\(group.blocks == 1 ? "" : "s"), \(Units.formatBytes(group.bytes)))"
            if let cycle = group.cycle, !cycle.edges.isEmpty {
                let hops = cycle.edges.map { edge in
                    edge.fieldName.map { "\(edge.from.name).\($0)" } ?? edge.from.name
                }
                message += "; the cycle: " + (hops + [cycle.edges[0].from.name]).joined(separator: " → ")
            }
        }
        return message
            + ". Nothing references these blocks any more, yet they were never freed: break the cycle (a weak or "
            + "unowned back-reference, [weak self] in a stored closure) or free what was lost, or pass leaks: .allowed."
    }

    /// `over the 64 MiB limit by 7.30 MiB (11%)`, or `at the 64 MiB limit (it must stay below)`.
    static func excess(_ value: Int, over limit: MemorySize) -> String {
        let over = value - limit.bytes
        guard over > 0 else { return "at the \(limit) limit (it must stay below)" }
        guard limit.bytes > 0 else { return "over the \(limit) limit by \(Units.formatBytes(over))" }
        let percent = Double(over) / Double(limit.bytes) * 100
        let share = percent < 1 ? "<1%" : "\(Units.fixed(percent, decimals: 0))%"
        return "over the \(limit) limit by \(Units.formatBytes(over)) (\(share))"
    }

    /// `a`, `a and b`, `a, b and c`.
    static func list(_ items: [String]) -> String {
        guard let last = items.last, items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " and " + last
    }
}

/// One way the figures break an expectation, with a message a person can act on.
public struct MemoryFinding: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Which limit was broken.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The peak above the start reached the peak limit.
        case peak
        /// The residue reached the residue limit.
        case residue
        /// Tracked objects survived the closure.
        case survivors
        /// The live heap grew per run.
        case growth
        /// The heap graph holds blocks the closure left unreachable (a retain cycle, a lost pointer).
        case unreachable
    }

    /// Which limit was broken.
    public var kind: Kind
    /// The figure, the limit, by how much, and what to do: what the test failure says.
    public var message: String

    /// A finding of `kind` saying `message`.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
