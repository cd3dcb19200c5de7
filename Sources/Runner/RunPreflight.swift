import FileIO
import Foundation
import HarnessModel

#if os(Linux)
    import Glibc
#endif

/// Checks of what a run writes and compares with, made before the first case: a report folder that
/// cannot be written, an output file in a place that cannot take one, or a baseline for other
/// scenarios would otherwise be found only after every case has run.
public enum RunPreflight {
    /// Why the report folder `directory` cannot be written, as a usage error; nil when it can.
    ///
    /// The folder must be one a report may replace (`ReportFolder.checkReplaceable`: new, empty or a
    /// report folder), and its parent (or the nearest ancestor that exists, where the missing folders
    /// would be created) a folder this process can create files in: the staging folder and the lock go
    /// there. That is tried with a probe file, removed at once, because permission bits do not tell
    /// (root, read-only mounts, /proc).
    public static func reportFolderProblem(_ directory: String) -> String? {
        var status = stat()
        // A path through a file (ENOTDIR) or one that does not exist yet is judged by what is above it.
        if lstat(directory, &status) == 0 || (errno != ENOENT && errno != ENOTDIR) {
            do {
                try ReportFolder.checkReplaceable(directory)
            } catch {
                return error.description
            }
        }
        let target = URL(fileURLWithPath: directory).standardizedFileURL.path
        return creatableProblem(at: URL(fileURLWithPath: target).deletingLastPathComponent().path, for: directory)
    }

    /// Why the file `path` (a JUnit or JSON output, a baseline to save) cannot be written, as a usage
    /// error; nil when it can. `option` names it in the message (`--junit`).
    public static func outputFileProblem(_ path: String, option: String) -> String? {
        let target = URL(fileURLWithPath: path).standardizedFileURL.path
        var status = stat()
        if stat(target, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            return "\(option) \(path) is a folder; expected a file name"
        }
        return creatableProblem(at: URL(fileURLWithPath: target).deletingLastPathComponent().path, for: path)
    }

    /// Why the file `path` may not go into the report folder `folder`: a report folder holds only what a run
    /// writes, and a run refuses to replace one holding anything else. nil when `path` is outside it.
    public static func fileInsideFolderProblem(_ path: String, option: String, folder: String) -> String? {
        let file = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        let inside = URL(fileURLWithPath: folder).standardizedFileURL.resolvingSymlinksInPath().path
        guard file.hasPrefix(inside + "/") else { return nil }
        let beside = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        return "\(option) \(path) is inside the report folder \(folder), which holds only what a run writes (a later "
            + "run would refuse to replace it); write it beside the folder, e.g. \(option) \(beside)-since.html"
    }

    /// Why a baseline cannot be compared with a run of `scenarios`: it holds figures for none of them
    /// (the wrong file, or one saved before the scenarios were renamed), so the comparison would check
    /// nothing and pass. A baseline covering some of them is fine (a subset, a shard).
    public static func baselineProblem(_ reference: BaselineReference, scenarios: [String]) -> String? {
        let covered = Set(reference.baseline.cases.keys.compactMap { $0.split(separator: "/").first.map(String.init) })
        guard !scenarios.isEmpty, covered.isDisjoint(with: scenarios) else { return nil }
        let held = covered.sorted()
        return "\(reference.file) holds no figures for \(scenarios.count == 1 ? "the scenario" : "any scenario") of "
            + "this run (\(scenarios.prefix(5).joined(separator: ", "))\(scenarios.count > 5 ? ", ..." : "")); "
            + (held.isEmpty
                ? "it is empty"
                : "it covers \(held.prefix(5).joined(separator: ", "))\(held.count > 5 ? ", ..." : "")")
            + "; save one for these with `memharness baseline save`"
    }

    /// Why nothing can be created at `folder` (which may not exist yet: then at its nearest existing
    /// ancestor, where the missing folders would be created).
    static func creatableProblem(at folder: String, for what: String) -> String? {
        var existing = folder
        var status = stat()
        while stat(existing, &status) != 0 {
            guard errno == ENOENT || errno == ENOTDIR else {
                return "cannot write \(what): \(existing): \(String(cString: strerror(errno)))"
            }
            let parent = URL(fileURLWithPath: existing).deletingLastPathComponent().path
            guard parent != existing else { break }
            existing = parent
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            return "cannot write \(what): \(existing) is a file, not a folder"
        }
        let probe = "\(existing == "/" ? "" : existing)/.memharness-probe-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return nil }  // a probe of ours left by a killed run: the folder takes files
            return "cannot write \(what): cannot create files in \(existing): \(String(cString: strerror(errno)))"
        }
        close(descriptor)
        unlink(probe)
        return nil
    }
}
