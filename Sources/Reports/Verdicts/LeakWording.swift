import HarnessModel
import Verdicts

/// The words of leak judgements in report.md and the check table: what each typed reason says.
public enum LeakWording {
    /// One reason, as report.md and a check's message give it: `20 of 20 ProfileScreen survived teardown`,
    /// `screens: live heap grows 80.00 KiB ± 12 B per iteration`, `after teardown, 60 blocks (1.27 MiB) no root
    /// reaches, in 20 cycles; the largest group a cycle through App.ProfileScreen (3 blocks, 65.1 KiB)`.
    public static func reason(_ reason: LeakReason) -> String {
        switch reason {
        case .survived(let survivor, let tracked):
            return "\(survivor.count)\(tracked.map { " of \($0)" } ?? "") \(survivor.typeName) survived teardown"
        case .grows(let phase, _, let fit):
            return "\(phase): live heap grows \(slope(fit)) per iteration"
        case .unreachable(let heap):
            return unreachableReason(heap)
        }
    }

    /// `after teardown, 60 blocks (1.27 MiB) no root reaches, in 20 cycles; the largest group a cycle through
    /// App.ProfileScreen (3 blocks, 65.1 KiB)`.
    static func unreachableReason(_ heap: HeapEvidence) -> String {
        guard let capture = heap.capture else { return unreachable(heap) }
        var text = "\(capture.label), \(unreachable(heap))"
        if let group = capture.groups.first {
            let name =
                group.rootType.name.isEmpty
                ? "a block of \(group.rootType.unnamedBlockBytes ?? 0) bytes" : group.rootType.name
            let count = group.count > 1 ? "\(group.count) × " : ""
            let root = count + (group.kind == .rootCycle ? "a cycle through \(name)" : name)
            text += "; the largest group \(root) (\(blocks(group.blocks)), \(Units.formatBytes(group.bytes)))"
        }
        return text
    }

    /// `, and 3 known leaks suppressed (9 blocks, 288 B)`; empty when nothing was.
    static func suppressed(_ suppressed: SuppressedLeaks) -> String {
        guard suppressed.groups > 0 else { return "" }
        let leaks = "\(suppressed.groups) known leak\(suppressed.groups == 1 ? "" : "s")"
        return ", and \(leaks) suppressed (\(blocks(suppressed.unreachable.blocks)), "
            + "\(Units.formatBytes(suppressed.unreachable.bytes)))"
    }

    /// What no root reaches that no root already missed before, the one wording of that figure in report.md and the
    /// check table: `60 blocks (1.27 MiB) no root reaches, in 20 cycles` (no cycle clause without a cycle), and
    /// `, besides 2 blocks no root reached before` when some were unreachable before the work began.
    public static func unreachable(_ heap: HeapEvidence) -> String {
        let new = heap.new
        let cycles = new.cycles == 0 ? "" : ", in \(new.cycles) cycle\(new.cycles == 1 ? "" : "s")"
        let before = heap.before.blocks == 0 ? "" : ", besides \(blocks(heap.before.blocks)) no root reached before"
        return "\(blocks(new.blocks)) (\(Units.formatBytes(new.bytes))) no root reaches\(cycles)\(before)"
            + suppressed(heap.suppressed)
    }

    /// Why a strategy has no verdict: `nothing tracked, no repeat step, and no heap graph was captured`.
    public static func unassessed(_ why: LeakUnassessed?) -> String {
        var heap = "no heap graph was captured"
        if case .noHeapCapture(let failure?)? = why { heap = "the heap graph has no capture: \(failure.detail)" }
        return "nothing tracked, no repeat step, and \(heap)"
    }

    /// The reasons of a judgement, `; `-separated: why it leaks, or why it could not be assessed.
    public static func reasons(_ judgement: LeakJudgement) -> String {
        judgement.verdict == .notAssessed
            ? unassessed(judgement.unassessed) : judgement.reasons.map(reason).joined(separator: "; ")
    }

    /// A slope and its bound as `80.00 KiB ± 12 B`.
    static func slope(_ fit: SlopeFit) -> String {
        "\(Units.formatBytes(fit.slopeBytesPerIteration)) ± \(Units.formatBytes(fit.boundBytesPerIteration))"
    }

    /// `1 block`, `3 blocks`.
    static func blocks(_ count: Int) -> String { count == 1 ? "1 block" : "\(count) blocks" }
}
