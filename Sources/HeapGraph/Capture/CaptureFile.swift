import Attribution

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A heap capture as the agent writes it (`memharness_agent_capture_heap`): the raw facts, unnamed. Its header,
/// modules, threads, roots and stacks are read at once; its blocks and edges (56 bytes a block and an edge) are
/// streamed from the file when asked for, so that a reader fills its own columns without a copy of them in between.
///
/// The format (little-endian, no padding; version 2): the agent's shared first line `memharness-agent-capture 2`
/// (`AgentFileHeader`), flags (u32, bit 0: a thread ran on; bit 1: blocks went untracked or stayed listed after their
/// release), the time (u64, ns since the case process started), the threads signalled and
/// those that did not stop (u32 each), the label (64 bytes, NUL-padded); then sections, each a u64 count and its
/// entries: modules (base u64, path length u32, path), writable segments (start, end, module: u64 each),
/// threads (tid u32, state u32 — 1 stopped, 2 the capturing thread —, sp, pc, thread pointer: u64 each, name
/// 16 bytes, frame count u32, u32 0, then (frame pointer, return address) u64 pairs), roots (kind u32 — 1 global,
/// 2 stack, 3 register, 4 TLS, 5 a word of a block the harness allocated for itself —, owner u32 — the module for a
/// global, else the thread —, slot u64 — the register's number for a register —, target block u64), blocks (address, size-class bytes, first word,
/// second word, the allocation stack's id: u64 each), edges (from block u32, to block u32, byte offset u64), stacks
/// (id u32, depth u32, return addresses u64 each: every stack a block names). Blocks are sorted by address; roots and
/// edges index them. With the heap tracked, every block allocated after the agent started has its stack.
public struct CaptureFile: Sendable {
    public struct Module: Sendable, Hashable {
        public var baseAddress: UInt64
        /// The file's path; empty for the main executable as the loader names it.
        public var path: String
    }

    public struct Segment: Sendable, Hashable {
        public var start: UInt64
        public var end: UInt64
        public var module: Int
    }

    public struct Thread: Sendable, Hashable {
        public var id: Int32
        /// False for the thread that took the capture (it was running it, not stopped).
        public var wasStopped: Bool
        public var stackPointer: UInt64
        public var programCounter: UInt64
        public var threadPointer: UInt64
        public var name: String
        /// (frame address, return address) from the innermost frame out.
        public var frames: [(frame: UInt64, returnAddress: UInt64)]

        public static func == (lhs: Thread, rhs: Thread) -> Bool {
            lhs.id == rhs.id && lhs.stackPointer == rhs.stackPointer && lhs.frames.count == rhs.frames.count
        }
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    }

    public enum RootKind: UInt32, Sendable, Hashable {
        case global = 1
        case stack, register, threadLocal
        /// A word of a block the harness allocated for itself (the block is in no capture; what it points at is kept).
        case harness
    }

    public struct Root: Sendable, Hashable {
        public var kind: RootKind
        /// The module (globals) or thread (the rest) index.
        public var owner: Int
        /// The slot's address, or the register's number in the signal context.
        public var slot: UInt64
        public var target: Int
    }

    /// One block as the capture lists it.
    public struct Block: Sendable, Hashable {
        public var address: UInt64
        /// The block's size class, bytes.
        public var sizeBytes: UInt64
        /// The block's first two words (a Swift object's metadata pointer and refcount); 0 past a small block.
        public var firstWord: UInt64
        public var secondWord: UInt64
        /// The id of the block's allocation stack in `stacks` (0: none recorded, as for the blocks of the agent's
        /// own start-up).
        public var stackID: UInt32
    }

    public var version: UInt32
    /// A thread did not stop (it blocks the stop signal): pointers it moved during the capture may be missed; or the
    /// agent lost track of some blocks (allocated or freed by signal handlers past what it could defer).
    public var isApproximate: Bool
    public var timeNanoseconds: Int64
    public var threadsSignalled: Int
    public var threadsNotStopped: Int
    public var label: String
    public var modules: [Module]
    public var segments: [Segment]
    public var threads: [Thread]
    public var roots: [Root]
    /// Number of blocks; `forEachBlock` reads them, in address order.
    public private(set) var blockCount: Int
    /// Number of edges; `forEachEdge` reads them, grouped by source block.
    public private(set) var edgeCount: Int
    /// Return addresses of each stack id, innermost first.
    public var stacks: [UInt32: [UInt64]]

