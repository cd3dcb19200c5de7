import HarnessModel
import WorkloadKit
import Yams

extension ParseContext {
    /// Reads `memoryLimit: 300MiB` and `memoryWarning: 80%` (a share of the limit) or `240MiB`.
    mutating func readMemoryBudget(_ mapping: Node.Mapping) -> (limitBytes: Int?, warning: MemoryLevel?) {
        var limit: Int?
        if let node = mapping["memoryLimit"], let text = string(node, "memoryLimit") {
            if let bytes = Units.parseBytes(text), OptionRanges.memoryLimitBytes.contains(bytes) {
                limit = bytes
            } else {
                report(
                    node,
                    "bad value '\(text)' for 'memoryLimit'; expected a size from 1MiB to 1TiB, e.g. 300MiB, 1.5GiB")
            }
        }
        var warning: MemoryLevel?
        if let node = mapping["memoryWarning"], let text = string(node, "memoryWarning") {
            if MemoryLevel.isBareNumber(text) {
                report(node, "'memoryWarning' \(MemoryLevelSyntax.bareNumberProblem(text))")
            } else if let level = MemoryLevel.parse(text) {
                warning = level
                if let limit, case .bytes(let bytes) = level, bytes > limit {
                    report(
                        node,
                        "'memoryWarning' \(Units.formatBytes(bytes)) is above 'memoryLimit' "
                            + "\(Units.formatBytes(limit)); a warning must come before the limit, e.g. 80%")
                }
            } else {
                report(node, "bad value '\(text)' for 'memoryWarning'; expected \(MemoryLevelSyntax.accepted)")
            }
        }
        return (limit, warning)
    }
}

/// How a memory warning level is written, for the messages of the file's `memoryWarning:` and the command
/// line's `--memory-warning` (`MemoryLevel.parse` reads it).
public enum MemoryLevelSyntax {
    /// What a level may be.
    public static let accepted =
        "a share of the limit (1%...100%, e.g. 80%) or a size with its unit (B, KiB, MiB, GiB, TiB; e.g. 240MiB)"

    /// Why `text`, a number without a unit, is refused: it could be a share or bytes (`0.8` once meant 1 byte).
    public static func bareNumberProblem(_ text: String) -> String {
        "'\(text)' has no unit, so it could be a share of the limit or a number of bytes; write a percentage "
            + "such as 80% (1%...100%) or a size such as 200MiB (B, KiB, MiB, GiB, TiB)"
    }
}
