import Foundation

/// What a profiled run did differently from the program run plainly: each a problem, none when memharness left the
/// program as it was.
public enum CorpusCheck {
    /// The problems of `profiled` against `plain`, both runs of `program`, in a fixed order.
    public static func problems(_ program: CorpusProgram, plain: CorpusRun, profiled: CorpusRun) -> [String] {
        var problems: [String] = []
        if profiled.hung { problems.append("hung (killed at the time limit)") }
        if !profiled.hung, profiled.status != plain.status {
            problems.append("exit status \(profiled.status), plainly \(plain.status)")
        }
        if program.deterministicOutput, !profiled.hung, profiled.stdout != plain.stdout {
            problems.append("stdout differs (\(profiled.stdout.utf8.count) bytes, plainly \(plain.stdout.utf8.count))")
        }
        if !profiled.residue.isEmpty { problems.append("left in TMPDIR: \(profiled.residue.joined(separator: ", "))") }
        if !profiled.orphans.isEmpty { problems.append("still running: \(profiled.orphans.joined(separator: "; "))") }
        return problems
    }
}

/// One program's row of the corpus table: its plain run and each mode's.
public struct CorpusRow: Sendable {
    public var program: CorpusProgram
    public var plain: CorpusRun
    public var modes: [(mode: CorpusMode, run: CorpusRun, problems: [String])]

    public init(
        program: CorpusProgram, plain: CorpusRun, modes: [(mode: CorpusMode, run: CorpusRun, problems: [String])]
    ) {
        self.program = program
        self.plain = plain
        self.modes = modes
    }

    /// Every problem of the row, each with its mode.
    public var problems: [String] { modes.flatMap { entry in entry.problems.map { "\(entry.mode.rawValue): \($0)" } } }
}

/// The corpus table in Markdown: a row per program, a column per mode with its wall time against the plain run's.
public enum CorpusTable {
    public static func markdown(_ rows: [CorpusRow], modes: [CorpusMode]) -> String {
        var lines = [
            "| Program | Exercises | Plain | " + modes.map { "`\($0.rawValue)`" }.joined(separator: " | ") + " |",
            "|---|---|---:|" + modes.map { _ in "---:|" }.joined(),
        ]
        for row in rows {
            let cells = modes.map { mode -> String in
                guard let entry = row.modes.first(where: { $0.mode == mode }) else { return "–" }
                let ratio = row.plain.seconds > 0 ? entry.run.seconds / row.plain.seconds : 0
                let time = "\(fixed(entry.run.seconds)) s (\(fixed(ratio))x)"
                return entry.problems.isEmpty ? "ok, \(time)" : "**\(entry.problems.count) problem(s)**, \(time)"
            }
            let traits = row.program.traits.map(\.rawValue).joined(separator: ", ")
            lines.append(
                "| \(row.program.name) | \(traits.isEmpty ? "–" : traits) | exit \(row.plain.status), "
                    + "\(fixed(row.plain.seconds)) s | " + cells.joined(separator: " | ") + " |")
        }
        let problems = rows.flatMap { row in row.problems.map { "- \(row.program.name), \($0)" } }
        lines.append("")
        lines.append(
            problems.isEmpty ? "No problems: every mode kept every program's exit status and output." : "Problems:")
        lines.append(contentsOf: problems)
        return lines.joined(separator: "\n") + "\n"
    }

    private static func fixed(_ value: Double) -> String {
        let hundredths = (value * 100).rounded()
        return "\(Int(hundredths) / 100).\(String(format: "%02d", Int(hundredths) % 100))"
    }
}
