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
    /// How long a server must have made no allocation and freed nothing for a boundary's sample to be taken (at least
    /// one sampling interval): the load client's connections are closed by then, and the server is done with them.
    static let quietNanoseconds: Int64 = 5_000_000
    /// How long after a boundary the harness waits for the server to be quiet; past it the first sample counts.
    static let quietWaitNanoseconds: Int64 = 250_000_000

    /// The first sample of the server's stream taken at least `settleNanoseconds` after `time` (monotonic) once the
    /// server has been quiet (`quietNanoseconds`, no allocation or free between two samples that far apart; at most
    /// `quietWaitNanoseconds` after the boundary, then the first sample past it): the exact counts at a step's or a
    /// round's boundary, to the allocation, with nothing of the closing connections left live. Waits at most two
    /// intervals and a second past the wait for quiet (never past the case's deadline), then reads the stream once
    /// more; nil when no such sample came (the server ended, or its agent does not count exactly). The server is not
    /// waited for here: its end is the step's to reap.
    func sample(after time: Int64) -> CountedSample? {
        let boundary = time - origin + Self.settleNanoseconds
        let quiet = max(Self.quietNanoseconds, sampleIntervalNanoseconds)
        let limit = min(now + Self.quietWaitNanoseconds + 2 * sampleIntervalNanoseconds + 1_000_000_000, deadline)
        let poll = max(min(sampleIntervalNanoseconds / 2, 20_000_000), 1_000_000)
        while true {
            // The stream is read once more after the limit: a loaded machine may run the reader late, not the server's
            // sampler; then any sample past the boundary counts, quiet or not.
            let expired = now >= limit
            let giveUp = expired ? boundary - 1 : boundary + Self.quietWaitNanoseconds
            if stream.refresh(),
                let index = Self.quietIndex(
                    in: stream.samples.rows, after: boundary, quiet: quiet, giveUpAfter: giveUp)
            {
                let rows = stream.samples.rows
                guard let counts = rows[index].exact else { return nil }
                return CountedSample(row: rows[index], counts: counts, rows: Array(rows[...index]))
            }
            guard !expired else { return nil }
            var pause = timespec(tv_sec: 0, tv_nsec: Int(poll))
            nanosleep(&pause, nil)
        }
    }

    /// The row that closes a boundary at `boundary` (ns since the agent's origin) in `rows` as written so far: the
    /// first at or after it whose exact counts (allocation calls and live bytes) equal those of a row at or after the
    /// boundary at least `quiet` earlier; once the rows pass `giveUpAfter` without such a pair, the first at or after
    /// the boundary; nil while neither is written yet (or the rows have no exact counts: the first then).
    static func quietIndex(
        in rows: [ProgramSamples.Row], after boundary: Int64, quiet: Int64, giveUpAfter: Int64
    ) -> Int? {
        guard let first = rows.firstIndex(where: { $0.time >= boundary }) else { return nil }
        guard rows[first].exact != nil else { return first }
        var start = first
        for index in rows.indices[first...] {
            // Equal counts: no allocation (calls only grow, and the bytes handed out with them) and no free between.
            if rows[index].exact != rows[start].exact { start = index }
            if rows[index].time - rows[start].time >= quiet { return index }
            if rows[index].time > giveUpAfter { return first }
        }
        return nil
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
