import CJemalloc
import Dispatch
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: the calibration workload allocates through jemalloc")
#endif

/// Allocates known amounts so the harness's figures can be checked against the truth.
///
/// Memory comes straight from `malloc` (jemalloc) and is written to, so it is both allocated and
/// resident. The workload reports what it held at its top as `heldBytes`, summed from
/// `malloc_usable_size` of every live block: the size-class bytes the allocator really handed out
/// (for `churn`, the most that was alive at once, its ring of slots included; for `spikes`, one spike;
/// for `cross-thread`, the full queue, which it holds by construction).
public struct CalibrationWorkload: Workload {
    public init() {}

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "calibration",
            summary:
                "Allocates known amounts (one large block, many small objects, a churn loop) to check the figures.",
            strategies: Self.strategyDescriptors,
            parameters: Self.parameterSpecs,
            steps: Self.stepDescriptors,
            gauges: Self.gaugeDescriptors,
            metrics: Self.metricDescriptors,
            defaultSteps: ["allocate", "idle", "release"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
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
        case "spike": spike()
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
        case "spikes":
            for _ in 0..<parameters.count("spikeCount") { spike() }
        case "cross-thread":
            crossThread()
        case "crash":
            hold(1 << 20)
            abort()
        default:
            break
        }
    }

    /// Allocate/free pairs over a fixed ring of slots; sizes from a fixed-seed generator so every run does the same
    /// work.
    private func churn() {
        let live = parameters.count("churnLive")
        let maxSize = parameters.bytes("churnMaxSize")
        // The ring comes from malloc, so the truth can count it: it is alive the whole loop.
        guard let storage = malloc(live * MemoryLayout<UnsafeMutableRawPointer?>.stride) else { return }
        let slots = storage.bindMemory(to: UnsafeMutableRawPointer?.self, capacity: live)
        slots.initialize(repeating: nil, count: live)
        defer {
            for index in 0..<live { free(slots[index]) }
            free(storage)
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var liveBytes = malloc_usable_size(storage)
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

    /// A block of `spikeSize`, touched at both ends and freed at once, then the pause.
    private func spike() {
        let size = parameters.bytes("spikeSize")
        if let block = malloc(size) {
            block.storeBytes(of: 1, as: UInt8.self)
            block.storeBytes(of: 1, toByteOffset: size - 1, as: UInt8.self)
            let usable = malloc_usable_size(block)
            free(block)
            peakHeldBytes = max(peakHeldBytes, usable)
            operations += 1
        }
        Pacer.sleep(for: parameters.duration("spikeGap"))
    }

    /// Producer and consumer on two threads; every block is allocated on one and freed on the other.
    private func crossThread() {
        let depth = parameters.count("crossThreadDepth")
        let items = max(parameters.count("crossThreadItems"), depth)
        let size = parameters.bytes("objectSize")
        guard let queue = BlockQueue(depth: depth) else { return }
        let blockBytes = nallocx(size, 0)
        let held = self.held
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            for index in 0..<items {
                queue.vacant.wait()
                let block = malloc(size)
                block?.storeBytes(of: UInt8(truncatingIfNeeded: index), as: UInt8.self)
                queue.slots[index % depth] = block
                held.add(Int64(blockBytes))
                queue.occupied.signal()
                // The queue is full: the top is reached, and the consumer may start.
                if index == depth - 1 { queue.full.signal() }
            }
        }
        DispatchQueue.global().async(group: group) {
            queue.full.wait()
            for index in 0..<items {
                queue.occupied.wait()
                let block = queue.slots[index % depth]
                queue.slots[index % depth] = nil
                held.add(-Int64(blockBytes))
                free(block)
                queue.vacant.signal()
            }
        }
        group.wait()
        peakHeldBytes = max(peakHeldBytes, depth * blockBytes + queue.slotsUsableBytes)
        operations += items
    }

    private func release() {
        for block in blocks { free(block) }
        blocks = []
        heldBytes = 0
        held.set(0)
    }
}

/// A bounded queue of blocks between one producer and one consumer thread.
///
/// `@unchecked Sendable`: slot `i` is written by the producer before it signals `occupied` and
/// read by the consumer after it waits on it; the consumer clears a slot before signalling
/// `vacant`, which the producer waits on before writing the slot again. The semaphores order
/// every access to a slot; nothing else is mutable.
final class BlockQueue: @unchecked Sendable {
    let slots: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    /// Usable bytes of the slots' own storage (from malloc, so the truth can count it).
    let slotsUsableBytes: Int
    let vacant: DispatchSemaphore
    let occupied = DispatchSemaphore(value: 0)
    /// Signalled once, when the producer has filled every slot.
    let full = DispatchSemaphore(value: 0)

