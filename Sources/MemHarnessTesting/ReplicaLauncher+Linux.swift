import CMemHarnessTesting
import ChildProcesses
import Foundation
import HarnessModel
import Measurement
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Runs this test binary again as a replica and returns what it measured.
///
/// The replica gets the path of its request in its environment, its own process group, stdin from
/// /dev/null and stdout/stderr in a file; the request, the result and the output live in a fresh temporary
/// folder that is removed whatever happens (a test process killed meanwhile cannot remove it: the next one
/// does). It is started by `ChildProcess`, the harness's one spawn, from a thread of its own that lives until
/// the replica is reaped: the replica gets SIGKILL when that thread ends (`PR_SET_PDEATHSIG`, which replica.c
/// checks again at load), so it cannot outlive a test process that is killed. Past the time limit the whole
/// process group is killed; after any end, whatever the replica left running in its group is killed too.
enum ReplicaLauncher {
    /// Measures what `request` asks for in a replica, waiting on a thread of its own (the caller blocks).
    static func measure(_ request: ReplicaRequest, timeLimit: Duration) throws(MemoryTestingError) -> ReplicaResult {
        let launch = try prepare(request, timeLimit: timeLimit)
        defer { launch.removeFolder() }
        let box = Mutex<Result<BoundedWait, MemoryTestingError>?>(nil)
        guard let thread = DedicatedThread({ box.withLock { $0 = launch.run() } }) else {
            throw .replicaNotStarted(executable: launch.executable, errno: EAGAIN)
        }
        thread.join()
        let end = box.withLock { $0 } ?? .failure(.replicaNotStarted(executable: launch.executable, errno: EAGAIN))
        return try launch.result(of: end.get())
    }

    /// Measures what `request` asks for in a replica, without holding a thread of the caller's executor
    /// while the replica runs.
    static func measure(_ request: ReplicaRequest, timeLimit: Duration) async throws(MemoryTestingError)
        -> ReplicaResult
    {
        let launch = try prepare(request, timeLimit: timeLimit)
        defer { launch.removeFolder() }
        let threadBox = Mutex<DedicatedThread?>(nil)
        let end: Result<BoundedWait, MemoryTestingError> = await withCheckedContinuation { continuation in
            let thread = DedicatedThread { continuation.resume(returning: launch.run()) }
            guard let thread else {
                continuation.resume(
                    returning: .failure(.replicaNotStarted(executable: launch.executable, errno: EAGAIN)))
                return
            }
            threadBox.withLock { $0 = thread }
        }
        // The thread has resumed us as its last act: the join returns as soon as it has exited.
        threadBox.withLock { $0 }?.join()
        return try launch.result(of: end.get())
    }

    /// Makes the folder and writes the request into it (`request.resultPath` is set to a file there).
    private static func prepare(_ request: ReplicaRequest, timeLimit: Duration) throws(MemoryTestingError)
        -> ReplicaLaunch
    {
        let test = request.test
        let executable: String
        do {
            executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        } catch {
            throw .replicaNotStarted(executable: "/proc/self/exe", errno: ENOENT)
        }
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        sweptStaleFolders.withLock { swept in
            guard !swept else { return }
            swept = true
            removeStaleFolders(in: base)
        }
        var template = Array("\(base)/\(folderPrefix)\(getpid())-XXXXXX".utf8CString)
        let created: String? = template.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, mkdtemp(base) != nil else { return nil }
            return String(cString: base)
        }
        guard let folder = created else { throw .replicaNotStarted(executable: executable, errno: errno) }
        var request = request
        request.resultPath = "\(folder)/result.json"
        // `leaks: .none` is backed by the heap graph where the agent was built beside this binary (`swift build
        // --product memharness-agent`); without it, by tracked objects and growth only (the figures say why).
        let agent = request.heapGraph ? AgentPreload.locate(besideExecutable: executable) : nil
        request.heapGraph = agent != nil
        let requestPath = "\(folder)/request.json"
        do {
            try JSONEncoder().encode(request).write(to: URL(fileURLWithPath: requestPath))
        } catch {
            try? FileManager.default.removeItem(atPath: folder)  // best effort: the error below is what matters
            throw .replicaFailed(test: test.displayName, reason: "could not write the request: \(error)")
        }
        var environment = ProcessInfo.processInfo.environment
        environment[ReplicaRequest.variable] = requestPath
        environment[MEMHARNESS_TESTING_PARENT_PID_VARIABLE] = String(getpid())
        // A replica's coverage would be merged into (or overwrite) the test run's own profile: it goes to the folder.
        environment["LLVM_PROFILE_FILE"] = "\(folder)/replica-%p.profraw"
        if let agent { environment.merge(agent.variables(heap: true)) { $1 } }
        return ReplicaLaunch(
            test: test, executable: executable, arguments: test.replicaArguments, environment: environment,
            folder: folder, request: request, timeLimitNanoseconds: timeLimit.nanoseconds)
    }
}

