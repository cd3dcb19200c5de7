// heap-fixtures: Swift objects leaked and kept in known ways, for the heap graph's tests.
//
//   heap-fixtures <fixture> [--retained-by TYPE]...
//
//   heap-fixtures at-exit (exit | return)
//   heap-fixtures capture-loop (unnamed | named)
//   heap-fixtures million
//
// Runs with the agent preloaded and tracking the heap (LD_PRELOAD="libmemharness-agent.so libjemalloc.so.2",
// MEMHARNESS_AGENT_HEAP=1). Each fixture builds its objects, drops every reference the fixture holds, captures
// the heap ("after teardown"), analyses it and prints the capture's summary as JSON on stdout. The known answer
// of each fixture is in its comment; Tests/MemHarnessAgentTests/SwiftHeapFixtureTests.swift holds them to it.
// `at-exit` leaks just before the process ends (see `leakJustBeforeExit`), for the agent's capture at exit
// (MEMHARNESS_AGENT_HEAP_AT_EXIT), by calling exit(0) or by returning from main. `capture-loop` captures a heap of
// 100,000 objects again and again until killed, as a case does (`unnamed`: appended to a file with no name), or as
// the harness once did (`named`: files under TMPDIR/memharness-heap-<pid>-<n>/, removed at the end), printing
// `capturing` once the first capture has begun.
import CSystem
import Foundation
import HarnessModel
import HeapGraph
import Measurement
import OpenCombine
import WorkloadKit

// A cycle of three classes: 3 leaked blocks, one cycle.
final class Ring1 { var next: Ring2? }
final class Ring2 { var next: Ring3? }
final class Ring3 { var next: Ring1? }

// A closure stored on self that captures self: the object and its closure context, one cycle.
final class Screen {
    var taps = 0
    var onTap: (() -> Void)?
    func bind() { onTap = { self.taps += 1 } }
}

// A strong delegate back-reference: 2 blocks, one cycle.
final class Owner { var helper: Helper? }
final class Helper { var delegate: Owner? }

// Weak and unowned back-references: no leak.
final class WeakParent { var child: WeakChild? }
final class WeakChild { weak var parent: WeakParent? }
final class UnownedParent { var child: UnownedChild? }
final class UnownedChild {
    unowned let parent: UnownedParent
    init(parent: UnownedParent) { self.parent = parent }
}

// A leaked cycle that a live object refers to weakly: the weak reference never keeps it, so the cycle (and the
// side table its object got for the weak reference) is leaked: 3 blocks.
final class Observer { weak var watched: Watched? }
final class Watched { var partner: Partner? }
final class Partner { var back: Watched? }

// An object kept only by a global: no leak, and its retaining path names the global.
final class Registry {
    nonisolated(unsafe) static var shared: Registry?
    var entries: [Int] = [1, 2, 3]
}

// A cycle through an actor: 2 blocks, one cycle.
actor Account {
    let auditor: Auditor
    init(auditor: Auditor) { self.auditor = auditor }
}
final class Auditor: @unchecked Sendable { var account: Account? }

// Combine's assign(to:on:) to self, the subscription stored on self: a cycle through the subscription.
final class ViewModel {
    let input = PassthroughSubject<Int, Never>()
    var value = 0
    var subscription: AnyCancellable?
    func bind() { subscription = input.assign(to: \.value, on: self) }
}

// A Task that captures self, stored on self, suspended for good on a continuation self keeps. It runs on an
// executor of one thread that ends once the task has suspended: the thread pool's stacks and job caches keep
// stale words of the jobs they ran, which a conservative scan would take for references.
final class OneThread: TaskExecutor, @unchecked Sendable {
    private let jobs = NSCondition()
    private var queue: [UnownedJob] = []
    private var stopping = false

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.lock()
        queue.append(UnownedJob(job))
        jobs.signal()
        jobs.unlock()
    }

    /// Runs jobs until `stop()` and no job is left.
    func run() {
        while true {
            jobs.lock()
            while queue.isEmpty && !stopping { jobs.wait() }
            if queue.isEmpty {
                jobs.unlock()
                return
            }
            let job = queue.removeFirst()
            // An emptied queue lets its buffer go: the slots it shifted down keep stale copies of the jobs, which a
            // conservative scan of a live buffer would take for references to the tasks.
            if queue.isEmpty { queue = [] }
            jobs.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    func stop() {
        jobs.lock()
        stopping = true
        jobs.signal()
        jobs.unlock()
    }
}

final class Worker: @unchecked Sendable {
    var task: Task<Void, Never>?
    var continuation: CheckedContinuation<Void, Never>?
    func start(on executor: OneThread) {
        task = Task(executorPreference: executor) { await self.waitForever() }
    }
    func waitForever() async {
        await withCheckedContinuation {
            self.continuation = $0
            workerSuspended.signal()
        }
    }
}

/// Each worker's task signals here once it is suspended for good.
let workerSuspended = DispatchSemaphore(value: 0)

/// `count` task cycles on a thread of their own, made by construction, not by timing: every task has run to its
/// suspension and the executor's thread has returned from its loop before this returns (50 ms of sleep was not always
/// enough on a loaded machine: a job still queued, or the thread still running one, held its worker for real).
@inline(never) func leakWorkers(_ count: Int) {
    let executor = OneThread()
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
        executor.run()
        finished.signal()
    }
    thread.start()
    for _ in 0..<count { Worker().start(on: executor) }
    for _ in 0..<count { workerSuspended.wait() }
    executor.stop()
    finished.wait()
    usleep(20_000)  // the thread's own end
}