    init?(depth: Int) {
        guard let storage = malloc(depth * MemoryLayout<UnsafeMutableRawPointer?>.stride) else { return nil }
        slots = storage.bindMemory(to: UnsafeMutableRawPointer?.self, capacity: depth)
        slots.initialize(repeating: nil, count: depth)
        slotsUsableBytes = malloc_usable_size(storage)
        vacant = DispatchSemaphore(value: depth)
    }

    deinit {
        free(UnsafeMutableRawPointer(slots))
    }
}

extension CalibrationWorkload {
    /// The strategies, as `memharness list` and reports describe them.
    static let strategyDescriptors: [StrategyDescriptor] = [
        StrategyDescriptor("hold-large", "One block of `holdSize`, written once, held until `release`."),
        StrategyDescriptor(
            "hold-small-objects", "`objectCount` blocks of `objectSize` each, held until `release`."),
        StrategyDescriptor(
            "churn", "Allocate and free in a loop, at most `churnLive` blocks alive at once (allocation-heavy)."
        ),
        StrategyDescriptor(
            "spikes",
            "`spikeCount` spikes: a block of `spikeSize` alive for a few microseconds, then a pause of `spikeGap` "
                + "(far shorter than a sampling interval: the sampler misses most)."
        ),
        StrategyDescriptor(
            "cross-thread",
            "A producer thread allocates `crossThreadItems` blocks of `objectSize` into a queue of "
                + "`crossThreadDepth`; a consumer thread frees them. The consumer starts once the queue is full, so "
                + "exactly `crossThreadDepth` blocks are alive at the top."
        ),
        StrategyDescriptor("crash", "Allocates, then aborts: shows that a crashing case becomes a failed row."),
    ]

    /// The parameters a scenario file may set, with their defaults and ranges.
    static let parameterSpecs: [ParameterSpec] = [
        .bytes(
            "holdSize", default: 64 << 20, range: 0...(16 << 30), "Size of the block `hold-large` allocates."),
        .count("objectCount", default: 16_384, range: 0...10_000_000, "Blocks `hold-small-objects` allocates."),
        .bytes("objectSize", default: 1024, range: 1...(1 << 20), "Size of each small block."),
        .count(
            "churnOperations", default: 4_000_000, range: 0...1_000_000_000,
            "Allocate/free pairs of the `churn` loop."),
        .count("churnLive", default: 64, range: 1...1_000_000, "Blocks alive at once in the `churn` loop."),
        .bytes(
            "churnMaxSize", default: 4096, range: 16...(1 << 20),
            "Largest block of the `churn` loop (sizes 16 B up to this)."),
        .count(
            "spikeCount", default: 200, range: 1...1_000_000, "Spikes of the `spikes` strategy's `allocate`."),
        .bytes("spikeSize", default: 16 << 20, range: 1...(16 << 30), "Size of each spike."),
        .duration(
            "spikeGap", default: .milliseconds(2), range: .zero ... .seconds(10), "Pause after each spike."),
        .count(
            "crossThreadDepth", default: 4096, range: 1...10_000_000,
            "Blocks the `cross-thread` queue holds at most."),
        .count(
            "crossThreadItems", default: 100_000, range: 1...1_000_000_000,
            "Blocks passed from producer to consumer (at least `crossThreadDepth`)."),
    ]

    /// The steps a scenario's script may use, with their arguments.
    static let stepDescriptors: [StepDescriptor] = [
        StepDescriptor("allocate", "Allocate what the strategy holds (or run the churn loop)."),
        StepDescriptor("release", "Free everything held."),
        StepDescriptor(
            "spike",
            "One spike of `spikeSize` (alive for a few microseconds), then a pause of `spikeGap`; one step per "
                + "spike gives each its own phase."
        ),
    ]

    /// The gauges sampled beside the allocator's figures.
    static let gaugeDescriptors: [GaugeDescriptor] = [
        GaugeDescriptor("heldBytes", "Usable bytes of the blocks the workload holds now.")
    ]

    /// The metrics a case reports when it ends.
    static let metricDescriptors: [MetricDescriptor] = [
        MetricDescriptor(
            "heldBytes", .bytes,
            "Most usable bytes the workload held at once (the truth a peak is checked against)."),
        MetricDescriptor("operations", .count, "Allocate/free pairs the churn loop ran."),
    ]
}
