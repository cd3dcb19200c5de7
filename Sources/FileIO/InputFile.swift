import HarnessModel

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
                "the \(what) is \(byteCount(Int(status.st_size))); the largest read is \(byteCount(maximumBytes))")
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
                throw failure("the \(what) is larger than \(byteCount(maximumBytes))")
            }
        }
        return bytes
    }

    /// The text of `path`: `read(_:maximumBytes:what:)`, refused unless it is UTF-8. A UTF-8
    /// byte-order mark at the start is dropped (editors on Windows write one).
    public static func readText(_ path: String, maximumBytes: Int, what: String) throws(Failure) -> String {
        var bytes = try read(path, maximumBytes: maximumBytes, what: what)[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let offset = firstInvalidUTF8Offset(bytes) ?? 0
            throw Failure(
                path: path,
                reason: "is not UTF-8 text (byte \(offset + 1) is not part of a UTF-8 character); expected a \(what)")
        }
        return text
    }

    /// The offset (from the start of `bytes`) of the first byte that is not part of valid UTF-8.
    static func firstInvalidUTF8Offset(_ bytes: ArraySlice<UInt8>) -> Int? {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// `1048576 bytes (1.00 MiB)`: exact, so a file one byte over the limit does not read as equal to it.
    static func byteCount(_ bytes: Int) -> String {
        "\(bytes) bytes (\(Units.formatBytes(bytes)))"
    }
}
