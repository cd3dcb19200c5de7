import HarnessModel

/// Whether a case, a strategy or a closure leaked: the verdict of `LeakJudgement`.
public enum LeakVerdict: String, Sendable, Hashable, Codable {
    /// Evidence was gathered (tracked objects, a `repeat` step, a heap graph) and none showed a leak.
    case leakFree = "leak-free"
    /// A tracked object survived, the live heap grew per iteration beyond the confidence bound, or the heap graph
    /// holds a block no root reaches.
    case leaks
    /// Nothing was tracked, no `repeat` step ran and no heap graph was captured: no leak evidence either way.
    case notAssessed = "not-assessed"
}

/// How the verdict relates to what the scenario file expected.
public enum LeakOutcome: String, Sendable, Hashable, Codable {
    /// The verdict matches the expectation (or no leak was seen where none was stated).
    case asExpected = "as-expected"
    /// A strategy expected (or not declared) to be leak-free leaked: a finding.
    case unexpectedLeak = "unexpected-leak"
    /// A strategy declared `expect: leaks` showed no leak: the scenario may no longer show the pitfall.
    case expectedLeakNotSeen = "expected-leak-not-seen"
    /// No leak evidence was gathered.
    case notAssessed = "not-assessed"
}
