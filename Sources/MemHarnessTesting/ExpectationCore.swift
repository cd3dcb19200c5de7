import Foundation
import Measurement
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// The one core behind every `expectMemory` front door (Swift Testing and XCTest, sync and async).
///
/// In a replica it measures the one expectation it was started for and ends the process; everywhere else
/// it measures where `measuring.isolation` says, runs the closure here, and reports each finding through
/// `record`.
struct ExpectationCore {
    var expectation: MemoryExpectation
    var iterations: Int
    var measuring: MemoryMeasuring
    /// The test, as the front door identified it; nil outside a test.
    var test: TestIdentity?
    /// What owns the current run of the test (a task, an XCTestCase), for counting runs of a site.
    var owner: Int?
    var site: String
    /// The front door's name, for messages.
    var function: String
    /// Records one failure at the caller's location.
    var record: (String) -> Void

    /// What an expectation does in this process.
    private enum Plan {
        /// Measure here and answer the parent: this process is the replica asked about this expectation.
        case answer
        /// Run the closure and return these figures without measuring: in a replica, an expectation other
        /// than the one asked about (the parent's figures for it when it ran before the one asked about).
        case replay(MemoryFigures)
        /// Measure as `measuring` says: this expectation's request, with this run of the test's figures so far.
        case measure(ReplicaRequest)
    }

    /// Checks the arguments and the test, counts this run of the site, and decides what to do.
    private func plan() throws(MemoryTestingError) -> Plan {
        guard iterations >= 1 else {
            throw .invalidArgument("iterations is \(iterations); the closure must run at least once")
        }
        guard let test else { throw .notInTest(function: function) }
        let occurrence = TestRunLog.shared.next(test, site: site, owner: owner)
        if let request = ReplicaRequest.current {
            if request.concerns(test, site: site) && request.occurrence == occurrence { return .answer }
            return .replay(
                request.earlierFigures(site: site, occurrence: occurrence) ?? .unmeasured(iterations: iterations))
        }
        return .measure(
            ReplicaRequest(
                test: test, site: site, occurrence: occurrence, resultPath: "",
                earlier: TestRunLog.shared.earlier(test, owner: owner)))
    }

    /// Keeps the figures for the replicas of later expectations in this run of the test.
    private func remember(_ figures: MemoryFigures, _ request: ReplicaRequest) {
        TestRunLog.shared.record(
            figures, test: request.test, site: request.site, occurrence: request.occurrence, owner: owner)
    }

    /// Runs and judges a synchronous closure. `beforeExit` runs in a replica before it answers and ends at once (no
    /// `defer` of the caller's runs then): what the caller made for the closure is removed there.
    func run(_ body: (MemoryContext) throws -> Void, beforeExit: () -> Void = {}) throws -> MemoryFigures {
        switch try plan() {
        case .replay(let figures):
            try runUnmeasured(body)
            return figures
        case .answer:
            let result: ReplicaResult
            do {
                let meter = try MemoryMeter(
                    options: measuring, iterations: iterations, heapGraph: ReplicaRequest.current?.heapGraph ?? false)
                let (figures, error) = try meter.measure(body)
                result = ReplicaResult(figures: figures, closureError: error.map { "\($0)" })
            } catch {
                result = ReplicaResult(failure: error.description)
            }
            beforeExit()
            Self.answerAndExit(result)
        case .measure(let request) where measuring.isolation == .thisProcess:
            try MeterLock.acquire(timeLimit: measuring.timeLimit)
            defer { MeterLock.release() }
            let meter = try MemoryMeter(options: measuring, iterations: iterations, heapGraph: heapGraphHere)
            let (figures, error) = try meter.measure(body)
            if let error { throw error }
            remember(figures, request)
            return judge(figures)
        case .measure(let request):
            // The replica is this binary: when jemalloc does not serve it, say so before starting one.
            _ = try MemoryMeter.verifiedProbe()
            let result = try ReplicaLauncher.measure(withHeapGraph(request), timeLimit: measuring.timeLimit)
            try runUnmeasured(body)
            return judge(result, request)
        }
    }

    /// Runs and judges an async closure, on the caller's executor.
    nonisolated(nonsending) func runAsync(_ body: (MemoryContext) async throws -> Void) async throws -> MemoryFigures {
        switch try plan() {
        case .replay(let figures):
            try await runUnmeasuredAsync(body)
            return figures
        case .answer:
            do {
                let meter = try MemoryMeter(
                    options: measuring, iterations: iterations, heapGraph: ReplicaRequest.current?.heapGraph ?? false)
                let (figures, error) = try await meter.measureAsync(body)
                Self.answerAndExit(ReplicaResult(figures: figures, closureError: error.map { "\($0)" }))
            } catch {
                Self.answerAndExit(ReplicaResult(failure: error.description))
            }
        case .measure(let request) where measuring.isolation == .thisProcess:
            try await MeterLock.acquire(timeLimit: measuring.timeLimit)
            defer { MeterLock.release() }
            let meter = try MemoryMeter(options: measuring, iterations: iterations, heapGraph: heapGraphHere)
            let (figures, error) = try await meter.measureAsync(body)
            if let error { throw error }
            remember(figures, request)
            return judge(figures)
        case .measure(let request):
            _ = try MemoryMeter.verifiedProbe()
            let result = try await ReplicaLauncher.measure(withHeapGraph(request), timeLimit: measuring.timeLimit)
            try await runUnmeasuredAsync(body)
            return judge(result, request)
        }
    }

