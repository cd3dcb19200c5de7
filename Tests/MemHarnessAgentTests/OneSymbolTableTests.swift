import Attribution
import Foundation
import HarnessModel
import HeapGraph
import Symbols
import Testing

/// One symbol table: the stacks the agent recorded read the same in an allocation profile (Attribution) and in a heap
/// graph (HeapGraph), frame by frame, file and line included.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct OneSymbolTableTests {
    /// The agent's record of `stacks`, each live at the peak, in `modules`.
    private func record(stacks: [UInt32: [UInt64]], modules: [LoadedModule]) -> String {
        var lines = ["memharness-agent-record 1", "pid 1", "stackSampleBytes 1"]
        for module in modules {
            let fields = [module.loadBias, module.start, module.end].map { "0x" + String($0, radix: 16) }
            lines.append("module " + fields.joined(separator: " ") + " " + module.path)
        }
        for (id, addresses) in stacks.sorted(by: { $0.key < $1.key }) {
            lines.append("stack \(id) " + addresses.map { "0x" + String($0, radix: 16) }.joined(separator: " "))
        }
        lines += ["mark baseline 0 0", "mark peak 10 1048576"]
        lines += stacks.keys.sorted().map { "live \($0) 1024 1" }
        return (lines + ["end", ""]).joined(separator: "\n")
    }

    @Test func anAllocationStackReadsTheSameInAProfileAndInAHeapGraph() throws {
        if let missing = ProbeRunner.missingPieces { Issue.record(Comment(rawValue: missing)) }
        let probe = try ProbeRunner()
        defer { probe.cleanUp() }
        let path = probe.path("leaks.heap")
        // Every block sampled: each has its allocation stack in the capture.
        let outcome = try probe.run(
            ["leaks", path], environment: ["MEMHARNESS_AGENT_HEAP": "1", "MEMHARNESS_AGENT_STACK_SAMPLE_BYTES": "1"])
        try #require(outcome.status == 0 && !outcome.timedOut, "\(outcome.stdout)\(outcome.stderr)")
        let capture = try CaptureFile(path: path)
        var naming = CaptureNaming(capture: capture, memory: .none)
        let heapStacks = Set(try naming.snapshot().stacks)
        let modules = ModuleMap(loadedFiles: capture.modules.map { ($0.path, $0.baseAddress) }).modules
        let profile = try Attribution.profile(
            recordText: record(stacks: capture.stacks, modules: modules), source: "leaks.record",
            symbolizer: .shared
        ).profile
        let profileStacks = Set(
            profile.stacks.map { stack in
                // Innermost first, from the allocation site (the innermost frame that is not library code).
                var frames = Array(profile.frames(of: stack).reversed())
                if let site = frames.firstIndex(where: { !$0.isLibrary }) { frames.removeFirst(site) }
                return frames.map { $0.function + ($0.shortLocation.map { " (\($0))" } ?? "") }
            })
        // The probe sees the fixture's own allocations, named with their file and line ...
        let sites = Set(heapStacks.compactMap(\.first))
        #expect(sites.contains { $0.hasPrefix("probe_lose_blocks (main.c:") }, "\(sites)")
        // ... and every stack reads the same both ways.
        #expect(heapStacks == profileStacks)
    }
}
