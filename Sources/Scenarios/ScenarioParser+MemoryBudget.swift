import HarnessModel
import WorkloadKit
import Yams

extension ParseContext {
    /// Largest memory limit a file may set: far beyond any device, small enough to be a typo.
    static let memoryLimitRange = (1 << 20)...(1 << 40)

    /// Reads `memoryLimit: 300MiB` and `memoryWarning: 80%` (a share of the limit) or `240MiB`.
    mutating func readMemoryBudget(_ mapping: Node.Mapping) -> (limitBytes: Int?, warning: MemoryLevel?) {
        var limit: Int?
        if let node = mapping["memoryLimit"], let text = string(node, "memoryLimit") {
            if let bytes = Units.parseBytes(text), Self.memoryLimitRange.contains(bytes) {
                limit = bytes
            } else {
                report(
                    node,
                    "bad value '\(text)' for 'memoryLimit'; expected a size from 1MiB to 1TiB, e.g. 300MiB, 1.5GiB")
            }
        }
        var warning: MemoryLevel?
        if let node = mapping["memoryWarning"], let text = string(node, "memoryWarning") {
            if let level = MemoryLevel.parse(text) {
                warning = level
                if let limit, case .bytes(let bytes) = level, bytes > limit {
                    report(
                        node,
                        "'memoryWarning' \(Units.formatBytes(bytes)) is above 'memoryLimit' "
                            + "\(Units.formatBytes(limit)); a warning must come before the limit, e.g. 80%")
                }
            } else {
                report(
                    node,
                    "bad value '\(text)' for 'memoryWarning'; expected a share of memoryLimit (1%...100%, e.g. 80%) "
                        + "or a size, e.g. 240MiB"
                )
            }
        }
        return (limit, warning)
    }
}
