import HarnessModel
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// A workload whose `allocate` step holds one block of `holdSize` (written, so it is resident) until teardown.
struct HoldWorkload: Workload {
    var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "hold", summary: "Holds one block.",
            strategies: [
                StrategyDescriptor("small", "A quarter of holdSize."), StrategyDescriptor("large", "holdSize."),
            ],
            parameters: [.bytes("holdSize", default: 8 << 20, range: 0...(1 << 30), "Size of the block.")],
            steps: [StepDescriptor("allocate", "Hold the block.")], defaultSteps: ["allocate"])
    }

    func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase {
        HoldCase(bytes: parameters.bytes("holdSize") / (strategy == "small" ? 4 : 1))
    }
}

final class HoldCase: WorkloadCase {
    let bytes: Int
    var block: UnsafeMutableRawPointer?

    init(bytes: Int) { self.bytes = bytes }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        block = malloc(bytes)
        if let block { memset(block, 0x5A, bytes) }
    }

    func tearDown(context: CaseContext) throws {
        free(block)
        block = nil
    }
}