    /// Runs the closure `iterations` times without measuring (tracking is then a no-op).
    private func runUnmeasured(_ body: (MemoryContext) throws -> Void) throws {
        let context = MemoryContext()
        for run in 1...iterations {
            context.enterRun(run)
            try body(context)
        }
    }

    /// Awaits the closure `iterations` times without measuring.
    private nonisolated(nonsending) func runUnmeasuredAsync(_ body: (MemoryContext) async throws -> Void) async throws {
        let context = MemoryContext()
        for run in 1...iterations {
            context.enterRun(run)
            try await body(context)
        }
    }

    /// `leaks: .none` asks a replica for the heap graph (it gets one where the agent is built beside this binary).
    private func withHeapGraph(_ request: ReplicaRequest) -> ReplicaRequest {
        var request = request
        request.heapGraph = expectation.leaks == .none
        return request
    }

    /// In this process, the heap graph is captured only where the agent already tracks every block.
    private var heapGraphHere: Bool { expectation.leaks == .none && HeapGraphCheck.isAvailable }

    /// Records every finding; returns the figures, saying why `leaks: .none` had no heap graph when it had none.
    private func judge(_ figures: MemoryFigures) -> MemoryFigures {
        var figures = figures
        if expectation.leaks == .none, figures.heapGraph == nil, figures.heapGraphUnavailable == nil {
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
            figures.heapGraphUnavailable =
                figures.isolation == .thisProcess
                ? "measured in this process, which does not run with the agent tracking its blocks"
                : AgentPreload.missingDescription(besideExecutable: executable)
        }
        for finding in expectation.findings(in: figures) { record(finding.message) }
        return figures
    }

    /// Judges a replica's figures, after the closure ran here without throwing.
    private func judge(_ result: ReplicaResult, _ request: ReplicaRequest) -> MemoryFigures {
        guard var figures = result.figures else { return MemoryFigures.unmeasured(iterations: iterations) }
        figures.isolation = .replica
        remember(figures, request)
        if let error = result.closureError {
            record(
                "the closure threw in the replica (\(error)) but not here: the figures are of the runs up to the "
                    + "throw; a closure that behaves differently in a fresh process cannot be measured in a replica")
        }
        return judge(figures)
    }

    /// In a replica: writes the figures where the parent reads them and ends the process at once, so nothing
    /// after the measured expectation runs twice.
    private static func answerAndExit(_ result: ReplicaResult) -> Never {
        var result = result
        let data: Data
        do {
            data = try JSONEncoder().encode(result)
        } catch {
            result = ReplicaResult(failure: "could not encode the figures: \(error)")
            // A failure holds one string and always encodes; empty data would read as "no answer" in the parent.
            data = (try? JSONEncoder().encode(result)) ?? Data()
        }
        if let path = ReplicaRequest.current?.resultPath {
            // A partial file cannot be taken for a result: it is written under another name, then renamed.
            let partial = path + ".partial"
            if FileManager.default.createFile(atPath: partial, contents: data) { rename(partial, path) }
        }
        _exit(0)
    }
}

extension MemoryFigures {
    /// The figures an expectation returns when it did not measure: in a replica, for an expectation other
    /// than the one the replica measures (that replica's figures are the ones that count).
    static func unmeasured(iterations: Int) -> MemoryFigures {
        MemoryFigures(peakBytes: 0, sampledPeakBytes: 0, residueBytes: 0, iterations: iterations, isolation: .replica)
    }
}

extension MemoryIsolation {
    /// True in a replica: a process running this test again so that a memory expectation can measure it
    /// alone. A test can skip work there that must happen once (or that stands in for other tests).
    public static var isReplicaProcess: Bool { ReplicaRequest.current != nil }
}

/// One expectation at a time measures in this process: each one's figures are process-wide.
enum MeterLock {
    private static let busy = Mutex(false)

    private static func tryAcquire() -> Bool {
        busy.withLock { busy in
            guard !busy else { return false }
            busy = true
            return true
        }
    }

    /// Waits for the meter, checking every millisecond, at most `timeLimit`.
    static func acquire(timeLimit: Duration) throws(MemoryTestingError) {
        let deadline = MonotonicClock.nanoseconds() + timeLimit.nanoseconds
        while !tryAcquire() {
            guard MonotonicClock.nanoseconds() < deadline else {
                throw .meterBusy(limitNanoseconds: timeLimit.nanoseconds)
            }
            MonotonicClock.sleep(for: .milliseconds(1))
        }
    }

    /// Waits for the meter without holding a thread, at most `timeLimit`.
    static func acquire(timeLimit: Duration) async throws(MemoryTestingError) {
        let deadline = MonotonicClock.nanoseconds() + timeLimit.nanoseconds
        while !tryAcquire() {
            guard MonotonicClock.nanoseconds() < deadline else {
                throw .meterBusy(limitNanoseconds: timeLimit.nanoseconds)
            }
            do {
                try await Task.sleep(for: .milliseconds(1))
            } catch {
                // Cancelled: the task's sleep returns at once, so sleep the thread instead of spinning until
                // the deadline; the wait stays bounded by it either way.
                MonotonicClock.sleep(for: .milliseconds(1))
            }
        }
    }

    static func release() { busy.withLock { $0 = false } }
}
