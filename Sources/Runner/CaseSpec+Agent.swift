import HarnessModel

extension CaseSpec {
    /// True when the case runs with the agent preloaded: it counts every allocation (`peak: exact`), records
    /// allocation stacks, captures its heap, or is an external program (the agent's sampler thread is how one is
    /// measured).
    public var needsAgent: Bool { peakMode == .exact || isInstrumented || program != nil }
}
