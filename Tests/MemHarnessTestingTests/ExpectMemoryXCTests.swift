import MemHarnessTesting
import XCTest

#if os(Linux)
    import Glibc
#endif

/// The XCTest front door, end to end: failures arrive through XCTFail at the caller's file and line, and the
/// replica is this binary run with the filter `MemHarnessTestingTests.ExpectMemoryXCTests/<method>`.
final class ExpectMemoryXCTests: XCTestCase {
    private static let mebibyte = 1 << 20

    /// Failures captured instead of recorded while `capturing` is set; every other failure goes through.
    private var captured: [(description: String, file: String, line: Int)] = []
    private var capturing = false

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        guard capturing else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
            return
        }
        captured.append((description, filePath, lineNumber))
    }

    func testAReplicaSeesAKnown8MiBBlock() throws {
        let figures = try expectMemory(peakBelow: .mebibytes(64), residueBelow: .mebibytes(1)) {
            allocateTouchAndFree(8 * Self.mebibyte)
        }
        XCTAssertEqual(figures.isolation, .replica)
        XCTAssertGreaterThanOrEqual(figures.peakBytes, leastPeakBytes(seeing: 8 * Self.mebibyte, in: figures))
        XCTAssertLessThan(figures.peakBytes, 8 * Self.mebibyte * 103 / 100)
    }

    func testATightLimitFailsAtTheCallSiteWithAReadableMessage() throws {
        capturing = true
        let line = #line + 1
        let figures = try expectMemory(peakBelow: .mebibytes(4)) { allocateTouchAndFree(8 * Self.mebibyte) }
        capturing = false
        XCTAssertEqual(captured.count, 1)
        let failure = try XCTUnwrap(captured.first)
        XCTAssertEqual(failure.file, #filePath)
        XCTAssertEqual(failure.line, line)
        let message = try XCTUnwrap(MemoryExpectation(peakBelow: .mebibytes(4)).findings(in: figures).first?.message)
        XCTAssertTrue(failure.description.contains(message), failure.description)
        XCTAssertTrue(message.contains(" MiB above the start, over the 4 MiB limit by 4.0"), message)
    }

    func testAWorkloadsStrategyIsMeasuredAndItsLeakFailsAtTheCallSite() throws {
        let held = try expectMemory(
            of: BufferWorkload(), strategy: "hold", parameters: ["bufferSize": "1MiB", "fill.count": "4"],
            peakBelow: .mebibytes(16), leaks: .none)
        let truth = 4 * AllocatorCost.arrayBytes(of: UInt8.self, count: 1 << 20)
        XCTAssertGreaterThanOrEqual(held.peakBytes, truth - sampledPeakFloorBytes)
        XCTAssertEqual(held.leaks.trackedCount, 4)
        defer { leakedHolders.withLock { $0.removeAll() } }
        capturing = true
        let line = #line + 1
        let leaked = try expectMemory(of: BufferWorkload(), strategy: "leak", parameters: ["fill.count": "2"])
        capturing = false
        XCTAssertEqual(leaked.survivors.map(\.count), [2])
        XCTAssertEqual(captured.map(\.line), [line])
        XCTAssertTrue(captured.first?.description.contains("leak: 2 of 2 BufferHolder survived") == true)
    }

    func testAnAsyncExpectationWithARightLimitPasses() async throws {
        let figures = try await expectMemory(peakBelow: .mebibytes(16), leaks: .none) { context in
            let row = TransientRow()
            context.track(row)
            let block = allocateAndTouch(8 * Self.mebibyte)
            try await Task.sleep(for: .milliseconds(30))
            free(block)
        }
        // The closure may resume on another thread: then only the sampled peak, with its floor, saw the block.
        XCTAssertGreaterThanOrEqual(figures.peakBytes, leastPeakBytes(seeing: 8 * Self.mebibyte, in: figures))
        XCTAssertEqual(figures.leaks.trackedCount, 1)
        XCTAssertEqual(figures.survivors, [])
    }
}
