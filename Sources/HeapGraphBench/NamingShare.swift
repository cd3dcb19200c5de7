import Foundation
import HarnessModel
import HeapGraph

/// `heap-graph-bench name CAPTURE [PID]`: names a heap capture from its files alone and, with PID (the process, held
/// at its exit while this runs), from its memory; prints one JSON line per way: the naming summary, the live blocks
/// and bytes, the seconds the naming took. The same capture named both ways: side by side, what the memory adds.
func runNamingShare(_ arguments: [String]) -> Int32 {
    guard let path = arguments.first else {
        FileHandle.standardError.write(Data("usage: heap-graph-bench name CAPTURE [PID]\n".utf8))
        return 64
    }
    let ways: [(String, CaptureMemory)] =
        [("files", .none)]
        + (arguments.dropFirst().first.flatMap(Int32.init).map { [("memory", .process(pid: $0))] } ?? [])
    for (label, memory) in ways {
        let start = ContinuousClock.now
        do {
            var naming = CaptureNaming(capture: try CaptureFile(path: path), memory: memory)
            let snapshot = try naming.snapshot()
            let elapsed = seconds(start)
            let summary = HeapAnalysis.analyse(snapshot).summary
            let line = NamingLine(
                way: label, liveBlocks: summary.liveBlocks, liveBytes: summary.liveBytes, namingSeconds: elapsed,
                naming: snapshot.naming)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(line), as: UTF8.self))
        } catch {
            FileHandle.standardError.write(Data("heap-graph-bench: \(path): \(error)\n".utf8))
            return 70
        }
    }
    return 0
}

/// One way of naming a capture, as `name` prints it.
struct NamingLine: Encodable {
    var way: String
    var liveBlocks: Int
    var liveBytes: Int
    var namingSeconds: Double
    var naming: HeapNamingSummary?
}
