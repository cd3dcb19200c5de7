import Foundation
import HarnessModel
import HeapGraph
import Testing

/// The heap capture on C blocks whose fate is known by construction (`agent-probe leaks`), and against valgrind.
///
/// The probe leaks 1,000 B (lost), 2 x 2,000 B (a cycle), and keeps 3,000 B through a tagged pointer in a 4,000 B
/// block a global holds, 5,000 B on the stack and 6,000 B in a callee-saved register of a thread blocked in read(2).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct HeapCaptureTests {
    /// jemalloc's size classes of the fixture's requests.
    private static let sizeClass = [1000: 1024, 2000: 2048, 3000: 3072, 4000: 4096, 5000: 5120, 6000: 6144]

    private func capture() throws -> (HeapSnapshot, HeapCaptureSummary) {
        if let missing = ProbeRunner.missingPieces { Issue.record(Comment(rawValue: missing)) }
        let probe = try ProbeRunner()
        defer { probe.cleanUp() }
        let path = probe.path("leaks.heap")
        let outcome = try probe.run(["leaks", path], environment: ["MEMHARNESS_AGENT_HEAP": "1"])
        try #require(outcome.status == 0 && !outcome.timedOut, "\(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.line("capture") == ["capture", "rc", "0"])
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let file = try data.withUnsafeBytes { bytes in try CaptureFile(bytes: bytes) }
        var naming = CaptureNaming(capture: file, memory: .none)
        let snapshot = try naming.snapshot()
        return (snapshot, HeapAnalysis.analyse(snapshot).summary)
    }

    @Test func theCaptureSeesEveryFixtureBlockThenFindsExactlyTheLeakedOnes() throws {
        let (snapshot, summary) = try capture()
        // The probe can see them: every block the fixture made is in the capture, at its size class.
        let sizes = snapshot.sizes.map { Int($0) }
        for (request, size) in Self.sizeClass {
            let expected = request == 2000 ? 2 : 1
            #expect(sizes.filter { $0 == size }.count >= expected, "no \(request) B block in the capture")
        }
        // Then the answer: the lost block and the two-block cycle, nothing else.
        #expect(summary.leakedBlocks == 3)
        #expect(summary.leakedBytes == 1024 + 2 * 2048)
        #expect(summary.cycleCount == 1)
        let cycles = summary.groups.filter { $0.kind == .rootCycle }
        #expect(cycles.map(\.blocks) == [2])
        #expect(summary.groups.filter { $0.kind == .rootLeak }.map(\.bytes) == [1024])
    }

    @Test func blocksKeptByAStackARegisterAndATaggedPointerAreRootedThere() throws {
        let (snapshot, _) = try capture()
        func roots(ofSize size: Int) -> [HeapRootKind] {
            snapshot.roots.filter { Int(snapshot.sizes[Int($0.block)]) == size }.map(\.kind)
        }
        #expect(roots(ofSize: 5120).contains { if case .threadStack = $0 { return true } else { return false } })
        #if arch(x86_64)
            #expect(
                roots(ofSize: 6144).contains { $0 == .register(threadID: threadID(roots(ofSize: 6144)), name: "r12") })
        #endif
        // The tagged pointer (top bit set) in the global's block is an edge once the spare bits are cleared.
        let holders = snapshot.addresses.indices.filter { snapshot.sizes[$0] == 4096 && isGlobal(snapshot, $0) }
        let reachesTagged = holders.contains { holder in
            (Int(snapshot.edgeStart[holder])..<Int(snapshot.edgeStart[holder + 1])).contains {
                snapshot.sizes[Int(snapshot.edgeTargets[$0])] == 3072
            }
        }
        #expect(reachesTagged)
    }

    @Test func valgrindFindsTheSameLeaksPlusTheTaggedBlockItCannotSeeThrough() throws {
        let (_, summary) = try capture()
        let probe = try ProbeRunner()
        defer { probe.cleanUp() }
        let valgrind = try probe.runTool(
            "/usr/bin/env",
            ["valgrind", "--leak-check=full", "--show-leak-kinds=definite,indirect", ProbeRunner.probePath, "leaks"],
            environment: ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" }, timeout: .seconds(90))
        try #require(valgrind.status == 0, "valgrind: \(valgrind.stderr.suffix(400))")
        func figure(_ kind: String) -> (bytes: Int, blocks: Int)? {
            let line = valgrind.stderr.split(separator: "\n").first { $0.contains("\(kind): ") }
            let words = line?.split(separator: ":").last?.split(separator: " ").map(String.init) ?? []
            guard words.count >= 4, let bytes = Int(words[0].replacingOccurrences(of: ",", with: "")),
                let blocks = Int(words[3])
            else { return nil }
            return (bytes, blocks)
        }
        let definitely = try #require(figure("definitely lost"))
        let indirectly = figure("indirectly lost") ?? (0, 0)
        // valgrind counts requested bytes: 1,000 + 2,000 + 2,000 + 3,000 (the tagged block) in 4 blocks.
        #expect(definitely.blocks + indirectly.blocks == summary.leakedBlocks + 1)
        #expect(definitely.bytes + indirectly.bytes == 1000 + 2000 + 2000 + 3000)
        // Block for block: ours are valgrind's without the one it misreads (3,000 B behind a tagged pointer).
        #expect(summary.leakedBytes == 1024 + 2 * 2048)
    }

    /// The harness's own blocks are roots, and hold only what the harness wrote: two blocks leaked by construction stay
    /// leaked though each one's address filled the memory a block was made in next (a program block's, then a harness
    /// block's; a harness block's, then a program block's). Unzeroed, the harness's block kept a leaked `box of Int`
    /// of a Swift program at its exit (from the naming of an earlier capture).
    @Test func theHarnessBlocksKeepOnlyWhatTheHarnessWrote() throws {
        let probe = try ProbeRunner()
        defer { probe.cleanUp() }
        let path = probe.path("harness-words.heap")
        let outcome = try probe.run(["harness-words", path], environment: ["MEMHARNESS_AGENT_HEAP": "1"])
        try #require(outcome.status == 0 && !outcome.timedOut, "\(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.line("capture") == ["capture", "rc", "0"])
        // The memory was reused both ways (else nothing here is tested).
        let reuse = outcome.line("reuse")
        try #require(reuse == ["reuse", "program-to-harness", "1", "harness-to-program", "1"], "\(outcome.stdout)")
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let file = try data.withUnsafeBytes { bytes in try CaptureFile(bytes: bytes) }
        var naming = CaptureNaming(capture: file, memory: .none)
        let snapshot = try naming.snapshot()
        // The probe sees both blocks, and the program's block made in the harness's memory ...
        let sizes = snapshot.sizes.map { Int($0) }
        #expect(sizes.contains(7168) && sizes.contains(8192) && sizes.contains(2560), "\(sizes)")
        // ... and both are leaked.
        let summary = HeapAnalysis.analyse(snapshot).summary
        let leaked = summary.groups.filter { $0.kind == .rootLeak }.map(\.bytes).sorted()
        #expect(leaked == [7168, 8192], "\(summary.groups)")
    }

    private func threadID(_ kinds: [HeapRootKind]) -> Int {
        for kind in kinds { if case .register(let thread, _) = kind { return thread } }
        return -1
    }

    private func isGlobal(_ snapshot: HeapSnapshot, _ block: Int) -> Bool {
        snapshot.roots.contains { root in
            if case .global = root.kind { return Int(root.block) == block } else { return false }
        }
    }
}
