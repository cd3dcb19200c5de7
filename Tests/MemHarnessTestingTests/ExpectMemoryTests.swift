import HarnessModel
import MemHarnessTesting
import Synchronization
import Testing
import Verdicts

#if os(Linux)
    import Glibc
#endif

/// The Swift Testing front door, end to end: each expectation here runs this test binary again as a replica.
///
/// Serialized: the `.thisProcess` expectations read process-wide figures, and the replicas share 2 cores.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ExpectMemoryTests {
    private static let mebibyte = 1 << 20

    /// Issue comments recorded inside `withKnownIssue`.
    private final class Recorded: Sendable {
        let messages = Mutex<[String]>([])
        func record(_ issue: Issue) -> Bool {
            messages.withLock { $0.append(issue.comments.map(\.rawValue).joined(separator: "\n")) }
            return true
        }
        var all: [String] { messages.withLock { $0 } }
    }

    @Test func aReplicaSeesAKnown8MiBBlockExactly() throws {
        let figures = try expectMemory(peakBelow: .mebibytes(64), residueBelow: .mebibytes(1)) {
            allocateTouchAndFree(8 * Self.mebibyte)
        }
        #expect(figures.isolation == .replica)
        // The thread's own high-water mark sees a block however briefly it lives, and has no floor: the
        // peak (the larger of it and the sampled one) reaches the block's size exactly.
        let threadPeak = try #require(figures.threadPeakBytes)
        #expect(threadPeak >= 8 * Self.mebibyte && threadPeak < 8 * Self.mebibyte + 512 << 10)
        #expect(figures.peakBytes >= threadPeak && figures.peakBytes < 8 * Self.mebibyte * 103 / 100)
        #expect(abs(figures.residueBytes) < 256 << 10)
        #expect(figures.sampling.sampleCount >= 1)
    }

    @Test func aReplicaSamplesABlockHeldAcrossAnAwait() async throws {
        let figures = try await expectMemory(peakBelow: .mebibytes(64)) {
            let block = allocateAndTouch(8 * Self.mebibyte)
            try await Task.sleep(for: .milliseconds(30))
            free(block)
        }
        // Held for 30 ms, the block is in many samples (whichever thread the closure resumed on), less what
        // the rest of the replica freed meanwhile: the sampled peak's floor (8 MiB − 512 B was read once).
        #expect(
            figures.sampledPeakBytes >= 8 * Self.mebibyte - sampledPeakFloorBytes
                && figures.sampledPeakBytes < 8 * Self.mebibyte * 103 / 100,
            "sampled peak \(figures.sampledPeakBytes) B")
        #expect(
            figures.peakBytes >= leastPeakBytes(seeing: 8 * Self.mebibyte, in: figures)
                && figures.peakBytes < 8 * Self.mebibyte * 103 / 100,
            "peak \(figures.peakBytes) B, thread peak \(figures.threadPeakBytes.map(String.init) ?? "none")")
    }

    @Test func anAsyncExpectationOfABriefSpikeOnOneThreadSeesItExactly() async throws {
        // Chosen in async code even for a closure that never suspends: it ends on the thread it started on.
        let figures = try await expectMemory(peakBelow: .mebibytes(64)) { allocateTouchAndFree(8 * Self.mebibyte) }
        let threadPeak = try #require(figures.threadPeakBytes)
        #expect(threadPeak >= 8 * Self.mebibyte && threadPeak < 8 * Self.mebibyte + 512 << 10)
        #expect(figures.peakBytes >= threadPeak && figures.peakBytes < 8 * Self.mebibyte * 103 / 100)
    }

    @Test func aTightLimitFailsWithAReadableMessage() throws {
        let recorded = Recorded()
        var measured: MemoryFigures?
        try withKnownIssue {
            measured = try expectMemory(peakBelow: .mebibytes(4)) { allocateTouchAndFree(8 * Self.mebibyte) }
        } matching: {
            recorded.record($0)
        }
        let figures = try #require(measured)
        let message = try #require(recorded.all.first)
        #expect(recorded.all.count == 1)
        // What was recorded is the verdict's own message for the replica's figures, word for word.
        #expect(recorded.all == MemoryExpectation(peakBelow: .mebibytes(4)).findings(in: figures).map(\.message))
        #expect(message.hasPrefix("peak 8.0"))
        #expect(message.contains(" MiB above the start, over the 4 MiB limit by 4.0"))
        #expect(message.contains(" MiB (10") && message.contains("%). The peak is the most the closure had"))
    }

    @Test func aRightLimitPasses() throws {
        // A test with an issue fails: this one passing is the assertion; the figures say why it should.
        let figures = try expectMemory(peakBelow: .mebibytes(16), residueBelow: .mebibytes(1), leaks: .none) {
            allocateTouchAndFree(8 * Self.mebibyte)
        }
        #expect(
            figures.peakBytes >= leastPeakBytes(seeing: 8 * Self.mebibyte, in: figures)
                && figures.peakBytes < 16 * Self.mebibyte)
    }

    @Test func aLeakedTrackedObjectIsReportedByType() throws {
        defer { keptAlive.withLock { $0.removeAll() } }
        let recorded = Recorded()
        var measured: MemoryFigures?
        try withKnownIssue {
            measured = try expectMemory(leaks: .none) { context in
                let screen = LeakyScreen()
                context.track(screen)
                keptAlive.withLock { $0.append(screen) }
                context.track(TransientRow())
            }
        } matching: {
            recorded.record($0)
        }
        let figures = try #require(measured)
        // The live object is seen as live, the dead one as dead.
        #expect(figures.survivors == [TypeCount(typeName: "LeakyScreen", count: 1)])
        #expect(
            figures.leaks.tracked == [
                TypeCount(typeName: "LeakyScreen", count: 1), TypeCount(typeName: "TransientRow", count: 1),
            ])
        #expect(
            recorded.all == [
                "leak: 1 of 1 LeakyScreen survived the closure. Something still holds it: a reference cycle (a "
                    + "stored closure capturing its owner strongly), a cache, a global, or work still queued; capture "
                    + "weakly or release before the closure returns, or pass leaks: .allowed."
            ])
    }

    @Test func growthPerRunIsFoundOverSeveralRuns() throws {
        defer { keptBlocks.withLock { $0.removeAll() } }
        let quick = MemoryMeasuring(settle: .milliseconds(10))
        let recorded = Recorded()
        var measured: MemoryFigures?
        try withKnownIssue {
            measured = try expectMemory(leaks: .none, iterations: 8, measuring: quick) {
                keptBlocks.withLock { $0.append([UInt8](repeating: 1, count: 64 << 10)) }
            }
        } matching: {
            recorded.record($0)
        }
        let growth = try #require(measured?.growth)
        #expect(growth.slopeBytesPerIteration > 60_000)
        #expect(recorded.all.count == 1)
        #expect(recorded.all.first?.hasPrefix("leak: the live heap grows ") == true)
        // The same closure without the kept block: a flat heap is no leak.
        let flat = try expectMemory(leaks: .none, iterations: 8, measuring: quick) {
            _ = [UInt8](repeating: 1, count: 64 << 10)
        }
        #expect(flat.growth.map { !LeakCriteria.standard.isGrowing($0) } == true)
    }

    /// Another thread of this process allocates 64 MiB while an expectation measures a closure that
    /// allocates 1 MiB. Measured in this process, the figures show the other thread's block (so this test
    /// can fail); measured in a replica, which runs this test alone, they do not.
    @Test func anAllocationOnAnotherThreadStaysOutOfAReplicasFigures() throws {
        // The replica runs this test alone: there is no other test there, so none is made.
        let other = MemoryIsolation.isReplicaProcess ? nil : OtherTest(bytes: 64 * Self.mebibyte)
        defer { other?.stop() }
        let handshake = Handshake(testProcess: MemoryIsolation.isReplicaProcess ? getppid() : getpid())
        defer { if other != nil { handshake.remove() } }
        // While the closure runs, the other thread allocates and holds its block; in a replica the closure
        // asks this process's other thread (through the handshake) and waits until it holds the block.
        let closure = {
            if MemoryIsolation.isReplicaProcess {
                _ = handshake.ask()
            } else {
                other?.allocateAndHold()
            }
            allocateTouchAndFree(Self.mebibyte)
        }

        // Measured here, the figures hold the other thread's block: 64 MiB, less what the process freed meanwhile.
        let polluted = try expectMemory(measuring: MemoryMeasuring(isolation: .thisProcess, settle: .milliseconds(10)))
        {
            closure()
        }
        #expect(other?.free() != false)
        if other != nil {
            #expect(polluted.peakBytes >= 60 * Self.mebibyte)
            #expect(polluted.residueBytes >= 60 * Self.mebibyte)
        }

        // Measured in a replica, they do not, though this process allocates the block while the replica measures.
        let answer = other.map { other in handshake.answer { other.allocateAndHold() } }
        let honest = try expectMemory(peakBelow: .mebibytes(8), residueBelow: .mebibytes(1)) { closure() }
        #expect(answer?.wait() != false, "the other thread allocated while the replica measured")
        #expect(other?.free() != false)
        #expect(honest.isolation == .replica)
        #expect(
            honest.peakBytes >= leastPeakBytes(seeing: Self.mebibyte, in: honest)
                && honest.peakBytes < 4 * Self.mebibyte)
        #expect(abs(honest.residueBytes) < Self.mebibyte)
    }

    @Test func aReplicaThatNeverReachesTheExpectationIsAnErrorThatSaysWhy() throws {
        let error = try #require(throws: MemoryTestingError.self) {
            // A test that takes another path in a fresh process: the replica never gets here.
            if !MemoryIsolation.isReplicaProcess { try expectMemory { allocateTouchAndFree(1024) } }
        }
        guard case .replicaDidNotReach(let test, let site, let occurrence, _, _) = error else {
            Issue.record("expected replicaDidNotReach, got \(error)")
            return
        }
        #expect(test.hasPrefix("MemHarnessTestingTests.ExpectMemoryTests/aReplicaThatNeverReaches"))
        #expect(site.hasPrefix("MemHarnessTestingTests/ExpectMemoryTests.swift:"))
        #expect(occurrence == 0)
        #expect(error.description.contains("without reaching this expectation"))
    }

    @Test func aReplicaPastItsTimeLimitIsKilledWithWhatItStartedAndLeavesNoFiles() throws {
        let foldersBefore = replicaFolders()
        let started = ContinuousClock.now
        let error = try #require(throws: MemoryTestingError.self) {
            try expectMemory(measuring: MemoryMeasuring(timeLimit: .seconds(5))) {
                guard MemoryIsolation.isReplicaProcess else { return }
                // In the replica: start a grandchild, then hang.
                var pid: pid_t = 0
                let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("300"), nil]
                _ = posix_spawn(&pid, "/bin/sleep", nil, nil, argv, environ)
                sleep(300)
            }
        }
        let elapsed = ContinuousClock.now - started
        guard case .replicaTimedOut = error else {
            Issue.record("expected replicaTimedOut, got \(error)")
            return
        }
        #expect(elapsed < .seconds(30))
        #expect(error.description.contains("did not finish the measured closure within 5.00 s and was killed"))
        // SIGKILL to the group reaches the grandchild too; give the kernel a moment to reap it.
        var leftovers = replicaProcesses()
        for _ in 0..<100 where !leftovers.isEmpty {
            usleep(20_000)
            leftovers = replicaProcesses()
        }
        #expect(leftovers.isEmpty)
        #expect(replicaFolders().subtracting(foldersBefore).isEmpty)
    }

    @Test func eachRunOfOneCallSiteIsMeasuredInItsOwnReplica() throws {
        var peaks: [Int] = []
        for megabytes in [2, 6] {
            let figures = try expectMemory(peakBelow: .mebibytes(Double(megabytes) + 1)) {
                allocateTouchAndFree(megabytes * Self.mebibyte)
            }
            // The second run's replica gets the first run's figures back from its first expectation: were
            // they zeros, it would stop here and never reach the second.
            try #require(figures.peakBytes > 0)
            #expect(
                figures.peakBytes >= leastPeakBytes(seeing: megabytes * Self.mebibyte, in: figures)
                    && figures.peakBytes < (megabytes + 1) * Self.mebibyte)
            peaks.append(figures.peakBytes)
        }
        #expect(peaks.count == 2)
    }

    @Test(arguments: [1, 3])
    func aParameterizedTestIsMeasuredPerCase(megabytes: Int) throws {
        let figures = try expectMemory(peakBelow: .mebibytes(Double(megabytes) + 1)) {
            allocateTouchAndFree(megabytes * Self.mebibyte)
        }
        #expect(
            figures.peakBytes >= leastPeakBytes(seeing: megabytes * Self.mebibyte, in: figures)
                && figures.peakBytes < (megabytes + 1) * Self.mebibyte)
    }

    @Test func measuringInThisProcessSeesTheSameBlock() async throws {
        let figures = try await expectMemory(measuring: .thisProcess) {
            let block = allocateAndTouch(8 * Self.mebibyte)
            try await Task.sleep(for: .milliseconds(30))
            free(block)
        }
        #expect(figures.isolation == .thisProcess)
        // In this process the figures are process-wide: the test runner's other threads free a few hundred bytes
        // while the block is live (8 MiB − 512 B was read in 1 run of 5), which is why replicas are the default.
        // Where the closure ended on another thread, only the sampled peak saw the block: within its floor.
        #expect(
            figures.peakBytes >= leastPeakBytes(seeing: 8 * Self.mebibyte, in: figures)
                && figures.peakBytes < 8 * Self.mebibyte * 103 / 100,
            "peak \(figures.peakBytes) B")
    }

    @Test func theClosuresErrorIsRethrownAndItsSideEffectsHappenHere() throws {
        struct Refused: Error {}
        let runs = Mutex(0)
        #expect(throws: Refused.self) {
            try expectMemory(measuring: MemoryMeasuring(settle: .milliseconds(10))) {
                runs.withLock { $0 += 1 }
                throw Refused()
            }
        }
        // Once here (the replica ran it too, in its own process).
        #expect(runs.withLock { $0 } == 1)
    }

    @Test func outsideATestItSaysHowToCallIt() async throws {
        let error = await Task.detached { () -> MemoryTestingError? in
            do {
                try await expectMemory {}
                return nil
            } catch {
                return error as? MemoryTestingError
            }
        }.value
        #expect(error == .notInTest(function: "expectMemory"))
        #expect(error?.description.contains("call expectMemory from a Swift Testing @Test") == true)
    }

    @Test func aClosureMustRunAtLeastOnce() {
        #expect(throws: MemoryTestingError.invalidArgument("iterations is 0; the closure must run at least once")) {
            try expectMemory(iterations: 0) {}
        }
    }
}
