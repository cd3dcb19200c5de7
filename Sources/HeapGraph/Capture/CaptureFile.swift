/// A heap capture as the agent writes it (`memharness_agent_capture_heap`), read whole: the raw facts, unnamed.
///
/// The format (little-endian, no padding; version 1): the magic `MHHEAP01`, the version (u32), flags (u32, bit 0:
/// approximate, a thread ran on), the time (u64, ns since the case process started), the threads signalled and
/// those that did not stop (u32 each), the label (64 bytes, NUL-padded); then sections, each a u64 count and its
/// entries: modules (base u64, path length u32, path), writable segments (start, end, module: u64 each),
/// threads (tid u32, state u32 — 1 stopped, 2 the capturing thread —, sp, pc, thread pointer: u64 each, name
/// 16 bytes, frame count u32, u32 0, then (frame pointer, return address) u64 pairs), roots (kind u32 — 1 global,
/// 2 stack, 3 register, 4 TLS —, owner u32 — the module for a global, else the thread —, slot u64 — the
/// register's number for a register —, target block u64), blocks (address, size-class bytes, first word,
/// second word, stack id: u64 each), edges (from block u32, to block u32, byte offset u64), stacks (id u32,
/// depth u32, return addresses u64 each). Blocks are sorted by address; roots, edges and stacks index them.
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
    }

    public struct Root: Sendable, Hashable {
        public var kind: RootKind
        /// The module (globals) or thread (the rest) index.
        public var owner: Int
        /// The slot's address, or the register's number in the signal context.
        public var slot: UInt64
        public var target: Int
    }

    public var version: UInt32
    /// A thread did not stop (it blocks the stop signal): pointers it moved during the capture may be missed.
    public var isApproximate: Bool
    public var timeNanoseconds: Int64
    public var threadsSignalled: Int
    public var threadsNotStopped: Int
    public var label: String
    public var modules: [Module]
    public var segments: [Segment]
    public var threads: [Thread]
    public var roots: [Root]
    /// Block columns, sorted by address.
    public var addresses: ContiguousArray<UInt64>
    public var sizes: ContiguousArray<UInt64>
    public var firstWords: ContiguousArray<UInt64>
    public var secondWords: ContiguousArray<UInt64>
    /// The agent's stack id of each sampled block (0: none).
    public var stackIDs: ContiguousArray<UInt32>
    /// Edge columns, grouped by source block.
    public var edgeSources: ContiguousArray<UInt32>
    public var edgeTargets: ContiguousArray<UInt32>
    public var edgeOffsets: ContiguousArray<UInt32>
    /// Return addresses of each stack id, innermost first.
    public var stacks: [UInt32: [UInt64]]
}

/// Why a capture file could not be read.
public struct CaptureFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public var offset: Int
    public var description: String { "heap capture: \(reason) at byte \(offset); the file is damaged or not a capture" }
}

extension CaptureFile {
    /// Reads a capture from its bytes.
    public init(bytes: UnsafeRawBufferPointer) throws(CaptureFileError) {
        var reader = ByteReader(bytes: bytes)
        guard bytes.count >= 8,
            String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<8]), as: UTF8.self)
                == "MHHEAP01"
        else { throw CaptureFileError(reason: "no MHHEAP01 magic", offset: 0) }
        reader.offset = 8
        version = try reader.u32()
        guard version == 1 else { throw CaptureFileError(reason: "version \(version), expected 1", offset: 8) }
        isApproximate = try reader.u32() & 1 != 0
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
        (addresses, sizes, firstWords, secondWords, stackIDs) = try Self.blocks(&reader)
        (edgeSources, edgeTargets, edgeOffsets) = try Self.edges(&reader, blockCount: addresses.count)
        stacks = [:]
        let stackCount = try reader.count(entryBytes: 8)
        for _ in 0..<stackCount {
            let id = try reader.u32()
            let depth = Int(try reader.u32())
            var frames: [UInt64] = []
            frames.reserveCapacity(depth)
            for _ in 0..<depth { frames.append(try reader.u64()) }
            stacks[id] = frames
        }
        guard roots.allSatisfy({ $0.target < addresses.count }) else {
            throw CaptureFileError(reason: "a root points past the blocks", offset: reader.offset)
        }
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

    private static func blocks(_ reader: inout ByteReader) throws(CaptureFileError) -> (
        ContiguousArray<UInt64>, ContiguousArray<UInt64>, ContiguousArray<UInt64>, ContiguousArray<UInt64>,
        ContiguousArray<UInt32>
    ) {
        let count = try reader.count(entryBytes: 40)
        var addresses = ContiguousArray<UInt64>(repeating: 0, count: count)
        var sizes = addresses
        var first = addresses
        var second = addresses
        var stacks = ContiguousArray<UInt32>(repeating: 0, count: count)
        for index in 0..<count {
            addresses[index] = try reader.u64()
            sizes[index] = try reader.u64()
            first[index] = try reader.u64()
            second[index] = try reader.u64()
            stacks[index] = UInt32(truncatingIfNeeded: try reader.u64())
        }
        return (addresses, sizes, first, second, stacks)
    }

    private static func edges(_ reader: inout ByteReader, blockCount: Int) throws(CaptureFileError) -> (
        ContiguousArray<UInt32>, ContiguousArray<UInt32>, ContiguousArray<UInt32>
    ) {
        let count = try reader.count(entryBytes: 16)
        var sources = ContiguousArray<UInt32>(repeating: 0, count: count)
        var targets = sources
        var offsets = sources
        for index in 0..<count {
            let at = reader.offset
            sources[index] = try reader.u32()
            targets[index] = try reader.u32()
            // An offset past 4 GiB (a reference deep inside a huge block) is kept at the last 32-bit value.
            offsets[index] = UInt32(clamping: try reader.u64())
            guard Int(sources[index]) < blockCount, Int(targets[index]) < blockCount else {
                throw CaptureFileError(reason: "an edge points past the blocks", offset: at)
            }
        }
        return (sources, targets, offsets)
    }
}

/// Little-endian reads from a byte buffer, each checked against its end.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    mutating func u32() throws(CaptureFileError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw CaptureFileError(reason: "truncated", offset: offset) }
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func u64() throws(CaptureFileError) -> UInt64 {
        guard offset + 8 <= bytes.count else { throw CaptureFileError(reason: "truncated", offset: offset) }
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// `length` bytes as text up to the first NUL.
    mutating func text(_ length: Int) throws(CaptureFileError) -> String {
        guard length >= 0, offset + length <= bytes.count else {
            throw CaptureFileError(reason: "truncated text", offset: offset)
        }
        defer { offset += length }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
        let end = slice.firstIndex(of: 0) ?? length
        return String(decoding: UnsafeRawBufferPointer(rebasing: slice[0..<end]), as: UTF8.self)
    }

    /// A section's count, checked against what is left (each entry at least `entryBytes` long).
    mutating func count(entryBytes: Int) throws(CaptureFileError) -> Int {
        let at = offset
        let count = try u64()
        guard count <= UInt64((bytes.count - offset) / entryBytes) else {
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
