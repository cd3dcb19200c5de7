import CJemalloc
import HarnessCore
import HarnessModel

#if canImport(Glibc)
import Glibc
#endif

/// Allocates known amounts so the harness's figures can be checked against the truth.
///
/// Memory comes straight from `malloc` (jemalloc) and is written to, so it is both allocated and
/// resident. The workload reports what it held at its top as `heldBytes`, summed from
/// `malloc_usable_size` of every live block: the size-class bytes the allocator really handed out
/// (for `churn`, the most that was alive at once).
public struct CalibrationWorkload: Workload {
    public init() {}

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "calibration",
            summary: "Allocates known amounts (one large block, many small objects, a churn loop) to check the figures.",
            strategies: [
                StrategyDescriptor("hold-large", "One block of `holdSize`, written once, held until `release`."),
                StrategyDescriptor("hold-small-objects", "`objectCount` blocks of `objectSize` each, held until `release`."),
                StrategyDescriptor("churn", "Allocate and free in a loop, at most `churnLive` blocks alive at once (allocation-heavy)."),
                StrategyDescriptor("crash", "Allocates, then aborts: shows that a crashing case becomes a failed row."),
            ],
            parameters: [
                .bytes("holdSize", default: 64 << 20, range: 0...(16 << 30), "Size of the block `hold-large` allocates."),
                .count("objectCount", default: 16_384, range: 0...10_000_000, "Blocks `hold-small-objects` allocates."),
                .bytes("objectSize", default: 1024, range: 1...(1 << 20), "Size of each small block."),
                .count("churnOperations", default: 4_000_000, range: 0...1_000_000_000, "Allocate/free pairs of the `churn` loop."),
                .count("churnLive", default: 64, range: 1...1_000_000, "Blocks alive at once in the `churn` loop."),
                .bytes("churnMaxSize", default: 4096, range: 16...(1 << 20), "Largest block of the `churn` loop (sizes 16 B up to this)."),
            ],
            steps: [
                StepDescriptor("allocate", "Allocate what the strategy holds (or run the churn loop)."),
                StepDescriptor("release", "Free everything held."),
            ],
            gauges: [GaugeDescriptor("heldBytes", "Usable bytes of the blocks the workload holds now.")],
            defaultSteps: ["allocate", "idle", "release"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase {
        CalibrationCase(strategy: strategy, parameters: parameters, held: context.gauge("heldBytes"))
    }
}

/// One case of the calibration workload.
final class CalibrationCase: WorkloadCase {
    private let strategy: String
    private let parameters: ParameterValues
    private let held: Gauge
    private var blocks: [UnsafeMutableRawPointer] = []
    private var heldBytes = 0
    private var peakHeldBytes = 0
    private var operations = 0

    init(strategy: String, parameters: ParameterValues, held: Gauge) {
        self.strategy = strategy
        self.parameters = parameters
        self.held = held
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        switch step.name {
        case "allocate": allocate()
        case "release": release()
        default: break
        }
    }

    func tearDown(context: CaseContext) throws {
        release()
    }

    func metrics() -> [Metric] {
        [
            Metric(name: "heldBytes", value: Double(peakHeldBytes), unit: .bytes),
            Metric(name: "operations", value: Double(operations), unit: .count),
        ]
    }

    private func hold(_ size: Int) {
        guard let block = malloc(size) else { return }
        memset(block, 0xA5, size)
        blocks.append(block)
        heldBytes += malloc_usable_size(block)
        peakHeldBytes = max(peakHeldBytes, heldBytes)
        held.set(Int64(heldBytes))
    }

    private func allocate() {
        switch strategy {
        case "hold-large":
            hold(parameters.bytes("holdSize"))
        case "hold-small-objects":
            // Reserve the list first so its own growth does not blur the truth.
            blocks.reserveCapacity(blocks.count + parameters.count("objectCount"))
            for _ in 0..<parameters.count("objectCount") { hold(parameters.bytes("objectSize")) }
        case "churn":
            churn()
        case "crash":
            hold(1 << 20)
            abort()
        default:
            break
        }
    }

    /// Allocate/free pairs over a fixed ring of slots; sizes from a fixed-seed generator so every run does the same work.
    private func churn() {
        let live = parameters.count("churnLive")
        let maxSize = parameters.bytes("churnMaxSize")
        let slots = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: live)
        slots.initialize(repeating: nil, count: live)
        defer {
            for index in 0..<live { free(slots[index]) }
            slots.deallocate()
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var liveBytes = 0
        for operation in 0..<parameters.count("churnOperations") {
            // xorshift64*: cheap, deterministic sizes.
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            let random = state &* 0x2545_F491_4F6C_DD1D
            let size = 16 + Int(random % UInt64(maxSize - 15))
            let slot = operation % live
            if let old = slots[slot] {
                liveBytes -= malloc_usable_size(old)
                free(old)
            }
            let block = malloc(size)
            if let block {
                // Write one byte so the block is really used.
                block.storeBytes(of: UInt8(truncatingIfNeeded: operation), as: UInt8.self)
                liveBytes += malloc_usable_size(block)
                peakHeldBytes = max(peakHeldBytes, liveBytes)
            }
            slots[slot] = block
        }
        operations += parameters.count("churnOperations")
    }

    private func release() {
        for block in blocks { free(block) }
        blocks = []
        heldBytes = 0
        held.set(0)
    }
}
