import FileIO
import HarnessModel

extension ReportFolder {
    /// Renders `record` (`ReportBundle.files`) and writes it as the report folder `directory` in one step,
    /// holding the folder's lock meanwhile as a run does: what `memharness report` and `merge` write.
    /// Throws `.locked` when another run holds the folder; the folder is then untouched.
    public static func render(_ record: RunRecord, to directory: String) throws(ReportError) {
        let lock = try ReportFolderLock(directory)
        try write(try ReportBundle.files(record), to: directory)
        withExtendedLifetime(lock) {}
    }
}
