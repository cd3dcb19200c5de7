import HarnessModel
import Measurement
import WorkloadKit

/// A workload whose `allocate` step makes one tracked block; under `cycle` every block refers to
/// itself and so never dies, under `release` it dies when the step ends.
struct BlockWorkload: Workload {
    static let blockBytes = 4000

    var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "blocks", summary: "Blocks that leak through a self-reference, or not.",
            strategies: [
                StrategyDescriptor("cycle", "Each block refers to itself."),
                StrategyDescriptor("release", "Blocks die."),
            ],
            parameters: [], steps: [StepDescriptor("allocate", "Make one tracked block.")], defaultSteps: ["allocate"]
        )
    }

    func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase {
        BlockCase(leaks: strategy == "cycle")
    }
}

final class Block {
    let bytes = [UInt8](repeating: 7, count: BlockWorkload.blockBytes)
    var selfReference: Block?
}

final class BlockCase: WorkloadCase {
    let leaks: Bool
    init(leaks: Bool) { self.leaks = leaks }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        let block = Block()
        if leaks { block.selfReference = block }
        context.track(block, as: "Block")
    }
}
