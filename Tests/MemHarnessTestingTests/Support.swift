import Foundation
import MemHarnessTesting
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// Where blocks are published so the optimizer cannot drop an unobserved malloc/free pair.
private let blockSink = Atomic<UInt>(0)

/// Mallocs `bytes` (a size class of its own: 8 MiB is one 8 MiB extent), writes every page, and returns it.
func allocateAndTouch(_ bytes: Int) -> UnsafeMutableRawPointer {
    guard let block = malloc(bytes) else { fatalError("malloc(\(bytes)) failed") }
    memset(block, 1, bytes)
    blockSink.store(UInt(bitPattern: block), ordering: .relaxed)
    return block
}

/// Mallocs `bytes`, writes every page, and frees them.
func allocateTouchAndFree(_ bytes: Int) {
    free(allocateAndTouch(bytes))
}

/// How far below a block's size the figures may see it, bytes, when only the sampled peak saw it.
///
/// `MemoryFigures` states no floor for its sampled peak: it is the live heap above a start that includes
/// blocks the rest of the process (the test runner's threads, an async closure's executor) may free while
/// the measured block is live, so a block of N bytes can read as N minus those. 8 MiB − 512 B was read once
/// in a replica. The thread's own high-water mark has no such floor, so when the figures have it the peak
/// must reach the block's size exactly.
let sampledPeakFloorBytes = 16 << 10

/// The least `figures.peakBytes` may be for a closure that held a block of `bytes`: the block's size when
/// the thread's high-water mark was used, less the sampled peak's floor when only the sampler saw it.
func leastPeakBytes(seeing bytes: Int, in figures: MemoryFigures) -> Int {
    figures.threadPeakBytes == nil ? bytes - sampledPeakFloorBytes : bytes
}

/// Objects a test keeps alive on purpose (a leak made to be found).
let keptAlive = Mutex<[LeakyScreen]>([])

/// Blocks a test keeps on purpose (growth made to be found).
let keptBlocks = Mutex<[[UInt8]]>([])

/// A screen that the tests leak.
final class LeakyScreen: Sendable {}

/// A row that the tests let die.
final class TransientRow: Sendable {}

/// Stands in for another test running beside an expectation: a thread of its own that allocates a large
/// block when told, holds it, and frees it when told. Every wait is bounded.
final class OtherTest: Sendable {
    let bytes: Int
    private let commands = DispatchSemaphore(value: 0)
    private let replies = DispatchSemaphore(value: 0)
    private let state = Mutex(State())

    private struct State {
        var command: Command = .idle
    }

    private enum Command {
        case idle, allocate, free, stop
    }

    init(bytes: Int) {
        self.bytes = bytes
        let thread = Thread { [self] in loop() }
        thread.start()
    }

    /// Allocates the block on the other thread and returns once it is held (false: not within 10 s).
    @discardableResult
    func allocateAndHold() -> Bool { send(.allocate) }

    /// Frees the held block on the other thread and returns once it is freed (false: not within 10 s).
    @discardableResult
    func free() -> Bool { send(.free) }

    /// Ends the thread (freeing anything held); returns once it has ended (false: not within 10 s).
    @discardableResult
    func stop() -> Bool { send(.stop) }

    private func send(_ command: Command) -> Bool {
        state.withLock { $0.command = command }
        commands.signal()
        return replies.wait(timeout: .now() + 10) == .success
    }

    private func loop() {
        var held: UnsafeMutableRawPointer?
        while true {
            // Wakes at least every 100 ms so a lost signal cannot park the thread for good.
            _ = commands.wait(timeout: .now() + .milliseconds(100))
            switch state.withLock({ $0.command }) {
            case .idle:
                continue
            case .allocate:
                if held == nil { held = allocateAndTouch(bytes) }
            case .free:
                held.map { Glibc.free($0) }
                held = nil
            case .stop:
                held.map { Glibc.free($0) }
                replies.signal()
                return
            }
            state.withLock { $0.command = .idle }
            replies.signal()
        }
    }
}

/// Folders the replicas of this test process may have left in the temporary directory. Only this process's
/// (the folder names its pid): the test processes of other checkouts on the machine make and remove theirs
/// meanwhile.
func replicaFolders() -> Set<String> {
    let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
    return Set(names.filter { $0.hasPrefix("memharness-replica-\(getpid())-") })
}

/// Processes that a replica of this process started, or that are one (they carry this process's id in
/// `MEMHARNESS_TESTING_PARENT_PID`).
func replicaProcesses() -> [Int32] {
    let marker = "MEMHARNESS_TESTING_PARENT_PID=\(getpid())"
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(Int32.init).filter { pid in
        guard pid != getpid(), let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else {
            return false
        }
        return environment.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == marker }
    }
}

/// Lets a closure running in a replica ask the test process it replicates to do something, and wait until
/// it has: two files named after the test process's id. Every wait is bounded.
struct Handshake: Sendable {
    let askPath: String
    let donePath: String

    /// The handshake of the test process `pid` (in a replica: its parent).
    init(testProcess pid: pid_t) {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        askPath = "\(base)/memharness-testing-handshake-\(pid)-ask"
        donePath = "\(base)/memharness-testing-handshake-\(pid)-done"
    }

    /// In the replica: asks, and waits at most 10 s for the answer; true when it came.
    func ask() -> Bool {
        _ = FileManager.default.createFile(atPath: askPath, contents: nil)
        return waitFor(donePath, seconds: 10)
    }

    /// In the test process: on a thread of its own, waits (at most 60 s) for the question, runs `action`, and
    /// answers. The returned semaphore is signalled when the thread ends; `answered()` says whether it did.
    func answer(_ action: @escaping @Sendable () -> Void) -> Answer {
        remove()
        let answer = Answer()
        let thread = Thread {
            if waitFor(askPath, seconds: 60) {
                action()
                _ = FileManager.default.createFile(atPath: donePath, contents: nil)
                answer.answered.withLock { $0 = true }
            }
            answer.ended.signal()
        }
        thread.start()
        return answer
    }

    /// Removes both files.
    func remove() {
        try? FileManager.default.removeItem(atPath: askPath)
        try? FileManager.default.removeItem(atPath: donePath)
    }

    private func waitFor(_ path: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !FileManager.default.fileExists(atPath: path) {
            guard Date() < deadline else { return false }
            usleep(1000)
        }
        return true
    }

    /// Whether the test process answered.
    final class Answer: Sendable {
        let answered = Mutex(false)
        let ended = DispatchSemaphore(value: 0)

        /// Waits at most 70 s for the answering thread to end; true when it answered.
        func wait() -> Bool {
            guard ended.wait(timeout: .now() + 70) == .success else { return false }
            return answered.withLock { $0 }
        }
    }
}

/// Two objects that hold each other: once the closure drops them, no root reaches either (a retain cycle).
final class CycleOwner: @unchecked Sendable { var helper: CycleHelper? }
final class CycleHelper: @unchecked Sendable { var owner: CycleOwner? }

/// `count` owner/helper cycles, made on a thread of their own that has ended before the closure returns: no live
/// thread's stack or registers keep a stale word pointing at them (the scan is conservative).
func makeRetainCycles(_ count: Int) {
    let thread = DedicatedThread {
        for _ in 0..<count {
            let owner = CycleOwner()
            owner.helper = CycleHelper()
            owner.helper?.owner = owner
        }
    }
    thread?.join()
}