// Made just before exit (`at-exit`): 10 closure cycles (an ExitScreen and the context of a closure it stores, which
// captures it and a second value: 2 blocks each), 10 task cycles (a Worker whose stored task runs a closure that
// captures it, suspended for good on a continuation the Worker keeps), and one Registry kept only by its static.
final class ExitScreen {
    var taps = 0
    var onTap: (() -> Void)?
    func bind(step: Int) { onTap = { self.taps += step } }
}

@inline(never) func leakJustBeforeExit() {
    for index in 0..<10 { ExitScreen().bind(step: index + 1) }
    leakWorkers(10)
    Registry.shared = Registry()
}

// An array that holds its owner: the document and the storage of its `[Document]`, 2 blocks in one cycle. The runtime
// stores any array of class instances as one of AnyObject; its element names it `[heap_fixtures.Document]`.
final class Document {
    var title = "draft"
    var related: [Document] = []
}

// A dictionary whose values point back at its owner: the gallery, the storage of its `[String : Image]` and the one
// image, 3 blocks in one cycle.
final class Gallery { var images: [String: Image] = [:] }
final class Image {
    let gallery: Gallery
    init(gallery: Gallery) { self.gallery = gallery }
}

// A closure with three captures stored on one of them: the controller, the closure's context (named by the closure)
// and the logger it captures, 3 blocks; the cycle is the controller and the context.
final class Controller {
    var events = 0
    var onEvent: (() -> Void)?
}
final class EventLog { var lines = 0 }
@inline(never) func bindController(_ controller: Controller, log: EventLog, threshold: Int) {
    controller.onEvent = {
        if controller.events > threshold { log.lines += 1 }
    }
}

// Two `var`s captured by an escaping closure stored on the object one of them holds: the counter, the closure's
// context and the two boxes (of an Int and of a Counter?), 4 blocks; the cycle runs counter, context, box, counter.
final class Counter { var increment: (() -> Void)? }
@inline(never) func makeCounter() {
    var count = 0
    var owner: Counter? = Counter()
    owner?.increment = {
        count += 1
        if count < 0 { owner = nil }
    }
}

// An AsyncStream whose termination handler captures the object that keeps the stream: a cycle through the stream's
// storage (AsyncStream<Int>._Storage) and the handler's context. (@unchecked: the fixture never shares it across threads.)
final class Feed: @unchecked Sendable {
    var stream: AsyncStream<Int>?
    var continuation: AsyncStream<Int>.Continuation?
}
@inline(never) func makeFeed() {
    let feed = Feed()
    feed.stream = AsyncStream { continuation in
        feed.continuation = continuation
        continuation.onTermination = { _ in _ = feed.stream }
    }
}

// A reachable cache (`reachable-cache`): `ImageCache.shared` holds 200 images in a dictionary, each with its pixels in
// an array of exactly one 64 KiB size class (a 32-byte header, 65,504 bytes). Nothing leaks; the cache dominates every
// image and its pixels, so it retains the 200 arrays, 13,107,200 bytes, and the images and the dictionary's storage
// (about 0.1% more).
final class CachedImage {
    let pixels: [UInt8]
    init(seed: UInt8) { pixels = Array(repeating: seed, count: 65_504) }
}
final class ImageCache {
    nonisolated(unsafe) static var shared: ImageCache?
    var images: [Int: CachedImage] = [:]
}

nonisolated(unsafe) var keptObserver: Observer?
nonisolated(unsafe) var keptParents: [AnyObject] = []

