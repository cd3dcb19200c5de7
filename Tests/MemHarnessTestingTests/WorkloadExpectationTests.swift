import Foundation
import HarnessModel
import MemHarnessTesting
import Synchronization
import Testing
import WorkloadKit

/// Buffers a case holds until teardown (`hold`) or keeps in a global forever (`leak`).
struct BufferWorkload: Workload {
    var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "buffers", summary: "Buffers held by a case, released at teardown or kept in a global.",
            strategies: [
                StrategyDescriptor("hold", "The case holds its buffers until teardown."),
                StrategyDescriptor("leak", "Every buffer's holder is also kept in a global."),
            ],
            parameters: [.bytes("bufferSize", default: 64 << 10, range: 1...(64 << 20), "Bytes of one buffer.")],
            steps: [
                StepDescriptor(
                    "fill", "Makes buffers and holds them.",
                    arguments: [.count("count", default: 16, range: 0...100_000, "Buffers made.")])
            ],
            defaultSteps: ["fill"])
    }

    func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase {
        BufferCase(leaking: strategy == "leak", bufferSize: parameters.bytes("bufferSize"))
    }
}

/// One buffer, tracked: it must die with the case unless the strategy leaks it.
final class BufferHolder: Sendable {
    let bytes: [UInt8]
    init(bytes: Int) { self.bytes = [UInt8](repeating: 7, count: bytes) }
}

/// What the `leak` strategy keeps forever (until the test empties it).
let leakedHolders = Mutex<[BufferHolder]>([])

final class BufferCase: WorkloadCase {
    let leaking: Bool
    let bufferSize: Int
    var holders: [BufferHolder] = []

    init(leaking: Bool, bufferSize: Int) {
        self.leaking = leaking
        self.bufferSize = bufferSize
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        for _ in 0..<step.arguments.count("count") {
            let holder = BufferHolder(bytes: bufferSize)
            context.track(holder, as: "BufferHolder")
            holders.append(holder)
            if leaking { leakedHolders.withLock { $0.append(holder) } }
        }
    }

    func tearDown(context: CaseContext) throws { holders = [] }
}

/// `expectMemory(of:strategy:)`: one strategy of a workload, measured as a case, its tracked objects judged.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct WorkloadExpectationTests {
    /// The case folders `expectMemory(of:)` makes (`memharness-expect-<pid>-<uuid>`) in the temporary folder.
    static func scratchFolders() -> Set<String> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []
        return Set(entries.filter { $0.hasPrefix("memharness-expect-") })
    }

    @Test func aStrategyIsMeasuredWithItsDefaultsOverridesAndTrackedObjects() throws {
        let before = Self.scratchFolders()
        let figures = try expectMemory(
            of: BufferWorkload(), strategy: "hold", parameters: ["bufferSize": "256KiB", "fill.count": "12"],
            peakBelow: .mebibytes(16), residueBelow: .kibibytes(256), leaks: .none)
        // The probe sees the live buffers: twelve arrays of 256 KiB, each in its size class, at the top.
        let held = 12 * AllocatorCost.arrayBytes(of: UInt8.self, count: 256 << 10)
        #expect(figures.peakBytes >= held - sampledPeakFloorBytes, "\(figures.peakBytes) vs \(held)")
        #expect(figures.leaks.trackedCount == 12)
        #expect(figures.survivors.isEmpty)
        // Nothing of the case is left behind, by the replica (which ends as soon as it answers) or by this process.
        #expect(Self.scratchFolders().subtracting(before).isEmpty, "\(Self.scratchFolders().subtracting(before))")
    }

    /// The figures of `body`, an expectation expected to fail, and the messages of the issues it recorded.
    private func failing(_ body: () throws -> MemoryFigures) throws -> (figures: MemoryFigures, messages: [String]) {
        let messages = Mutex<[String]>([])
        var measured: MemoryFigures?
        try withKnownIssue {
            measured = try body()
        } matching: { issue in
            messages.withLock { $0.append(issue.comments.map(\.rawValue).joined()) }
            return true
        }
        return (try #require(measured), messages.withLock { $0 })
    }

    @Test func whatTheWorkloadTracksAndKeepsIsALeak() throws {
        defer { leakedHolders.withLock { $0.removeAll() } }
        let (figures, messages) = try failing {
            try expectMemory(of: BufferWorkload(), strategy: "leak", parameters: ["fill.count": "3"], leaks: .none)
        }
        #expect(figures.survivors == [TypeCount(typeName: "BufferHolder", count: 3)])
        #expect(messages.contains { $0.hasPrefix("leak: 3 of 3 BufferHolder survived") }, "\(messages)")
    }

    @Test func aRepeatStepsGrowthIsJudgedAsInARun() throws {
        defer { leakedHolders.withLock { $0.removeAll() } }
        let (figures, messages) = try failing {
            try expectMemory(
                of: BufferWorkload(), strategy: "leak",
                steps: ["{repeat: {times: 8, warmup: 2, settle: 5ms, steps: [{fill: {count: 1}}]}}"], leaks: .none)
        }
        let growth = try #require(figures.leaks.growth.first)
        #expect(growth.liveBytesAfterIteration.count == 8)
        #expect(growth.warmupIterations == 2)
        #expect((growth.fit?.slopeBytesPerIteration ?? 0) >= Double(AllocatorCost.bytes(forRequest: 64 << 10)))
        #expect(
            messages.contains {
                $0.hasPrefix("leak: the live heap grows ")
                    && $0.contains(
                        " per iteration of `repeat` over 6 iterations of `repeat` after 2 warm-up iterations")
            }, "\(messages)")
    }

    @Test func aScenarioFileGivesParametersAndStepsAndOverridesComeLast() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("buffers-\(UUID()).yaml").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try """
        scenario: buffers
        workload: buffers
        parameters:
          bufferSize: 1MiB
        strategies:
          - name: hold
            parameters: {bufferSize: 2MiB}
        steps:
          - fill: 4
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try expectMemory(of: BufferWorkload(), strategy: "hold", scenario: file, leaks: .none)
        // The strategy's own 2 MiB, four times.
        #expect(
            fromFile.peakBytes >= 4 * AllocatorCost.arrayBytes(of: UInt8.self, count: 2 << 20) - sampledPeakFloorBytes)
        #expect(fromFile.leaks.trackedCount == 4)
        let overridden = try expectMemory(
            of: BufferWorkload(), strategy: "hold", parameters: ["fill.count": "1"], scenario: file, leaks: .none)
        #expect(overridden.leaks.trackedCount == 1)
    }

    @Test func aBadStrategyParameterOrStepIsRefusedBeforeAnythingRuns() throws {
        let refused: [(strategy: String, parameters: KeyValuePairs<String, String>, steps: [String]?, says: String)] = [
            ("hodl", [:], nil, "unknown strategy 'hodl'; expected one of: hold, leak"),
            ("hold", ["bufferSize": "lots"], nil, "bad value 'lots' for 'bufferSize'"),
            ("hold", ["size": "1KiB"], nil, "--set 'size=1KiB'"),
            ("hold", [:], ["flil: 3"], "unknown step 'flil'"),
        ]
        for (strategy, parameters, steps, says) in refused {
            let error = try #require(throws: MemoryTestingError.self) {
                try expectMemory(of: BufferWorkload(), strategy: strategy, parameters: parameters, steps: steps)
            }
            #expect(error.description.hasPrefix("cannot run the workload: "), "\(error)")
            #expect(error.description.contains(says), "\(error)")
        }
    }
}