    /// Where the blocks and edges are: they are read when asked for, never held (a million blocks are 56 MB of
    /// file, which the snapshot's columns need to hold once, not twice).
    private let source: Source
    /// The byte offsets, in `source`, of the first block and of the first edge.
    private let blocksAt: Int
    private let edgesAt: Int

    private enum Source: Sendable {
        /// The file at this path, read again in chunks.
        case file(String)
        /// The blocks and edges sections, copied (a capture given as bytes, as tests read one).
        case bytes([UInt8])
        /// A part of an open file (the harness's captures, in a file with no name), read again in chunks.
        case descriptor(OpenFile, base: Int, length: Int)
    }
}

/// A descriptor of its own (a duplicate), closed when the last capture reading it is gone.
final class OpenFile: Sendable {
    let descriptor: Int32
    init?(duplicating descriptor: Int32) {
        let own = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard own >= 0 else { return nil }
        self.descriptor = own
    }
    deinit { close(descriptor) }
}

/// Why a capture file could not be read.
public struct CaptureFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public var offset: Int
    public var description: String {
        offset == 0 && !reason.hasPrefix("truncated")
            ? "heap capture: \(reason)"
            : "heap capture: \(reason) at byte \(offset); the file is damaged or not a capture"
    }
}

extension CaptureFile {
    /// Reads a capture from its bytes (copied: the blocks and edges are read from the copy when asked for).
    public init(bytes: UnsafeRawBufferPointer) throws(CaptureFileError) {
        var reader = ByteReader(bytes: bytes)
        try self.init(reader: &reader, source: .bytes(Array(bytes)))
    }

    /// Reads the capture file at `path`: its header, modules, threads, roots and stacks now, through a buffer of
    /// 1 MiB; its blocks and edges later, from the file again, when `forEachBlock` and `forEachEdge` ask for them.
    public init(path: String) throws(CaptureFileError) {
        var reader = try ByteReader(path: path)
        try self.init(reader: &reader, source: .file(path))
    }

    /// Reads the capture that takes `length` bytes from `offset` of the open file `descriptor` (which it duplicates:
    /// the caller may close its own), as `init(path:)` reads a file.
    public init(descriptor: Int32, offset: Int, length: Int) throws(CaptureFileError) {
        guard let file = OpenFile(duplicating: descriptor) else {
            throw CaptureFileError(reason: "cannot duplicate descriptor \(descriptor) (errno \(errno))", offset: 0)
        }
        var reader = ByteReader(descriptor: file.descriptor, base: offset, count: length)
        try self.init(reader: &reader, source: .descriptor(file, base: offset, length: length))
    }

    private init(reader: inout ByteReader, source: Source) throws(CaptureFileError) {
        let head = try reader.bytes(min(reader.count, 64))
        switch AgentFileHeader.check(head, expected: .capture) {
        case .failure(let problem): throw CaptureFileError(reason: problem.description, offset: 0)
        case .success(let length): reader.seek(to: length)
        }
        version = UInt32(AgentFileHeader.Kind.capture.supportedVersion)
        isApproximate = try reader.u32() & 3 != 0
        timeNanoseconds = Int64(bitPattern: try reader.u64())
        threadsSignalled = Int(try reader.u32())
        threadsNotStopped = Int(try reader.u32())
        label = try reader.text(64)
        modules = try reader.section { reader throws(CaptureFileError) in
            let base = try reader.u64()
            return Module(baseAddress: base, path: try reader.text(Int(try reader.u32())))
        }
        segments = try reader.section { reader throws(CaptureFileError) in
            Segment(start: try reader.u64(), end: try reader.u64(), module: Int(try reader.u64()))
        }
        threads = try reader.section { reader throws(CaptureFileError) in try Self.thread(&reader) }
        roots = try reader.section { reader throws(CaptureFileError) in
            let at = reader.offset
            guard let kind = RootKind(rawValue: try reader.u32()) else {
                throw CaptureFileError(reason: "unknown root kind", offset: at)
            }
            return Root(kind: kind, owner: Int(try reader.u32()), slot: try reader.u64(), target: Int(try reader.u64()))
        }
        // Blocks and edges have fixed sizes: they are stepped over here and read when asked for.
        blockCount = try reader.count(entryBytes: 40)
        blocksAt = reader.offset
        reader.seek(to: blocksAt + 40 * blockCount)
        edgeCount = try reader.count(entryBytes: 16)
        edgesAt = reader.offset
        reader.seek(to: edgesAt + 16 * edgeCount)
        stacks = try Self.stacks(&reader)
        self.source = source
        guard roots.allSatisfy({ $0.target < blockCount }) else {
            throw CaptureFileError(reason: "a root points past the blocks", offset: reader.offset)
        }
    }

