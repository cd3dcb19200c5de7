import AllocatorProbe

#if os(Linux)
    import Glibc
#endif

/// Why a case could not be measured. Findings (a leak, a peak over a threshold) are results, never errors.
public enum MeasurementError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The allocator probe failed: jemalloc missing, without statistics, or not the process allocator.
    case probe(AllocatorProbeError)
    /// The case names a workload this binary does not have.
    case unknownWorkload(String, known: [String])
    /// An exact-peak case, but this process does not count allocations (`detail` says what is missing).
    case exactPeakUnavailable(detail: String)
    /// Allocation stacks were asked for, but this process cannot record them (`detail` says why).
    case attributionUnavailable(detail: String)
    /// A system call the measurement needs failed.
    case system(call: String, errno: Int32)

    public var description: String {
        switch self {
        case .probe(let error):
            return error.description
        case .unknownWorkload(let name, let known):
            return "unknown workload '\(name)'; this binary knows: \(known.joined(separator: ", "))"
        case .exactPeakUnavailable(let detail):
            return "exact peaks (--peak exact, peak: exact) need every allocation counted, but \(detail)"
        case .attributionUnavailable(let detail):
            return "allocation stacks (--attribute) cannot be recorded: \(detail); the runner preloads "
                + "\(Agent.libraryName) with MEMHARNESS_AGENT_STACK_SAMPLE_BYTES into attributed cases"
        case .system(let call, let errno):
            return "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
        }
    }
}
