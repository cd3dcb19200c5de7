import Foundation
import HarnessModel
import WorkloadKit

#if os(Linux)
    import Glibc
#endif

/// A sample of a server's stream that holds the agent's exact counts, with the rows before it (a round's sampled peak).
struct CountedSample: Equatable {
    var row: ProgramSamples.Row
    var counts: ExactCounts
    /// The stream's rows up to this one.
    var rows: [ProgramSamples.Row]

    /// The highest live bytes from `start`'s sample to this one: the live bytes at `start`, and each later row's high
    /// since the row before it (the agent's exact mark, reset at every row), or its live bytes in a stream without
    /// marks.
    func peakLiveBytes(since start: CountedSample) -> Int64 {
        let later = rows.filter { $0.time > start.row.time }.compactMap { $0.exactHighLiveBytes ?? $0.exact?.liveBytes }
        return max(start.counts.liveBytes, later.max() ?? counts.liveBytes)
    }
}

extension ServerSession {
    /// How long after a boundary the sample that closes it may be taken at the earliest: what a server does just after
    /// its last answer went out (the end of its handler) belongs to the step that sent the request.
    static let settleNanoseconds: Int64 = 2_000_000

    /// The first sample of the server's stream taken at least `settleNanoseconds` after `time` (monotonic), once the
    /// agent wrote it: the exact counts at a step's or a round's boundary, to the allocation. Waits at most two
    /// intervals and a second (never past the case's deadline); nil when no such sample came (the server ended, or its
    /// agent does not count exactly). The server is not waited for here: its end is the step's to reap.
    func sample(after time: Int64) -> CountedSample? {
        let boundary = time - origin + Self.settleNanoseconds
        let limit = min(now + 2 * sampleIntervalNanoseconds + 1_000_000_000, deadline)
        let poll = max(min(sampleIntervalNanoseconds / 2, 20_000_000), 1_000_000)
        while true {
            if let rows = (try? ProgramSamples.read(samplesPath))??.rows,
                let index = rows.firstIndex(where: { $0.time >= boundary })
            {
                guard let counts = rows[index].exact else { return nil }
                return CountedSample(row: rows[index], counts: counts, rows: Array(rows[...index]))
            }
            guard now < limit else { return nil }
            var pause = timespec(tv_sec: 0, tv_nsec: Int(poll))
            nanosleep(&pause, nil)
        }
    }
}

/// What a benchmark reads of a program's sample stream (`MEMHARNESS_AGENT_SAMPLES`) without the case around it.
public enum SampleStream {
    /// The times of the stream's samples at `path` (nanoseconds since the agent's origin), and the agent's exact
    /// allocation calls at each (nil where it does not count exactly); nil when there is no stream this memharness
    /// reads.
    public static func samples(atPath path: String) -> [(time: Int64, allocationCalls: Int64?)]? {
        guard let rows = (try? ProgramSamples.read(path))??.rows else { return nil }
        return rows.map { ($0.time, $0.exact?.allocationCalls) }
    }
}
