#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Reads the user's input files (scenarios, baselines, report records) with the checks every input
/// gets: a regular file (a directory, FIFO or device is refused before it could block or flood), a
/// size limit, and for text, UTF-8.
public enum InputFile {
    /// Why an input file was refused.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var path: String
        /// What is wrong, without the path: `is a directory; expected a scenario file`.
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// The bytes of `path`; `what` names the file's role in messages (`scenario file`).
    public static func read(_ path: String, maximumBytes: Int, what: String) throws(Failure) -> [UInt8] {
        func failure(_ reason: String) -> Failure { Failure(path: path, reason: reason) }
        // O_NONBLOCK: opening a FIFO must not wait for a writer; the type check below refuses it.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw failure("cannot read the \(what): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw failure("cannot read the \(what): \(String(cString: strerror(errno)))")
        }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else {
            let name = kind == S_IFDIR ? "a directory" : kind == S_IFIFO ? "a FIFO" : "a device or other special file"
            throw failure("is \(name); expected a \(what)")
        }
        guard Int(status.st_size) <= maximumBytes else {
            throw failure(
                "the \(what) is \(Units.formatBytes(Int(status.st_size))); the largest read is \(Units.formatBytes(maximumBytes))"
            )
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw failure("cannot read the \(what): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += chunk[0..<count]
            // A file that grew since `fstat` is still held to the limit.
            guard bytes.count <= maximumBytes else {
                throw failure("the \(what) is larger than \(Units.formatBytes(maximumBytes))")
            }
        }
        return bytes
    }

    /// The text of `path`: `read(_:maximumBytes:what:)`, refused unless it is UTF-8.
    public static func readText(_ path: String, maximumBytes: Int, what: String) throws(Failure) -> String {
        let bytes = try read(path, maximumBytes: maximumBytes, what: what)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Failure(path: path, reason: "is not UTF-8 text; expected a \(what)")
        }
        return text
    }
}
