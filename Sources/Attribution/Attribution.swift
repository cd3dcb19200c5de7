import HarnessModel
import Symbols

/// A profile with what the caller should know about how it was made.
public struct AttributedProfile: Sendable, Hashable, Codable {
    /// The symbolized, folded live set at the peak.
    public var profile: AllocationProfile
    /// Tools missing or failing, modules without symbols, marks that could not be read; sorted.
    public var diagnostics: [SymbolDiagnostic]

    public init(profile: AllocationProfile, diagnostics: [SymbolDiagnostic]) {
        self.profile = profile
        self.diagnostics = diagnostics
    }
}

/// Where the memory is: agent record -> symbolized, folded `AllocationProfile`.
public enum Attribution {
    /// The baseline mark's label: what each stack holds at it is subtracted from what it holds at the peak.
    public static let baselineLabel = "baseline"
    /// The last mark with this label is the peak snapshot.
    public static let peakLabel = "peak"
    /// `iteration.<phase>.<k>`: the live set after iteration k of a `repeat` step.
    public static let iterationPrefix = "iteration."

    /// Reads, symbolizes and folds a record: the one call that turns the agent's output into a profile.
    ///
    /// Only the stacks live at the peak or at an iteration mark are symbolized.
    public static func profile(
        recordText: String, source: String, symbolizer: Symbolizer,
        folder: StackFolder = StackFolder()
    ) throws(AttributionError) -> AttributedProfile {
        let record = try AgentRecord.parse(recordText, source: source)
        return try profile(record, source: source, symbolizer: symbolizer, folder: folder)
    }

    /// Symbolizes and folds a parsed record into a profile.
    public static func profile(
        _ record: AgentRecord, source: String, symbolizer: Symbolizer,
        folder: StackFolder = StackFolder()
    ) throws(AttributionError) -> AttributedProfile {
        let peak = try peakMark(record, source: source)
        let used = Set(([peak] + iterationMarks(record).map(\.mark)).flatMap { $0.live.map(\.stackID) })
        let addresses = record.stacks.filter { used.contains($0.id) }.flatMap(\.returnAddresses)
        let (frames, diagnostics) = symbolizer.symbolize(returnAddresses: addresses, modules: ModuleMap(record.modules))
        let profile = try build(record, source: source, frames: frames, folder: folder)
        return AttributedProfile(
            profile: profile,
            diagnostics: diagnostics.sorted { ($0.module ?? "", $0.message) < ($1.module ?? "", $1.message) })
    }

    /// Builds the profile from a record and the frames of its return addresses (innermost first per
    /// address, as `Symbolizer.symbolize` gives them); pure, so tests can feed made-up frames.
    ///
    /// Live bytes at the peak are net of the baseline per recorded stack (peak minus baseline,
    /// negatives dropped: a stack that freed more than it allocated since the baseline holds none
    /// of the peak), then summed over the recorded stacks that fold to the same frames.
    public static func build(
        _ record: AgentRecord, source: String, frames: [UInt64: [SymbolizedFrame]],
        folder: StackFolder = StackFolder()
    ) throws(AttributionError) -> AllocationProfile {
        let peak = try peakMark(record, source: source)
        let baseline = record.mark(baselineLabel)
        let iterations = iterationMarks(record)
        let peakLive = liveByStack(peak)
        let iterationLive = iterations.map { liveByStack($0.mark) }
        let used = Set(peakLive.keys).union(iterationLive.flatMap(\.keys))

        let folded = fold(
            record, used: used, frames: frames, folder: folder, peakLive: peakLive,
            baselineLive: liveByStack(baseline))
        let (sortedFrames, stacks, positionOfFolded) = ordered(folded.stacks)
        let positionOfStackID = folded.indexOfStackID.compactMapValues { positionOfFolded[$0] }
        // In the order of `iterationMarks`.
        let iterationSets = zip(iterations, iterationLive).map { iteration, live in
            liveSet(iteration, live: live, positionOfStackID: positionOfStackID)
        }

        return AllocationProfile(
            frames: sortedFrames, stacks: stacks, peakLevelBytes: peak.levelBytes,
            baselineLevelBytes: baseline?.levelBytes ?? 0, peakTimeNanoseconds: peak.timeNanoseconds,
            sampleMeanBytes: record.stackSampleBytes, iterations: iterationSets, truncatedStacks: folded.truncated)
    }

    private typealias LiveSum = (bytes: Int, count: Int)

    /// Stacks that fold to the same frames, as one: frames root first, live bytes and blocks at the peak.
    private struct FoldedStack {
        var frames: [AllocationFrame]
        var bytes: Int
        var count: Int
    }

    /// Live bytes and blocks per stack id at a mark (none without the mark).
    private static func liveByStack(_ mark: AgentRecord.Mark?) -> [Int: LiveSum] {
        var result: [Int: LiveSum] = [:]
        for live in mark?.live ?? [] {
            let entry = result[live.stackID] ?? (0, 0)
            result[live.stackID] = (entry.bytes + live.liveBytes, entry.count + live.liveCount)
        }
        return result
    }

