import Foundation
import ProgramCorpus

/// `corpus`: every program of the corpus that is installed, run plainly and under `memharness profile` in every mode
/// (sampled, `--peak exact`, `--attribute`, `--heap-graph`): same exit status, same standard output (where the program's
/// output does not vary), no hang, nothing left in its TMPDIR, no process of it still running; wall times side by
/// side. DIR/agent-corpus.md.
enum CorpusBenchmark {
    static func run(_ environment: BenchEnvironment, programs: [CorpusProgram] = Corpus.all) throws -> String {
        let installed = programs.filter(\.isInstalled)
        let missing = programs.filter { !$0.isInstalled }.map(\.name)
        let scratch = environment.scratch.appendingPathComponent("corpus").path
        var rows: [CorpusRow] = []
        for program in installed {
            let plain = try CorpusRun.run(program, memharness: nil, scratch: scratch)
            var modes: [(mode: CorpusMode, run: CorpusRun, problems: [String])] = []
            for mode in CorpusMode.allCases {
                let profiled = try CorpusRun.run(
                    program, memharness: environment.plainBinary, mode: mode, scratch: scratch)
                modes.append((mode, profiled, CorpusCheck.problems(program, plain: plain, profiled: profiled)))
                FileHandle.standardError.write(
                    Data("\(program.name) \(mode.rawValue): \(modes.last?.problems ?? [])\n".utf8))
            }
            rows.append(CorpusRow(program: program, plain: plain, modes: modes))
        }
        var text = """
            # The agent on real programs

            Each program of the corpus (`Sources/ProgramCorpus/Corpus.swift`) run once plainly and once under
            `memharness profile` in each mode, in a fresh folder with a TMPDIR of its own and a marker in its
            environment that everything it starts inherits. A mode passes when the program's exit status is the plain
            run's, its standard output is byte for byte the plain run's (for programs whose output does not vary: not
            sourcekit-lsp's or docc's, which print times), the run ended within 300 s, its TMPDIR is empty afterwards and
            no process carrying its marker is still alive. Times are wall times of the whole `memharness profile` run
            (with `--attribute` and `--heap-graph` the program runs twice: the measured run and the instrumented one),
            beside the plain run's. `make bench-corpus` writes this file.


            """
        text += CorpusTable.markdown(rows, modes: CorpusMode.allCases)
        if !missing.isEmpty { text += "\nNot installed here, left out: \(missing.joined(separator: ", ")).\n" }
        return text
    }
}
