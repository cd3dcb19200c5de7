import Symbols

#if canImport(Glibc)
    import Glibc
#else
    #error("memharness builds on Linux only: another process's memory is read through /proc/PID/mem")
#endif

/// The memory of the process a heap capture was taken of, read with every read checked against its mappings: this
/// process (a workload's own captures), or another one held at its exit (a program under `profile`), read through
/// `/proc/PID/mem` as swift-inspect reads a live process. A parent may read its child's memory (`ptrace` access mode
/// "read", which a parent has over the child it started).
public final class TargetMemory {
    /// Where the bytes come from.
    private enum Source {
        case thisProcess
        /// An open `/proc/PID/mem`, and the pages read from it so far.
        case process(pid: Int32, descriptor: Int32)
    }

    private let source: Source
    /// The target's mappings, read when this value was made.
    public let maps: ProcessMaps
    /// Pages of another process read so far, by page number: naming reads the same metadata and descriptors again
    /// and again. Bounded: past `cachedPagesLimit` pages the cache starts over.
    private var pages: [UInt64: [UInt8]] = [:]
    private static let pageSize: UInt64 = 4096
    private static let cachedPagesLimit = 16_384

    /// This process's memory.
    public init() {
        source = .thisProcess
        maps = ProcessMaps.read()
    }

    /// The memory of process `pid`, nil when it cannot be opened (it has ended, or this process may not read it).
    public init?(pid: Int32) {
        let descriptor = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        source = .process(pid: pid, descriptor: descriptor)
        maps = ProcessMaps.read(pid: pid)
    }

    deinit {
        if case .process(_, let descriptor) = source { close(descriptor) }
    }

    /// True when the memory is this process's own.
    public var isThisProcess: Bool {
        if case .thisProcess = source { return true }
        return false
    }

    /// The process whose memory this is, nil for this process.
    public var processID: Int32? {
        if case .process(let pid, _) = source { return pid }
        return nil
    }

    /// The value of type `T` at `address`, nil when those bytes are not readable.
    public func load<T: BitwiseCopyable>(_ address: UInt64, as type: T.Type = T.self) -> T? {
        let size = MemoryLayout<T>.size
        switch source {
        case .thisProcess:
            guard maps.isReadable(address, length: size), let pointer = UnsafeRawPointer(bitPattern: UInt(address))
            else { return nil }
            return pointer.loadUnaligned(as: T.self)
        case .process:
            return withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer -> T? in
                guard let base = buffer.baseAddress, copy(address, count: size, into: base) else { return nil }
                return buffer.loadUnaligned(as: T.self)
            }
        }
    }

    /// Copies `count` bytes from `address` into `destination`; false (nothing copied) when they are not all readable.
    public func copy(_ address: UInt64, count: Int, into destination: UnsafeMutableRawPointer) -> Bool {
        guard count > 0 else { return true }
        guard maps.isReadable(address, length: count) else { return false }
        switch source {
        case .thisProcess:
            guard let pointer = UnsafeRawPointer(bitPattern: UInt(address)) else { return false }
            destination.copyMemory(from: pointer, byteCount: count)
            return true
        case .process(_, let descriptor):
            return copyPages(address, count: count, into: destination, descriptor: descriptor)
        }
    }

    /// The NUL-terminated string at `address`, at most `limit` bytes; nil when unreadable or longer.
    public func cString(_ address: UInt64, limit: Int = 4096) -> String? {
        var bytes: [UInt8] = []
        for index in 0..<UInt64(limit) {
            guard let byte: UInt8 = load(address + index) else { return nil }
            if byte == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }

    /// The length of the NUL-terminated string at `address` (0 when unreadable or past `limit`).
    func stringLength(_ address: UInt64, limit: Int = 1 << 16) -> Int {
        if isThisProcess, maps.isReadable(address, length: 1),
            let pointer = UnsafePointer<CChar>(bitPattern: UInt(address))
        {
            // Bounded by the readable bytes from `address` on.
            let readable = maps.readableLength(from: address)
            let length = strnlen(pointer, min(readable, limit))
            return length < min(readable, limit) ? length : 0
        }
        for index in 0..<limit {
            guard let byte: UInt8 = load(address + UInt64(index)) else { return 0 }
            if byte == 0 { return index }
        }
        return 0
    }

    /// Copies through whole cached pages of another process.
    private func copyPages(_ address: UInt64, count: Int, into destination: UnsafeMutableRawPointer, descriptor: Int32)
        -> Bool
    {
        var copied = 0
        while copied < count {
            let current = address + UInt64(copied)
            let page = current / Self.pageSize
            guard let bytes = self.page(page, descriptor: descriptor) else { return false }
            let offset = Int(current - page * Self.pageSize)
            let length = min(count - copied, bytes.count - offset)
            guard length > 0 else { return false }
            bytes.withUnsafeBytes { page in
                guard let base = page.baseAddress else { return }
                (destination + copied).copyMemory(from: base + offset, byteCount: length)
            }
            copied += length
        }
        return true
    }

    private func page(_ number: UInt64, descriptor: Int32) -> [UInt8]? {
        if let known = pages[number] { return known }
        if pages.count >= Self.cachedPagesLimit { pages.removeAll(keepingCapacity: true) }
        var bytes = [UInt8](repeating: 0, count: Int(Self.pageSize))
        let start = off_t(Int64(bitPattern: number * Self.pageSize))
        var read = 0
        while read < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return pread(descriptor, base + read, buffer.count - read, start + off_t(read))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            read += count
        }
        guard read == bytes.count else { return nil }
        pages[number] = bytes
        return bytes
    }
}
