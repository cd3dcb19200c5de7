import Foundation

/// Reads what massif and heaptrack say about a run: the process's heap at its peak, and the part
/// of it allocated by a given module (the workload), found through the call stacks.
enum ToolOutputs {
    /// A tool's figures at the process's heap peak, bytes as requested by the program.
    struct Peak {
        /// All heap the tool counted at the peak (massif: useful heap only).
        var totalBytes: Int
        /// The part allocated under a frame of the marked module.
        var markedBytes: Int
        /// massif's "extra heap" at the peak (its estimate of allocator overhead); 0 for heaptrack.
        var extraBytes: Int = 0
    }

    /// The peak snapshot of a massif.out file (`heap_tree=peak`, recorded exactly with `--peak-inaccuracy=0`).
    ///
    /// The snapshot's tree lists allocation sites, one line per node (`nK: BYTES ADDRESS: FUNCTION ...`),
    /// indented by depth; a node's bytes include its children's. The marked bytes are those of the
    /// outermost nodes whose function names contain `marker`.
    static func massifPeak(_ text: String, marker: String) -> Peak? {
        var inPeak = false
        var sawPeak = false
        var heap = 0
        var extra = 0
        var snapshotHeap = 0
        var snapshotExtra = 0
        var marked = 0
        var matchedDepth: Int?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("snapshot=") {
                if inPeak { break }
                snapshotHeap = 0
                snapshotExtra = 0
            } else if line.hasPrefix("mem_heap_B=") {
                snapshotHeap = Int(line.dropFirst("mem_heap_B=".count)) ?? 0
            } else if line.hasPrefix("mem_heap_extra_B=") {
                snapshotExtra = Int(line.dropFirst("mem_heap_extra_B=".count)) ?? 0
            } else if line == "heap_tree=peak" {
                inPeak = true
                sawPeak = true
                heap = snapshotHeap
                extra = snapshotExtra
            } else if inPeak, let node = treeNode(line) {
                if let depth = matchedDepth, node.depth > depth { continue }
                matchedDepth = nil
                if node.text.contains(marker) {
                    marked += node.bytes
                    matchedDepth = node.depth
                }
            }
        }
        return sawPeak ? Peak(totalBytes: heap, markedBytes: marked, extraBytes: extra) : nil
    }

    /// ` n2: 16777216 0x4A2B3C: function (file:line)` -> depth 1, 16777216, the rest.
    static func treeNode(_ line: Substring) -> (depth: Int, bytes: Int, text: Substring)? {
        let depth = line.prefix { $0 == " " }.count
        let rest = line.dropFirst(depth)
        guard rest.hasPrefix("n"), let colon = rest.firstIndex(of: ":") else { return nil }
        let afterColon = rest[rest.index(after: colon)...].drop { $0 == " " }
        let number = afterColon.prefix { $0.isNumber }
        guard let bytes = Int(number) else { return nil }
        return (depth, bytes, afterColon.dropFirst(number.count))
    }

    /// heaptrack's stacks at the heap peak (`heaptrack_print --flamegraph-cost-type peak -F`): one
    /// line per stack, frames separated by `;`, then the bytes that stack held at the peak.
    static func heaptrackPeak(foldedStacks text: String, marker: String) -> Peak {
        var total = 0
        var marked = 0
        for line in text.split(separator: "\n") {
            guard let space = line.lastIndex(of: " "), let bytes = Int(line[line.index(after: space)...]) else {
                continue
            }
            total += bytes
            if line[..<space].contains(marker) { marked += bytes }
        }
        return Peak(totalBytes: total, markedBytes: marked)
    }

    /// Runs `heaptrack_print` on a recording and returns its folded peak stacks.
    static func heaptrackStacks(recording: String, scratch: URL) throws -> String {
        let stacks = scratch.appendingPathComponent(UUID().uuidString + ".stacks").path
        let arguments = [
            "--file", recording, "--print-peaks=0", "--print-allocators=0", "--print-temporary=0",
            "--flamegraph-cost-type", "peak", "--print-flamegraph", stacks,
        ]
        let tool = BenchEnvironment.which("heaptrack_print") ?? "/usr/bin/heaptrack_print"
        _ = try BenchChild.run(tool, arguments, timeout: .seconds(600), showStderr: false)
        // No stacks file: heaptrack_print found nothing, and the caller reports an empty result as a problem.
        return (try? String(contentsOfFile: stacks, encoding: .utf8)) ?? ""
    }

    /// The file heaptrack wrote for the output stem `stem` (it adds `.zst` or `.gz`).
    static func heaptrackRecording(stem: String) -> String? {
        let url = URL(fileURLWithPath: stem)
        // An unlistable scratch folder reads as no recording, which the caller reports.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)) ?? []
        return names.filter { $0.hasPrefix(url.lastPathComponent + ".") }.sorted().first
            .map { url.deletingLastPathComponent().appendingPathComponent($0).path }
    }
}
