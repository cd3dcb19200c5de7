import Foundation
import HarnessModel
import Measurement
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// The case process's half of the runner ↔ case exchange (`ProcessCaseLauncher` is the runner's half): read
/// the spec the runner wrote, run the case in this process, write its outcome, and end with a `CaseExitCode`.
public struct CaseProcess: Sendable {
    /// The case spec (JSON) the runner wrote.
    public var specFile: String
    /// Where the outcome (JSON) goes.
    public var resultFile: String
    /// A scratch folder for the workload's files.
    public var scratchDirectory: String
    /// A file for the sampler's rows, which survive the process; nil: memory only.
    public var sampleFile: String?
    /// Where an attributed case writes the agent's record of allocation stacks.
    public var recordFile: String?
    /// False skips the check that jemalloc is the process allocator (a case under valgrind, which replaces it).
    public var checkAllocator: Bool

    public init(
        specFile: String, resultFile: String, scratchDirectory: String, sampleFile: String? = nil,
        recordFile: String? = nil, checkAllocator: Bool = true
    ) {
        self.specFile = specFile
        self.resultFile = resultFile
        self.scratchDirectory = scratchDirectory
        self.sampleFile = sampleFile
        self.recordFile = recordFile
        self.checkAllocator = checkAllocator
    }

    /// How the case process ends: the exit code (`CaseExitCode`) and the error to show, if any.
    public struct End: Sendable, Hashable {
        public var code: Int32
        public var message: String?

        public init(code: Int32, message: String? = nil) {
            self.code = code
            self.message = message
        }
    }

    /// Runs the case and says how the process should end. A footprint over the memory limit does not return:
    /// on the sampler thread, while the workload still runs, the outcome is written and the process exits at
    /// once with `CaseExitCode.memoryLimit`, as a phone kills an app over its budget. `report` gets the
    /// message when that outcome cannot be written (the process then exits with `harnessFailure`).
    ///
    /// Sets an alarm (`selfTimeLimitSeconds`) that stays set when this returns: the process is about to end.
    public func run(catalog: WorkloadCatalog, report: @escaping @Sendable (String) -> Void) -> End {
        let spec: CaseSpec
        do {
            spec = try JSONDecoder().decode(CaseSpec.self, from: Data(contentsOf: URL(fileURLWithPath: specFile)))
        } catch {
            return End(code: CaseExitCode.harnessFailure, message: "cannot read case spec \(specFile): \(error)")
        }
        // The case enforces its own time limit too, a little after the runner's: should the runner be gone
        // without its death reaching us, the case still ends (SIGALRM's default action ends the process).
        alarm(Self.selfTimeLimitSeconds(for: spec))
        let resultFile = resultFile
        let environment = CaseEnvironment(
            scratchDirectory: scratchDirectory, sampleFile: sampleFile, recordFile: recordFile,
            checkAllocator: checkAllocator,
            onMemoryLimit: { killed in
                let problem = Self.write(killed, to: resultFile)
                if let problem { report(problem) }
                Glibc.exit(problem == nil ? CaseExitCode.memoryLimit : CaseExitCode.harnessFailure)
            })
        do {
            let outcome = try CaseExecutor(catalog: catalog).run(spec, in: environment)
            if let problem = Self.write(outcome, to: resultFile) {
                return End(code: CaseExitCode.harnessFailure, message: problem)
            }
            return End(code: CaseExitCode.done)
        } catch {
            return End(code: CaseExitCode.harnessFailure, message: error.description)
        }
    }

    /// The case's own time limit: the runner's and 30 s more, whole seconds for `alarm`.
    public static func selfTimeLimitSeconds(for spec: CaseSpec) -> UInt32 {
        UInt32(clamping: spec.timeoutNanoseconds / 1_000_000_000 + 30)
    }

    /// Writes `outcome` as JSON to `path`; nil when written, else why not.
    public static func write(_ outcome: CaseOutcome, to path: String) -> String? {
        do {
            try JSONEncoder().encode(outcome).write(to: URL(fileURLWithPath: path))
            return nil
        } catch {
            return "cannot write the result \(path): \(error)"
        }
    }
}
