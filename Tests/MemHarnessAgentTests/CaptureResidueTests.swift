import ChildProcesses
import Foundation
import Testing

#if os(Linux)
    import Glibc
#endif

/// kill -9 at a random moment of a process that captures its heap again and again leaves nothing behind: the captures
/// go to a file that has no name (`heap-fixtures capture-loop unnamed`, the way a case captures). The control writes
/// them under names, as the harness did (`capture-loop named`), and leaves files behind: the check can see them.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CaptureResidueTests {
    /// One trial: the loop started in a temporary folder of its own, killed 0-150 ms after its first capture began;
    /// what is left in the folder.
    private func killDuringCaptures(named: Bool) throws -> [String] {
        let runner = try ProbeRunner()
        defer { runner.cleanUp() }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MEMHARNESS_AGENT_") }
        environment["LD_PRELOAD"] = "\(ProbeRunner.agentPath) \(ProbeRunner.jemallocPath ?? "")"
        environment["MEMHARNESS_AGENT_HEAP"] = "1"
        environment["TMPDIR"] = runner.directory.path
        let output = try ChildProcess.pipe()
        let child = try ChildProcess.spawn(
            path: SwiftHeapFixtureTests.fixturesPath, arguments: ["capture-loop", named ? "named" : "unnamed"],
            environment: environment, stdout: output.write)
        close(output.write)
        defer { close(output.read) }
        // The first line says the loop has begun; a child that never says it is killed at the deadline below.
        var line: [UInt8] = []
        var byte: UInt8 = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, read(output.read, &byte, 1) == 1, byte != 10 { line.append(byte) }
        #expect(String(decoding: line, as: UTF8.self) == "capturing")
        usleep(UInt32.random(in: 0...150_000))
        child.kill()
        return try FileManager.default.contentsOfDirectory(atPath: runner.directory.path)
    }

    @Test func killNineDuringCapturesLeavesNothing() throws {
        try #require(ProbeRunner.missingPieces == nil, "\(ProbeRunner.missingPieces ?? "")")
        try #require(FileManager.default.isExecutableFile(atPath: SwiftHeapFixtureTests.fixturesPath))
        // The control first: named captures killed midway leave their folder, so an empty folder below means something.
        var controlLeft = 0
        for _ in 0..<5 where try !killDuringCaptures(named: true).isEmpty { controlLeft += 1 }
        #expect(controlLeft > 0, "named captures killed midway left nothing in 5 trials: the check cannot see residue")
        var left: [[String]] = []
        for _ in 0..<30 {
            let names = try killDuringCaptures(named: false)
            if !names.isEmpty { left.append(names) }
        }
        #expect(left.isEmpty, "\(left.count) of 30 kills left \(left.prefix(3))")
    }
}
