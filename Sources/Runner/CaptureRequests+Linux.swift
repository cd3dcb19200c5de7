import CSystem
import Foundation
import HarnessModel
import HeapGraph
import Measurement
import Symbols
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: a running program's heap is captured through a Unix socket")
#endif

/// Heap captures of a running program on request (`MEMHARNESS_AGENT_CAPTURE_SOCKET`): a server's heap between its
/// load rounds.
///
/// The agent in the program connects at its start to this socket (SOCK_SEQPACKET, in Linux's abstract namespace: no
/// file to leave behind); only the program started is answered (`SO_PEERCRED`). A request passes the program an unnamed
/// file of this process's; the agent's own thread captures the heap into it with the world stopped, says so, and keeps
/// the world stopped while the blocks are named here from the program's memory (`/proc/PID/mem`); the answer resumes
/// it. Should this process die meanwhile, the connection closes and the program resumes; it never waits more than a
/// minute.
final class CaptureRequests {
    /// The name the agent connects to (`@` marks the abstract namespace).
    let name: String
    private let listener: Int32
    private var connection: Int32 = -1
    /// The allocation stacks' folding, remembered from one capture of the program to the next.
    private let foldMemo = FoldMemo()
    /// How long each capture taken kept the program stopped (the request to the answer that resumed it), nanoseconds.
    private(set) var pauses: [Int64] = []
    /// The bytes each capture taken wrote.
    private(set) var bytes: [Int] = []

    /// The longest a capture (with its naming) is waited for.
    static let answerLimitNanoseconds: Int64 = 60_000_000_000
    /// How long the program's connection is waited for at the first request (it connects before its `main`).
    static let connectLimitNanoseconds: Int64 = 5_000_000_000

    /// A listening socket; nil when one cannot be made (the case then has no captures while it runs).
    init?() {
        guard
            let (name, descriptor) = AbstractSocket.listen(
                prefix: "memharness-capture", type: SOCK_SEQPACKET, backlog: 64)
        else { return nil }
        self.name = name
        listener = descriptor
    }

    deinit {
        if connection >= 0 { close(connection) }
        close(listener)
    }

    /// The heap of process `pid` now, named from its memory while it is stopped; it runs again when this returns.
    /// A failure says why (the program ended, its agent tracks no blocks, no answer in time).
    func capture(of pid: Int32, label: String) -> HeapCaptureResult {
        let pending: Pending
        switch request(of: pid, label: label) {
        case .held(let asked): pending = asked
        case .failed(let failure): return .failure(failure)
        }
        defer { close(pending.file) }
        let length = Int(lseek(pending.file, 0, SEEK_END))
        let result = Agent.readHeapCapture(
            descriptor: pending.file, length: max(length, 0), label: label, memory: .process(pid: pid),
            foldMemo: foldMemo)
        resume(pending.connection)
        pauses.append(MonotonicClock.nanoseconds() - pending.started)
        bytes.append(length)
        return result
    }

    /// A capture written, the program held stopped until `resume` (or the end of this object's connection).
    struct Pending {
        let connection: Int32
        /// The unnamed file the capture is in; the caller closes it.
        let file: Int32
        /// When it was asked for.
        let started: Int64
    }

    /// What asking for a capture gave.
    enum Asked {
        case held(Pending)
        case failed(HeapCaptureFailure)
    }

    /// Asks process `pid` for a capture and waits for it to be written: the program is then held stopped. A failure
    /// (the program resumed, or never stopped) says why.
    func request(of pid: Int32, label: String) -> Asked {
        func failure(_ detail: String) -> Asked {
            .failed(HeapCaptureFailure(label: label, reason: .other, detail: detail))
        }
        guard let connection = connected(to: pid) else {
            return failure("the program's agent did not connect for captures on request (it ended, or has no agent)")
        }
        let file = memharness_open_unnamed_file(FileManager.default.temporaryDirectory.path)
        guard file >= 0 else { return failure("cannot open an unnamed file in the temporary folder: errno \(errno)") }
        let started = MonotonicClock.nanoseconds()
        let request = Array(("c" + label.prefix(62)).utf8)  // the agent reads 63 bytes at most
        guard memharness_send_descriptor(connection, request, UInt(request.count), file) == request.count else {
            close(file)
            return failure("the program ended before its capture was asked for")
        }
        let answer = receive(on: connection, until: started + Self.answerLimitNanoseconds)
        guard answer.first == UInt8(ascii: "w") else {
            close(file)
            resume(connection)
            guard let first = answer.first else {
                return failure("the program ended, or did not answer within a minute, before its capture was written")
            }
            return failure(first == UInt8(ascii: "f") ? String(decoding: answer.dropFirst(), as: UTF8.self) : "?")
        }
        return .held(Pending(connection: connection, file: file, started: started))
    }

    /// The captures' cost as metrics: the median pause (milliseconds) and bytes; none before a capture was taken.
    var costMetrics: [Metric] {
        guard let pause = Statistics.median(pauses.map(Double.init)),
            let written = Statistics.median(bytes.map(Double.init))
        else { return [] }
        return [
            Metric(name: ServerPlan.heapCapturePause, value: pause / 1_000_000, unit: .milliseconds),
            Metric(name: ServerPlan.heapCaptureBytes, value: written, unit: .bytes),
        ]
    }

    /// The program's connection: accepted at the first request (connections of any other process are closed).
    private func connected(to pid: Int32) -> Int32? {
        if connection >= 0 { return connection }
        let limit = MonotonicClock.nanoseconds() + Self.connectLimitNanoseconds
        while MonotonicClock.nanoseconds() < limit {
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) > 0 else { continue }
            let accepted = accept(listener, nil, nil)
            guard accepted >= 0 else { continue }
            _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
            if AbstractSocket.peer(of: accepted) == pid {
                connection = accepted
                return accepted
            }
            close(accepted)
        }
        return nil
    }

    /// One message from the agent; empty when the connection ended or nothing came before `deadline`.
    private func receive(on connection: Int32, until deadline: Int64) -> [UInt8] {
        var ready = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        while true {
            let left = (deadline - MonotonicClock.nanoseconds()) / 1_000_000
            guard left > 0 else { return [] }
            let polled = poll(&ready, 1, Int32(min(left, 1_000)))
            if polled > 0 { break }
            if polled < 0 && errno != EINTR { return [] }
        }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = recv(connection, &buffer, buffer.count, 0)
        return count > 0 ? Array(buffer.prefix(count)) : []
    }

    /// The answer that lets the program run again.
    func resume(_ connection: Int32) {
        var byte = UInt8(ascii: "r")
        _ = send(connection, &byte, 1, Int32(MSG_NOSIGNAL))
    }
}
