import CSystem
import FileIO
import Foundation
import Synchronization

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// The working folder of one run (its case processes' specs, results, samples and scratch files), and
/// the guard that removes it, the report's staging folder and a stale lock, and kills the process groups of
/// running cases, however the run ends: a clean end removes them itself; SIGKILL or a crash leaves them to
/// the guard process.
final class RunDirectory: Sendable {
    /// The run's folder under the temporary directory.
    let path: String
    private let guardDescriptor: Int32

    /// The folder case processes of the current run work in; the temporary directory outside a run.
    static var current: String {
        currentPath.withLock { $0 } ?? FileManager.default.temporaryDirectory.path
    }
    private static let currentPath = Mutex<String?>(nil)

    /// Makes the run's folder and starts its guard, which also knows `output`'s staging folder and lock.
    /// Call it before taking the output folder's lock, so the guard does not inherit the lock's descriptor.
    init(output: String) throws(ReportError) {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("memharness-run-\(getpid())-\(UUID().uuidString.prefix(8))").path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: path, reason: "cannot make the run's working folder: \(error.localizedDescription)")
        }
        let parent = URL(fileURLWithPath: output).standardizedFileURL.deletingLastPathComponent()
        let trees = [
            path, ReportFolder.stagingPath(for: output),
            parent.appendingPathComponent(ReportFolder.stagingName(of: "index.md")).path,
        ]
        let descriptor = Self.startGuard(trees, lock: ReportFolder.lockPath(for: output))
        guard descriptor >= 0 else {
            try? FileManager.default.removeItem(atPath: path)  // nothing ran in it yet
            throw .unwritable(path: path, reason: "cannot start the cleanup guard: \(String(cString: strerror(errno)))")
        }
        guardDescriptor = descriptor
        Self.currentPath.withLock { $0 = path }
    }

    private static func startGuard(_ trees: [String], lock: String) -> Int32 {
        let strings = trees.map { strdup($0) }
        defer { for pointer in strings { free(pointer) } }
        let pointers = strings.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer { buffer in
            lock.withCString { memharness_cleanup_guard_start(buffer.baseAddress, Int32(buffer.count), $0) }
        }
    }

    /// Removes the folder and dismisses the guard: the run ended and cleaned up after itself.
    func finish() {
        Self.currentPath.withLock { $0 = nil }
        // A folder that cannot be removed is left to the guard: dismissing it only after the removal.
        let removed =
            (try? FileManager.default.removeItem(atPath: path)) != nil || !FileManager.default.fileExists(atPath: path)
        memharness_cleanup_guard_finish(guardDescriptor, removed ? 1 : 0)
    }
}