    /// Reads the blocks in address order, handing each to `body`; throws when they are not in strictly
    /// ascending address order (the agent writes them so, and the snapshot's order depends on it).
    public func forEachBlock(_ body: (Block) -> Void) throws(CaptureFileError) {
        try withReader(at: blocksAt) { reader throws(CaptureFileError) in
            var previous: UInt64?
            for _ in 0..<blockCount {
                let at = reader.offset
                let block = Block(
                    address: try reader.u64(), sizeBytes: try reader.u64(), firstWord: try reader.u64(),
                    secondWord: try reader.u64(), stackID: UInt32(truncatingIfNeeded: try reader.u64()))
                if let previous, block.address <= previous {
                    throw CaptureFileError(reason: "blocks out of address order", offset: at)
                }
                previous = block.address
                body(block)
            }
        }
    }

    /// Reads the edges in the file's order (grouped by source block): source and target block indices and the
    /// byte offset of the reference in the source.
    public func forEachEdge(_ body: (_ from: UInt32, _ to: UInt32, _ byteOffset: UInt64) -> Void)
        throws(CaptureFileError)
    {
        try withReader(at: edgesAt) { reader throws(CaptureFileError) in
            for _ in 0..<edgeCount {
                let at = reader.offset
                let from = try reader.u32()
                let to = try reader.u32()
                let offset = try reader.u64()
                guard Int(from) < blockCount, Int(to) < blockCount else {
                    throw CaptureFileError(reason: "an edge points past the blocks", offset: at)
                }
                body(from, to, offset)
            }
        }
    }

    private func withReader(
        at offset: Int, _ body: (inout ByteReader) throws(CaptureFileError) -> Void
    ) throws(CaptureFileError) {
        switch source {
        case .file(let path):
            var reader = try ByteReader(path: path)
            reader.seek(to: offset)
            try body(&reader)
        case .descriptor(let file, let base, let length):
            var reader = ByteReader(descriptor: file.descriptor, base: base, count: length)
            reader.seek(to: offset)
            try body(&reader)
        case .bytes(let bytes):
            let result = bytes.withUnsafeBytes { raw in
                var reader = ByteReader(bytes: raw)
                reader.seek(to: offset)
                return Result { () throws(CaptureFileError) in try body(&reader) }
            }
            try result.get()
        }
    }

    private static func stacks(_ reader: inout ByteReader) throws(CaptureFileError) -> [UInt32: [UInt64]] {
        var stacks: [UInt32: [UInt64]] = [:]
        let stackCount = try reader.count(entryBytes: 8)
        for _ in 0..<stackCount {
            let id = try reader.u32()
            let depth = Int(try reader.u32())
            var frames: [UInt64] = []
            frames.reserveCapacity(min(depth, 1024))
            for _ in 0..<depth { frames.append(try reader.u64()) }
            stacks[id] = frames
        }
        return stacks
    }

    private static func thread(_ reader: inout ByteReader) throws(CaptureFileError) -> Thread {
        let id = Int32(bitPattern: try reader.u32())
        let state = try reader.u32()
        let sp = try reader.u64()
        let pc = try reader.u64()
        let tp = try reader.u64()
        let name = try reader.text(16)
        let depth = Int(try reader.u32())
        _ = try reader.u32()
        var frames: [(frame: UInt64, returnAddress: UInt64)] = []
        for _ in 0..<depth { frames.append((try reader.u64(), try reader.u64())) }
        return Thread(
            id: id, wasStopped: state == 1, stackPointer: sp, programCounter: pc, threadPointer: tp, name: name,
            frames: frames)
    }
}

/// Little-endian reads from a capture's bytes, each checked against their end: bytes in memory, or a file read
/// with `pread` through a buffer of `chunkBytes`, refilled as the reads move on (never the whole file at once).
struct ByteReader: ~Copyable {
    /// Bytes from `windowStart` to `windowEnd` of the capture, from the start of `window`.
    private let window: UnsafeRawBufferPointer
    private var windowStart = 0
    private var windowEnd: Int
    /// The file and the buffer its chunks are read into; -1 and nil for bytes in memory.
    private let descriptor: Int32
    /// True when the reader opened `descriptor` (and closes it).
    private let ownsDescriptor: Bool
    /// Where the capture starts in the file.
    private let base: Int
    private let buffer: UnsafeMutableRawBufferPointer?
    /// The capture's length, bytes.
    let count: Int
    /// Where the next read starts, bytes from the capture's start.
    private(set) var offset = 0

    static let chunkBytes = 1 << 20

