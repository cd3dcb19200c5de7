import Foundation
import HarnessModel

/// `--jobs N` or `--jobs auto`: how many cases of scenarios that allow it run at once.
public enum JobCount: Sendable, Hashable {
    /// The number of CPUs this process may run on.
    case auto
    case count(Int)

    /// Reads `auto` or a whole number; nil for anything else (the range is `OptionRanges.jobs`).
    public init?(parsing text: String) {
        if text == "auto" {
            self = .auto
        } else if let count = Int(text) {
            self = .count(count)
        } else {
            return nil
        }
    }

    /// The count: `auto` is the number of CPUs this process may run on (at least 1).
    public var resolved: Int {
        switch self {
        case .auto: return max(ProcessInfo.processInfo.activeProcessorCount, 1)
        case .count(let count): return count
        }
    }
}
