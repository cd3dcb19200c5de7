import Foundation
import HarnessModel
import Measurement
import WorkloadKit

/// Runs one case to its outcome: in a child process (`ProcessCaseLauncher`), or in this process
/// (`InProcessCaseLauncher`, for tests).
public protocol CaseLaunching: Sendable {
    /// Runs `spec`; never throws: a case that cannot run is a `notMeasured` outcome, and the run goes on.
    func launch(_ spec: CaseSpec) -> CaseOutcome

    /// Why cases that need the agent (exact peaks, allocation stacks, external programs) cannot run with
    /// this launcher; nil when they can.
    var agentProblem: String? { get }

    /// True when every case runs in a process of its own, so several may run at once (`--jobs`).
    var runsCasesInTheirOwnProcess: Bool { get }
}

extension CaseLaunching {
    public var runsCasesInTheirOwnProcess: Bool { false }
}

/// Runs cases in this process, one after another: no isolation between cases (their heaps mix), so
/// only for tests and tools that run one case; a memory-limit stop waits for the case to end.
public struct InProcessCaseLauncher: CaseLaunching {
    public let catalog: WorkloadCatalog
    /// The folder cases get scratch folders in (each removed after its case).
    public let scratchRoot: String

    public init(catalog: WorkloadCatalog, scratchRoot: String = FileManager.default.temporaryDirectory.path) {
        self.catalog = catalog
        self.scratchRoot = scratchRoot
    }

    public var agentProblem: String? {
        Agent.isCounting
            ? nil
            : "this process does not count allocations (start it with \(Agent.libraryName) preloaded; "
                + "\(Agent.buildHint))"
    }

    public func launch(_ spec: CaseSpec) -> CaseOutcome {
        guard spec.program == nil, !spec.isInstrumented else {
            return .notMeasured(
                reason:
                    "external programs, allocation stacks and heap graphs need a case process (the process launcher)")
        }
        let scratch = "\(scratchRoot)/memharness-scratch-\(UUID().uuidString)"
        do {
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        } catch {
            return .notMeasured(reason: "could not make a scratch folder \(scratch): \(error.localizedDescription)")
        }
        defer { ScratchFolder.remove(scratch) }
        do {
            return try CaseExecutor(catalog: catalog).run(spec, in: CaseEnvironment(scratchDirectory: scratch))
        } catch {
            return .notMeasured(reason: error.description)
        }
    }
}

/// Removing what a case left behind.
enum ScratchFolder {
    /// Removes `path` and everything in it. A folder that cannot be removed is left for the system's
    /// temporary-file cleaner: the run's figures are already taken, and failing the run would lose them.
    static func remove(_ path: String) {
        // Ignored on purpose: see above.
        try? FileManager.default.removeItem(atPath: path)
    }
}