// Synchronous on purpose: an async caller's frames live in its task's allocator, whose stale slots would keep
// what the fixture dropped (conservatively, as any stack does).
@inline(never) func build(_ fixture: String) -> Bool {
    switch fixture {
    case "empty": break
    case "cycle-of-three":
        let one = Ring1()
        let two = Ring2()
        let three = Ring3()
        one.next = two
        two.next = three
        three.next = one
    case "closure-captures-self": Screen().bind()
    case "strong-delegate":
        let owner = Owner()
        owner.helper = Helper()
        owner.helper?.delegate = owner
    case "weak-parent":
        let parent = WeakParent()
        parent.child = WeakChild()
        parent.child?.parent = parent
        keptParents.append(parent)
    case "unowned-parent":
        let parent = UnownedParent()
        parent.child = UnownedChild(parent: parent)
        keptParents.append(parent)
    case "weak-reference-to-cycle":
        let watched = Watched()
        watched.partner = Partner()
        watched.partner?.back = watched
        keptObserver = Observer()
        keptObserver?.watched = watched
    case "global-only": Registry.shared = Registry()
    case "reachable-cache":
        let cache = ImageCache()
        for index in 0..<200 { cache.images[index] = CachedImage(seed: UInt8(index % 251)) }
        ImageCache.shared = cache
    case "actor-cycle":
        let auditor = Auditor()
        auditor.account = Account(auditor: auditor)
    case "combine-assign": ViewModel().bind()
    case "array-cycle":
        let document = Document()
        document.related = [document]
    case "dictionary-cycle":
        let gallery = Gallery()
        gallery.images["cover"] = Image(gallery: gallery)
    case "closure-cycle": bindController(Controller(), log: EventLog(), threshold: Int.random(in: 1...9))
    case "box-cycle": makeCounter()
    case "stream-cycle": makeFeed()
    case "swift-kinds":
        // Every cycle above made of Swift's own objects, in one process: what `profile` names from outside.
        return ["array-cycle", "dictionary-cycle", "closure-cycle", "box-cycle", "stream-cycle", "task-on-self"]
            .allSatisfy(build)
    case "task-on-self":
        leakWorkers(1)
    default: return false
    }
    return true
}

// The benchmark (`heap-fixtures million`): 1,000,000 live Swift objects (a linked list of nodes, each with a
// 32-byte payload array every 4th node; 1,000 leaked rings of 3 on the side), captured and analysed in this
// process. Prints one `key value` line per figure; Reports/benchmarks/heap-graph.md keeps the results.
final class Node {
    var next: Node?
    var payload: [UInt64]?
    init(next: Node?, payload: [UInt64]?) {
        self.next = next
        self.payload = payload
    }
}

nonisolated(unsafe) var million: Node?

/// Captures until killed (see the file's head); never returns.
func captureLoop(named: Bool) -> Never {
    var head: Node?
    for _ in 0..<100_000 { head = Node(next: head, payload: nil) }
    million = head
    typealias Capture = @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "memharness_agent_capture_heap")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("memharness-heap-\(getpid())-1").path
    let descriptor = named ? -1 : memharness_open_unnamed_file(FileManager.default.temporaryDirectory.path)
    if named { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
    FileHandle.standardOutput.write(Data("capturing\n".utf8))
    for index in 1... {
        if let symbol, named {
            _ = unsafeBitCast(symbol, to: Capture.self)("\(folder)/\(index).heap", "loop")
        } else {
            _ = Agent.writeHeapCapture(appendingTo: descriptor, label: "loop", programFrames: .none)
            ftruncate(descriptor, 0)
        }
    }
    exit(0)
}

func residentBytes(_ field: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
    return (line?.split(separator: " ").dropFirst().first).flatMap { Int($0) }.map { $0 << 10 } ?? -1
}

