import Foundation
import ProgramCorpus
import Testing

/// The quick corpus (`Corpus.quick`: a dash pipeline that ends with `_exit`, python3 with threads, `dlopen` and a
/// signal, bash with a trap, a background child and a program ending in `os._exit`) run plainly and under `memharness
/// profile` in every mode: the exit status and the output are the plain run's, nothing hangs, nothing is left in
/// its TMPDIR, no process of it outlives it. `make bench-corpus` runs the whole corpus.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct AgentCorpusTests {
    @Test(arguments: Corpus.quick.map(\.name))
    func theAgentLeavesAProgramAsItWas(name: String) throws {
        let program = try #require(Corpus.quick.first { $0.name == name })
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("corpus-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let plain = try CorpusRun.run(program, memharness: nil, scratch: scratch, timeout: .seconds(60))
        // The probe first: the plain run did its work (it printed, it ended as the script says).
        #expect(!plain.hung && !plain.stdout.isEmpty, "\(plain.stdout) \(plain.stderr)")
        for mode in CorpusMode.allCases {
            let profiled = try CorpusRun.run(
                program, memharness: CommandLineTests.binary, mode: mode, scratch: scratch, timeout: .seconds(120))
            let problems = CorpusCheck.problems(program, plain: plain, profiled: profiled)
            #expect(problems == [], "\(mode.rawValue): \(problems); memharness said: \(profiled.stderr.suffix(800))")
        }
    }
}
