import Foundation
import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: a program is held at its exit through a Unix socket")
#endif

/// Holds a program at its exit while its heap capture is named from its memory (`MEMHARNESS_AGENT_HOLD_AT_EXIT`).
///
/// The agent in the program connects at the very end of its exit path, once its capture and files are written, and
/// waits for an answer. A thread of this process accepts: for the program started (`SO_PEERCRED` says which process
/// connected) it runs the reader while the program is held, then answers; any other process of the program's tree is
/// answered at once. The socket is in Linux's abstract namespace (no file to leave behind); when this process ends
/// the connection closes and a held program goes on exiting, and the agent never waits more than 10 minutes.
final class ExitHold<Result: Sendable>: Sendable {
    /// The name the agent connects to (`@` marks the abstract namespace).
    let name: String
    private let socket: Int32
    private let stopping = Atomic<Bool>(false)
    private let result = Mutex<Result?>(nil)
    private let thread = Mutex<DedicatedThread?>(nil)

    /// A listening socket, nil when one cannot be made (the program then exits unheld; its capture is named from
    /// its files).
    init?() {
        guard let (name, descriptor) = AbstractSocket.listen(prefix: "memharness-hold", type: SOCK_STREAM, backlog: 16)
        else { return nil }
        self.name = name
        socket = descriptor
    }

    deinit { close(socket) }

    /// Starts answering: `read` runs for process `program` while it is held, on a thread of its own (nil: it had
    /// nothing to read).
    func serve(program: Int32, read: @escaping @Sendable (Int32) -> Result?) {
        let started = DedicatedThread { [self] in
            while !stopping.load(ordering: .acquiring) {
                var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 100) > 0 else { continue }
                let connection = accept(socket, nil, nil)
                guard connection >= 0 else { continue }
                // A child another thread starts now would only keep a copy of the connection: the answer is a byte.
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                if AbstractSocket.peer(of: connection) == program, result.withLock({ $0 == nil }) {
                    let value = read(program)
                    result.withLock { $0 = value }
                }
                // The answer: the held process goes on exiting.
                var byte: UInt8 = 0x78
                _ = send(connection, &byte, 1, Int32(MSG_NOSIGNAL))
                close(connection)
            }
        }
        thread.withLock { $0 = started }
    }

    /// Stops answering (once the program has ended) and gives what `read` returned, nil when the program was never
    /// held (it was killed, or ended before its exit handlers ran).
    func finish() -> Result? {
        stopping.store(true, ordering: .releasing)
        thread.withLock { $0 }?.join()
        return result.withLock { $0 }
    }

}

/// Unix sockets in Linux's abstract namespace (no file to leave behind), between the harness and the agent in a
/// program it runs.
enum AbstractSocket {
    /// A socket of `type` listening on a fresh name (`@PREFIX-PID-RANDOM`: `@` marks the abstract namespace); nil when
    /// one cannot be made.
    static func listen(prefix: String, type: __socket_type, backlog: Int32) -> (name: String, descriptor: Int32)? {
        let name = "@\(prefix)-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let descriptor = Glibc.socket(AF_UNIX, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() where index < path.count { path[index] = byte }
            path[0] = 0  // the abstract namespace
        }
        let size = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) }
        }
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path), bound == 0,
            Glibc.listen(descriptor, backlog) == 0
        else {
            close(descriptor)
            return nil
        }
        return (name, descriptor)
    }

    /// The process at the other end of a connection (`SO_PEERCRED`'s `struct ucred`: pid, uid, gid, which Glibc's
    /// Swift module leaves out).
    static func peer(of connection: Int32) -> Int32? {
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var size = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 else { return nil }
        return credentials.pid
    }
}