func runMillion() -> Int32 {
    var head: Node?
    var objects = 0
    while objects < 1_000_000 {
        // Made at run time (a literal array would be one shared static buffer, not a block per node).
        let payload: [UInt64]? = objects % 4 == 0 ? Array(repeating: UInt64(objects), count: 4) : nil
        head = Node(next: head, payload: payload)
        objects += payload == nil ? 1 : 2
    }
    million = head
    for _ in 0..<1000 {
        let one = Ring1()
        let two = Ring2()
        let three = Ring3()
        (one.next, two.next, three.next) = (two, three, one)
    }
    let before = residentBytes("VmRSS")
    let descriptor = memharness_open_unnamed_file(FileManager.default.temporaryDirectory.path)
    guard descriptor >= 0 else { return 70 }
    defer { close(descriptor) }
    // The high-water mark restarts before each phase, so each phase's VmHWM is its own peak (what the phases
    // before it left behind included: the snapshot, during the analysis).
    func restartHighWaterMark() { try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8) }
    restartHighWaterMark()
    // The process's CPU time beside the wall time: on a loaded machine the wall time is mostly waiting for a core.
    var cpu = [processCPUSeconds()]
    let start = ContinuousClock.now
    Agent.clearDeadStack()
    let written = Agent.writeHeapCapture(appendingTo: descriptor, label: "million", programFrames: .callers)
    guard case .written(let extent) = written else { return 70 }
    let captureHighWaterMark = residentBytes("VmHWM")
    restartHighWaterMark()
    cpu.append(processCPUSeconds())
    let captured = ContinuousClock.now
    guard case .snapshot(let snapshot) = Agent.readHeapCapture(descriptor: descriptor, extent: extent, label: "million")
    else { return 70 }
    let namingHighWaterMark = residentBytes("VmHWM")
    restartHighWaterMark()
    cpu.append(processCPUSeconds())
    let named = ContinuousClock.now
    let analysis = HeapAnalysis.analyse(snapshot)
    let analysed = ContinuousClock.now
    cpu.append(processCPUSeconds())
    let analysisHighWaterMark = residentBytes("VmHWM")
    let summary = analysis.summary
    // The dominator tree and the retainers again on their own: their share of the analysis, side by side.
    let retainersStart = ContinuousClock.now
    let retainers = HeapAnalysis.retainers(snapshot)
    let retainersTime = (ContinuousClock.now - retainersStart).seconds
    print("retainers_s \(retainersTime) top_retained_bytes \(retainers.rows.first?.retainedBytes ?? 0)")
    print("blocks \(summary.liveBlocks) live_bytes \(summary.liveBytes) edges \(snapshot.edgeCount)")
    print("leaked_blocks \(summary.leakedBlocks) cycles \(summary.cycleCount)")
    print("capture_s \((captured - start).seconds) naming_s \((named - captured).seconds)")
    print("capture_and_naming_s \((named - start).seconds) analysis_s \((analysed - named).seconds)")
    print(
        "rss_before \(before) hwm_capture \(captureHighWaterMark) hwm_naming \(namingHighWaterMark)",
        "hwm_analysis \(analysisHighWaterMark)")
    print("rss_before \(before) hwm_during \(max(captureHighWaterMark, namingHighWaterMark, analysisHighWaterMark))")
    print("capture_file_bytes \(extent.length)")
    print("cpu_capture_s \(cpu[1] - cpu[0]) cpu_naming_s \(cpu[2] - cpu[1]) cpu_analysis_s \(cpu[3] - cpu[2])")
    return 0
}

/// CPU seconds this process has used (every thread's).
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Builds the fixture on a thread of its own that has ended by the capture: stale slots of the frames that
/// built it are not there to be scanned (a conservative scan takes any word that looks like a pointer).
func buildOnItsOwnThread(_ fixture: String) -> Bool {
    // Safety: `built` is written by the thread before it ends and read after `join`, which orders the two.
    final class Outcome: @unchecked Sendable { var built = false }
    let outcome = Outcome()
    guard let thread = DedicatedThread({ outcome.built = build(fixture) }) else { return false }
    thread.join()
    return outcome.built
}

/// One fixture: built, captured after teardown (this thread's frames from the capture call up are roots: the dead
/// stack below is zeroed first), analysed, printed.
@inline(never) func runFixture(_ fixture: String, targets: [HeapPathTarget]) -> Int32 {
    guard buildOnItsOwnThread(fixture) else {
        FileHandle.standardError.write(Data("heap-fixtures: no fixture '\(fixture)'\n".utf8))
        return 64
    }
    Agent.clearDeadStack()
    switch Agent.captureHeap(label: "after teardown", programFrames: .callers) {
    case .snapshot(let snapshot):
        let analysis = HeapAnalysis.analyse(snapshot, options: HeapAnalysisOptions(targets: targets))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let json = try? encoder.encode(analysis.summary) else { return 70 }
        FileHandle.standardOutput.write(json)
        FileHandle.standardOutput.write(Data("\n".utf8))
        return 0
    case .failure(let failure):
        FileHandle.standardError.write(Data("heap-fixtures: \(failure)\n".utf8))
        return 70
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
var targets: [HeapPathTarget] = []
for (index, argument) in arguments.enumerated() where argument == "--retained-by" && index + 1 < arguments.count {
    targets.append(.type(named: arguments[index + 1], reason: .requestedType))
}
switch arguments.first {
case nil:
    FileHandle.standardError.write(
        Data("usage: heap-fixtures <fixture> [--retained-by TYPE]... | at-exit (exit | return) | million\n".utf8))
    exit(64)
case "million":
    exit(runMillion())
case "capture-loop":
    captureLoop(named: arguments.dropFirst().first == "named")
case "at-exit":
    leakJustBeforeExit()
    // exit(0) here, or main returns (then no frame of the program is left on this thread at exit).
    if arguments.dropFirst().first == "exit" { exit(0) }
case let fixture?:
    exit(runFixture(fixture, targets: targets))
}
// The naming above walked the fixture's objects in frames now dead, and the agent's exit handlers (a capture at exit,
// under `profile --heap-graph`) run in those same slots without clearing them: cleared, as before the capture above.
Agent.clearDeadStack()