    /// Folds every used stack, in record order: stacks that fold to the same frames become one.
    /// Also says which folded stack each recorded one became, and how many were truncated.
    private static func fold(
        _ record: AgentRecord, used: Set<Int>, frames: [UInt64: [SymbolizedFrame]], folder: StackFolder,
        peakLive: [Int: LiveSum], baselineLive: [Int: LiveSum]
    ) -> (stacks: [FoldedStack], indexOfStackID: [Int: Int], truncated: Int) {
        var indexOfFrames: [[AllocationFrame]: Int] = [:]
        var folded: [FoldedStack] = []
        var indexOfStackID: [Int: Int] = [:]
        var truncated = 0
        for stack in record.stacks where used.contains(stack.id) {
            let innermostFirst = stack.returnAddresses.flatMap { address in
                frames[address] ?? [SymbolizedFrame(function: "0x" + String(address, radix: 16), module: "[unknown]")]
            }
            let rootFirst = folder.fold(Array(innermostFirst.reversed()))
            let index: Int
            if let existing = indexOfFrames[rootFirst] {
                index = existing
            } else {
                index = folded.count
                indexOfFrames[rootFirst] = index
                folded.append(FoldedStack(frames: rootFirst, bytes: 0, count: 0))
            }
            indexOfStackID[stack.id] = index
            if stack.isTruncated { truncated += 1 }
            let atPeak = peakLive[stack.id] ?? (0, 0)
            let atBaseline = baselineLive[stack.id] ?? (0, 0)
            let netBytes = atPeak.bytes - atBaseline.bytes
            // Negative nets are dropped (see `build`); the count follows its bytes.
            if netBytes > 0 {
                folded[index].bytes += netBytes
                folded[index].count += max(atPeak.count - atBaseline.count, 0)
            }
        }
        return (folded, indexOfStackID, truncated)
    }

    /// The profile's frames and stacks in a deterministic order: frames sorted; stacks by peak bytes,
    /// largest first, then by frames. Also the position of each folded stack in that order.
    private static func ordered(_ folded: [FoldedStack]) -> (
        frames: [AllocationFrame], stacks: [AllocationStack], positionOfFolded: [Int: Int]
    ) {
        let sortedFrames = Set(folded.flatMap(\.frames)).sorted()
        let frameIndex = Dictionary(uniqueKeysWithValues: sortedFrames.enumerated().map { ($0.element, $0.offset) })
        let order = folded.indices.sorted { left, right in
            if folded[left].bytes != folded[right].bytes { return folded[left].bytes > folded[right].bytes }
            return folded[left].frames.lexicographicallyPrecedes(folded[right].frames)
        }
        var positionOfFolded: [Int: Int] = [:]
        for (position, old) in order.enumerated() { positionOfFolded[old] = position }
        let stacks = order.map { old in
            AllocationStack(
                frameIndices: folded[old].frames.compactMap { frameIndex[$0] },
                peakLiveBytes: folded[old].bytes, peakLiveCount: folded[old].count)
        }
        return (sortedFrames, stacks, positionOfFolded)
    }

    /// An iteration mark's live set by profile stack: recorded stacks that fold together are summed,
    /// stacks holding nothing are left out.
    private static func liveSet(
        _ iteration: (phase: String, number: Int, mark: AgentRecord.Mark), live: [Int: LiveSum],
        positionOfStackID: [Int: Int]
    ) -> IterationLiveSet {
        var byStack: [Int: LiveSum] = [:]
        for (id, entry) in live {
            guard let index = positionOfStackID[id] else { continue }
            let sum = byStack[index] ?? (0, 0)
            byStack[index] = (sum.bytes + entry.bytes, sum.count + entry.count)
        }
        let entries = byStack.filter { $0.value.bytes > 0 }.sorted { $0.key < $1.key }
            .map { StackLiveBytes(stack: $0.key, liveBytes: $0.value.bytes, liveCount: $0.value.count) }
        return IterationLiveSet(
            phase: iteration.phase, iteration: iteration.number, timeNanoseconds: iteration.mark.timeNanoseconds,
            levelBytes: iteration.mark.levelBytes, live: entries)
    }

    /// The `iteration.<phase>.<k>` marks with their phase and number, last of each label; other labels are left out.
    static func iterationMarks(_ record: AgentRecord) -> [(phase: String, number: Int, mark: AgentRecord.Mark)] {
        var latest: [String: AgentRecord.Mark] = [:]
        for mark in record.marks where mark.label.hasPrefix(iterationPrefix) { latest[mark.label] = mark }
        let parsed: [(phase: String, number: Int, mark: AgentRecord.Mark)] = latest.compactMap { label, mark in
            let rest = label.dropFirst(iterationPrefix.count)
            // The phase may contain dots; the number is after the last one.
            guard let dot = rest.lastIndex(of: "."), let number = Int(rest[rest.index(after: dot)...]),
                dot > rest.startIndex
            else {
                return nil
            }
            return (String(rest[..<dot]), number, mark)
        }
        // Phases in the order they ran (their first mark's time), iterations by number.
        var firstTime: [String: Int64] = [:]
        for entry in parsed { firstTime[entry.phase] = min(firstTime[entry.phase] ?? .max, entry.mark.timeNanoseconds) }
        return parsed.sorted {
            (firstTime[$0.phase] ?? 0, $0.phase, $0.number) < (firstTime[$1.phase] ?? 0, $1.phase, $1.number)
        }
    }

    private static func peakMark(_ record: AgentRecord, source: String) throws(AttributionError) -> AgentRecord.Mark {
        guard let peak = record.mark(peakLabel) else {
            var labels: [String] = []
            for mark in record.marks where !labels.contains(mark.label) { labels.append(mark.label) }
            throw .missingMark(source: source, label: peakLabel, available: labels)
        }
        return peak
    }
}
