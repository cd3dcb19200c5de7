import HarnessModel

// The words of model values that carry no prose of their own: the one place each is worded, as a phrase the
// builder puts in the document (report.md, the page, the terminal alike). Typed verdict reasons get their words
// here too.

/// A strategy the memory limit stopped.
enum KillWords {
    /// `killed by memory limit at 0.71 s, 256.40 MiB` (medians when several were).
    static func phrase(_ kills: MemoryLimitKills) -> Phrase {
        "killed by memory limit at \(Value.number(kills.medianKilledAtMilliseconds / 1000, decimals: 2)) s, "
            + "\(Value.bytes(kills.medianFootprintBytes))"
            + (kills.killedCount > 1 ? " (median of \(kills.killedCount))" : "")
    }
}