extension ReplicaLauncher {
    /// The start of every replica folder's name; the test process's id follows, then a unique suffix.
    static let folderPrefix = "memharness-replica-"

    /// Set once this process has looked for folders left by test processes that were killed.
    private static let sweptStaleFolders = Mutex(false)

    /// Removes the replica folders of test processes that no longer exist: a test process killed while a
    /// replica ran (SIGKILL leaves no chance to clean up) leaves its folder; the next run removes it.
    static func removeStaleFolders(in base: String) {
        // Cleanup only: a base folder that cannot be listed has no folder this process could remove.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        for name in names where name.hasPrefix(folderPrefix) {
            let owner = name.dropFirst(folderPrefix.count).prefix { $0.isNumber }
            guard let pid = pid_t(owner), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: "\(base)/\(name)")  // left for the next run to try again
        }
    }
}

/// One replica: what to run and where its files go.
struct ReplicaLaunch: Sendable {
    var test: TestIdentity
    var executable: String
    var arguments: [String]
    var environment: [String: String]
    var folder: String
    var request: ReplicaRequest
    var timeLimitNanoseconds: Int64

    var outputPath: String { "\(folder)/output.txt" }

    /// Spawns the replica (stdin /dev/null, stdout and stderr into `outputPath`) and waits for it, at most
    /// the time limit (then its process group is killed).
    func run() -> Result<BoundedWait, MemoryTestingError> {
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { return .failure(.replicaNotStarted(executable: executable, errno: errno)) }
        defer { close(output) }  // the replica writes through its own copies
        do {
            let child = try ChildProcess.spawn(
                path: executable, arguments: arguments, environment: environment, stdout: output, stderr: output)
            return .success(try child.wait(upTo: timeLimitNanoseconds))
        } catch {
            switch error {
            case .cannotStart(_, let errno), .cannotWait(_, _, let errno), .cannotMakePipe(let errno):
                return .failure(.replicaNotStarted(executable: executable, errno: errno))
            }
        }
    }

    /// The replica's result, or why there is none.
    func result(of waited: BoundedWait) throws(MemoryTestingError) -> ReplicaResult {
        guard case .ended(let end) = waited else {
            throw .replicaTimedOut(test: test.displayName, limitNanoseconds: timeLimitNanoseconds, output: output())
        }
        switch end.termination {
        case .signaled(let signal):
            throw .replicaCrashed(test: test.displayName, signal: signal, output: output())
        case .exited(let status):
            guard let data = FileManager.default.contents(atPath: request.resultPath) else {
                throw .replicaDidNotReach(
                    test: test.displayName, site: request.site, occurrence: request.occurrence, exitStatus: status,
                    output: output())
            }
            let result: ReplicaResult
            do {
                result = try JSONDecoder().decode(ReplicaResult.self, from: data)
            } catch {
                throw .replicaFailed(test: test.displayName, reason: "its result cannot be read: \(error)")
            }
            if let failure = result.failure { throw .replicaFailed(test: test.displayName, reason: failure) }
            guard result.figures != nil else {
                throw .replicaFailed(test: test.displayName, reason: "its result holds no figures")
            }
            return result
        }
    }

    /// The last 16 KiB of the replica's output.
    func output() -> String {
        guard let handle = FileHandle(forReadingAtPath: outputPath) else { return "" }
        defer { try? handle.close() }  // read-only: closing cannot lose anything
        // A failed seek or read leaves less text: only the failure's explanation is shortened.
        let size = (try? handle.seekToEnd()) ?? 0
        try? handle.seek(toOffset: size > 16_384 ? size - 16_384 : 0)
        return String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    }

    /// Removes the folder and everything in it.
    func removeFolder() {
        // A folder that cannot be removed is removed by the next test run (`removeStaleFolders`).
        try? FileManager.default.removeItem(atPath: folder)
    }
}
