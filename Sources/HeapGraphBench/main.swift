import Foundation
import HarnessModel
import HeapGraph
import WorkloadKit

// heap-graph-bench: the heap graph's analysis on a synthetic heap, timed, with its memory beside the snapshot's.
//
//   heap-graph-bench [--blocks N] [--edges N] [--rounds N] [--leaked PERCENT]
//   heap-graph-bench name CAPTURE [PID]      a capture named from its files, and from its held process's memory
//                                            (NamingShare.swift), the two side by side
//
// Builds a snapshot of N blocks (default 1,000,000) and about M edges (default 3,000,000, listed by source as a
// capture reader walks each block's words): all but PERCENT% (default 10) of the blocks reachable from 2,000
// globals through a random graph, the rest leaked (a random graph of their own, with rings of 2 to 10 blocks),
// 5% weak and 3% unowned edges. Prints the build time, the analysis time of each round (median last), the
// snapshot's size and the peak resident memory the analysis added (VmHWM reset before it). Build with
// `swift build -c release --product heap-graph-bench`.

extension SeededRandom {
    mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }
}

func kibibytes(_ field: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

func seconds(_ start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// CPU time of this process (all threads), seconds: less sensitive than wall time to other work on a shared machine.
func cpuSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func syntheticHeap(blocks: Int, edges: Int, leakedPercent: Int) throws -> HeapSnapshot {
    var random = SeededRandom(seed: 42)
    var builder = HeapSnapshotBuilder(label: "synthetic")
    builder.reserve(blocks: blocks, edges: edges + blocks / 100)
    let types = (0..<500).map { builder.intern("App.Type\($0)") }
    let fields = (0..<16).map { builder.intern("field\($0)") }
    let stacks = (0..<1_000).map { builder.addStack(["App.site\($0)() (Site.swift:\($0))", "main (main.swift:1)"]) }
    var address: UInt64 = 0x7f00_0000_0000
    for _ in 0..<blocks {
        address += UInt64(16 * (1 + random.below(16)))
        let stack = random.below(4) == 0 ? stacks[random.below(stacks.count)] : HeapSnapshot.none
        builder.addBlock(
            address: address, sizeBytes: UInt64(16 * (1 + random.below(8))), kind: .swiftObject,
            typeNameIndex: types[random.below(types.count)], stackIndex: stack)
    }
    let live = blocks * (100 - leakedPercent) / 100
    // A reader walks each block's words in order: edges come by source, offsets ascending.
    let perBlock = max(2 * edges / blocks, 1)
    for from in 0..<blocks {
        for word in 0..<random.below(perBlock + 1) {
            // The live part points anywhere in itself; the leaked part only into itself.
            let to = from < live ? random.below(live) : live + random.below(blocks - live)
            let roll = random.below(100)
            let kind: HeapEdgeKind = roll < 5 ? .weak : roll < 8 ? .unowned : .strong
            builder.addEdge(
                from: UInt32(from), to: UInt32(to), byteOffset: UInt32(16 + 8 * word), kind: kind,
                fieldNameIndex: fields[word % fields.count])
        }
    }
    for ring in 0..<(blocks > live ? blocks / 1_000 : 0) {
        let members = (0..<(2 + ring % 9)).map { _ in UInt32(live + random.below(blocks - live)) }
        for (from, to) in zip(members, members.dropFirst() + [members[0]]) {
            builder.addEdge(from: from, to: to, byteOffset: 16, kind: .strong, fieldNameIndex: fields[0])
        }
    }
    for index in 0..<(live > 0 ? 2_000 : 0) {
        builder.addRoot(
            .global(symbol: "App.global\(index)", module: "App"), description: "App.global\(index)",
            block: UInt32(random.below(live)), slotAddress: 0x5000 + UInt64(index) * 8)
    }
    let start = ContinuousClock.now
    defer { print("build() alone: \(Units.fixed(seconds(start), decimals: 3)) s") }
    return try builder.build()
}

func snapshotBytes(_ snapshot: HeapSnapshot) -> Int { snapshot.columnBytes }

if CommandLine.arguments.dropFirst().first == "name" { exit(runNamingShare(Array(CommandLine.arguments.dropFirst(2)))) }
var arguments = CommandLine.arguments.dropFirst().makeIterator()
var (blocks, edges, rounds, leakedPercent) = (1_000_000, 3_000_000, 3, 10)
while let argument = arguments.next() {
    let value = arguments.next().flatMap(Int.init)
    switch argument {
    case "--blocks": blocks = value ?? blocks
    case "--edges": edges = value ?? edges
    case "--rounds": rounds = value ?? rounds
    case "--leaked": leakedPercent = min(max(value ?? leakedPercent, 0), 100)
    default:
        FileHandle.standardError.write(
            Data("usage: heap-graph-bench [--blocks N] [--edges N] [--rounds N] [--leaked PERCENT]\n".utf8))
        exit(64)
    }
}
let buildStart = ContinuousClock.now
let snapshot = try syntheticHeap(blocks: blocks, edges: edges, leakedPercent: leakedPercent)
let buildSeconds = seconds(buildStart)
let residentBefore = kibibytes("VmRSS")
// Writing 5 to clear_refs resets VmHWM to the current resident size: the next peak is the analysis's.
try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
var times: [Double] = []
var cpuTimes: [Double] = []
var summary = HeapCaptureSummary(label: "", timeNanoseconds: 0)
for _ in 0..<rounds {
    let start = ContinuousClock.now
    let cpuStart = cpuSeconds()
    defer { cpuTimes.append(cpuSeconds() - cpuStart) }
    summary =
        HeapAnalysis.analyse(
            snapshot, options: HeapAnalysisOptions(targets: [.type(named: "Type7", reason: .requestedType)])
        ).summary
    times.append(seconds(start))
}
let peak = kibibytes("VmHWM")
let median = times.sorted()[times.count / 2]
let cpuMedian = cpuTimes.sorted()[cpuTimes.count / 2]
print("blocks \(snapshot.blockCount), edges \(snapshot.edgeCount), roots \(snapshot.roots.count)")
print(
    "snapshot columns: \(Units.formatBytes(snapshotBytes(snapshot))); resident before the analysis: \(Units.formatBytes(residentBefore * 1024))"
)
print("build (generate + canonical order): \(Units.fixed(buildSeconds, decimals: 3)) s")
print(
    "analysis: \(times.map { Units.fixed($0, decimals: 3) }.joined(separator: " s, ")) s; median \(Units.fixed(median, decimals: 3)) s wall, \(Units.fixed(cpuMedian, decimals: 3)) s CPU"
)
print(
    "peak resident during the analysis: \(Units.formatBytes(peak * 1024)), \(Units.formatBytes((peak - residentBefore) * 1024)) above the resident size before it (\(Units.fixed(Double(peak - residentBefore) * 1024 / Double(snapshotBytes(snapshot)), decimals: 2))x the snapshot columns)"
)
print(
    "reachable \(summary.reachableBlocks), leaked \(summary.leakedBlocks) (\(Units.formatBytes(summary.leakedBytes))), cycles \(summary.cycleCount), root cycles \(summary.rootCycleCount), root leaks \(summary.rootLeakCount), groups shown \(summary.groups.count) + \(summary.omittedGroups)"
)
