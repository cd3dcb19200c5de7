import HarnessModel

/// What a program's figures do not say by themselves, worded once for `profile`'s output and `report.md`: that
/// its resident set far exceeded what the allocator handed out, and how a process tree's exact peak was made.
public enum ProgramNotes {
    /// The notes on one run of a program, one sentence each; empty when there is nothing to add.
    public static func notes(_ m: CaseMeasurements) -> [String] {
        guard let program = m.program else { return [] }
        var notes: [String] = []
        if let excess = program.residentBeyondAllocator {
            notes.append(residentWarning(excess))
        }
        if let peaks = program.processPeaks {
            notes.append(treeNote(exact: m.exact, peaks))
        }
        return notes
    }

    /// The warning that the allocator's figures leave most of the resident memory out.
    static func residentWarning(_ excess: ResidentBeyondAllocator) -> String {
        let outside =
            "the program holds memory outside malloc (a runtime's own heap such as a JVM's or Node's, or mmap), which "
            + "the allocated figures do not show; measure that heap with the runtime's own tools"
        guard let anonymous = excess.peakAnonymousBytes, let resident = excess.peakAllocatorResidentBytes else {
            let rss = excess.peakRSSBytes ?? 0
            let ratio = Double(rss) / Double(max(excess.peakAllocatedBytes, 1))
            return "warning: peak RSS \(Units.formatBytes(rss)) is \(Units.fixed(ratio, decimals: 1))x the allocator's "
                + "peak of \(Units.formatBytes(excess.peakAllocatedBytes)): " + outside
        }
        let ratio = Double(anonymous) / Double(max(resident, 1))
        return "warning: the anonymous resident set peaked at \(Units.formatBytes(anonymous)), "
            + "\(Units.fixed(ratio, decimals: 1))x the \(Units.formatBytes(resident)) the allocator kept resident "
            + "(mapped code and files not counted): " + outside
    }

    /// How many processes a note names; the others are summed up in one clause.
    static let processesNamed = 5

    /// How the tree's exact peak was made, or why there is none.
    static func treeNote(exact: ExactPeakValues?, _ peaks: [ProcessExactPeak]) -> String {
        guard let exact else {
            let missing = peaks.filter { $0.exact == nil }.count
            return "no exact peak for the \(peaks.count) processes: \(missing) left no exact count (killed, or ran "
                + "a program the agent cannot load into); exact peaks above each process's start: "
                + processList(peaks)
        }
        return "exact peak \(Units.formatBytes(exact.peakNetBytes)) is the sum of the \(peaks.count) processes' "
            + "exact peaks, an upper bound (their peaks need not coincide); each above its start: "
            + processList(peaks)
    }

    /// The processes without a count first, then the largest peaks, at most `processesNamed`; the rest in a clause.
    static func processList(_ peaks: [ProcessExactPeak]) -> String {
        let ordered = peaks.sorted {
            ($0.exact?.peakNetBytes ?? .max, -$0.processID) > ($1.exact?.peakNetBytes ?? .max, -$1.processID)
        }
        let named = ordered.prefix(processesNamed).map { peak in
            let name = peak.executable.map { " " + ($0.split(separator: "/").last.map(String.init) ?? $0) } ?? ""
            let figure = peak.exact.map { Units.formatBytes($0.peakNetBytes) } ?? "no count"
            return "\(peak.processID)\(name) \(figure)"
        }
        let rest = ordered.dropFirst(processesNamed)
        guard let largest = rest.first?.exact?.peakNetBytes else { return named.joined(separator: ", ") }
        return (named + ["\(rest.count) more of at most \(Units.formatBytes(largest)) each"]).joined(separator: ", ")
    }

    /// The `### Program notes` section of `scenario`: a bullet per note under the case it is about; nil without notes.
    static func section(for scenario: ScenarioRun) -> Section? {
        let noted = (scenario.cases + scenario.instrumentedCases).compactMap { result -> (String, [String])? in
            guard let m = result.measurements else { return nil }
            let notes = notes(m)
            return notes.isEmpty ? nil : (result.label, notes)
        }
        guard !noted.isEmpty else { return nil }
        let items = noted.map { label, notes in
            ListItem("\(code: label):", items: notes.map { ListItem(Phrase(stringLiteral: $0)) })
        }
        return Section(level: 3, heading: "Program notes", blocks: [.list(items)])
    }
}
