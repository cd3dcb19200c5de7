import FileIO
import HarnessModel
import WorkloadKit

/// The output folder of one run, held from the first case until the report is published: checked and
/// locked (no second run writes it meanwhile), with the run's working folder and its cleanup guard, and the
/// journal of finished cases (`--resume`).
///
/// The edge that publishes the report makes it, hands it to `RunSession.run` (which claims it once the
/// plan is checked, so every input error comes before the folder is touched), calls `reportPublished()`
/// once the folder is in place and `release()` at the end, whatever happened.
public final class RunFolder {
    /// The report folder.
    public let path: String
    private var claim: (lock: ReportFolderLock, directory: RunDirectory)?
    private var journal: RunJournal?

    public init(_ path: String) { self.path = path }

    deinit { release() }

    /// Checks and locks the folder and opens its journal for `cases` (resuming an interrupted run's when
    /// `resume`). The working folder and its guard come before the lock, so the guard does not hold it.
    func claim(cases: [CaseSpec], resume: Bool) throws(RunSessionError) -> RunJournal {
        do throws(ReportError) {
            try ReportFolder.checkReplaceable(path)
            let directory = try RunDirectory(output: path)
            do throws(ReportError) {
                claim = (try ReportFolderLock(path), directory)
            } catch {
                // Locked by another run: leave at once, our own working folder removed.
                directory.finish()
                throw error
            }
        } catch {
            throw .report(error)
        }
        ReportFolder.removeStaleStaging(beside: path)
        do throws(RunError) {
            let opened = try RunJournal(output: path, cases: cases, resume: resume)
            journal = opened
            return opened
        } catch {
            throw .run(error)
        }
    }

    /// The report is in place: the journal of its cases is no longer needed.
    public func reportPublished() {
        journal?.discard()
        journal = nil
    }

    /// Gives the folder back: the working folder removed, the guard dismissed, the lock released. A journal
    /// not discarded stays for `--resume`. Idempotent.
    public func release() {
        guard let claim else { return }
        self.claim = nil
        claim.directory.finish()
        withExtendedLifetime(claim.lock) {}
    }
}