    init(bytes: UnsafeRawBufferPointer) {
        window = bytes
        windowEnd = bytes.count
        count = bytes.count
        descriptor = -1
        ownsDescriptor = false
        base = 0
        buffer = nil
    }

    /// The `count` bytes from `base` of an open file the caller keeps open while the reader lives.
    init(descriptor: Int32, base: Int, count: Int) {
        self.descriptor = descriptor
        ownsDescriptor = false
        self.base = base
        self.count = count
        windowEnd = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkBytes, alignment: 16)
        self.buffer = buffer
        window = UnsafeRawBufferPointer(buffer)
    }

    init(path: String) throws(CaptureFileError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CaptureFileError(reason: "cannot open \(path) (errno \(errno))", offset: 0)
        }
        let end = lseek(descriptor, 0, SEEK_END)
        guard end >= 0 else {
            close(descriptor)
            throw CaptureFileError(reason: "cannot seek in \(path) (errno \(errno))", offset: 0)
        }
        self.descriptor = descriptor
        ownsDescriptor = true
        base = 0
        count = Int(end)
        windowEnd = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkBytes, alignment: 16)
        self.buffer = buffer
        window = UnsafeRawBufferPointer(buffer)
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
        buffer?.deallocate()
    }

    /// Moves the next read to `offset` (a file's buffer is refilled there when it does not hold it).
    mutating func seek(to offset: Int) {
        if buffer != nil, offset < windowStart || offset > windowEnd {
            windowStart = offset
            windowEnd = offset
        }
        self.offset = offset
    }

    mutating func u32() throws(CaptureFileError) -> UInt32 {
        if offset + 4 > windowEnd { try refill(4) }
        defer { offset += 4 }
        return UInt32(littleEndian: window.loadUnaligned(fromByteOffset: offset - windowStart, as: UInt32.self))
    }

    mutating func u64() throws(CaptureFileError) -> UInt64 {
        if offset + 8 > windowEnd { try refill(8) }
        defer { offset += 8 }
        return UInt64(littleEndian: window.loadUnaligned(fromByteOffset: offset - windowStart, as: UInt64.self))
    }

    /// The next `length` bytes as they are.
    mutating func bytes(_ length: Int) throws(CaptureFileError) -> [UInt8] {
        guard length >= 0, length <= Self.chunkBytes, offset + length <= count else {
            throw CaptureFileError(reason: "truncated", offset: offset)
        }
        if offset + length > windowEnd { try refill(length) }
        defer { offset += length }
        return Array(UnsafeRawBufferPointer(rebasing: window[(offset - windowStart)..<(offset - windowStart + length)]))
    }

    /// `length` bytes as text up to the first NUL.
    mutating func text(_ length: Int) throws(CaptureFileError) -> String {
        guard length >= 0, length <= Self.chunkBytes, offset + length <= count else {
            throw CaptureFileError(reason: "truncated text", offset: offset)
        }
        if offset + length > windowEnd { try refill(length) }
        defer { offset += length }
        let bytes = UnsafeRawBufferPointer(rebasing: window[(offset - windowStart)..<(offset - windowStart + length)])
        let end = bytes.firstIndex(of: 0) ?? length
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
    }

    /// Makes the window hold `length` bytes from `offset`, reading the file from there on.
    private mutating func refill(_ length: Int) throws(CaptureFileError) {
        guard offset + length <= count, let buffer, let start = buffer.baseAddress else {
            throw CaptureFileError(reason: "truncated", offset: offset)
        }
        let wanted = min(buffer.count, count - offset)
        var filled = 0
        while filled < wanted {
            let read = pread(descriptor, start + filled, wanted - filled, off_t(base + offset + filled))
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else {
                throw CaptureFileError(reason: "cannot read the file (errno \(read < 0 ? errno : 0))", offset: offset)
            }
            filled += read
        }
        windowStart = offset
        windowEnd = offset + filled
    }

    /// A section's count, checked against what is left (each entry at least `entryBytes` long).
    mutating func count(entryBytes: Int) throws(CaptureFileError) -> Int {
        let at = offset
        let count = try u64()
        guard count <= UInt64(max(self.count - offset, 0) / entryBytes) else {
            throw CaptureFileError(reason: "a section of \(count) entries does not fit in the file", offset: at)
        }
        return Int(count)
    }

    mutating func section<Entry>(_ entry: (inout ByteReader) throws(CaptureFileError) -> Entry)
        throws(CaptureFileError) -> [Entry]
    {
        let count = try count(entryBytes: 8)
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count { entries.append(try entry(&self)) }
        return entries
    }
}
