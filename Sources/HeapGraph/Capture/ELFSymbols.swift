import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The function and object symbols of one ELF file (its `.symtab`, else `.dynsym`), for naming roots and frames.
///
/// Why not `dladdr`: it sees only exported symbols, and a Swift executable exports none of its globals or
/// functions; the static symbol table has them all (unless the file was stripped: then nothing is named).
public struct ELFSymbols: Sendable {
    public struct Symbol: Sendable, Hashable {
        /// The symbol's address in the file (add the module's load base for the address in memory).
        public var value: UInt64
        public var size: UInt64
        public var name: String
    }

    /// One symbol as the table keeps it, 16 bytes: its name stays in the file's string table until a lookup asks for
    /// it (a debug build's table has hundreds of thousands of names, and a capture names a few hundred).
    private struct Entry: Sendable {
        var value: UInt64
        /// The symbol's size, clamped to 32 bits (no function or global is 4 GiB).
        var size: UInt32
        /// Where its name is in the file.
        var nameOffset: UInt32
    }

    /// The file, mapped: the string table the entries' names are in.
    private let file: MappedFile?
    /// Functions, sorted by value.
    private var functions: [Entry] = []
    /// Data objects (globals, statics, vtables, TLS), sorted by value.
    private var objects: [Entry] = []
    /// Where the string table ends in `file`.
    private var stringsEnd = 0

    /// The symbols of the file at `path`, read once per process: a case's captures name roots and frames of the same
    /// modules again and again, and a debug build's symbol table is tens of megabytes.
    public static func cached(path: String) -> ELFSymbols {
        if let known = cache.withLock({ $0[path] }) { return known }
        let table = ELFSymbols(path: path)
        cache.withLock { $0[path] = table }
        return table
    }

    private static let cache = Mutex<[String: ELFSymbols]>([:])

    /// Reads the symbols of the file at `path`; an empty table when it is not a readable 64-bit little-endian ELF.
    public init(path: String) {
        file = MappedFile(path: path)
        if let file { index(file.bytes) }
        functions.sort { $0.value < $1.value }
        objects.sort { $0.value < $1.value }
    }

    private mutating func index(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 64, bytes.load(as: UInt32.self) == 0x464C_457F, bytes[4] == 2, bytes[5] == 1 else { return }
        let sectionOffset = Int(bytes.loadUnaligned(fromByteOffset: 0x28, as: UInt64.self))
        let sectionSize = Int(bytes.loadUnaligned(fromByteOffset: 0x3A, as: UInt16.self))
        let sectionCount = Int(bytes.loadUnaligned(fromByteOffset: 0x3C, as: UInt16.self))
        guard sectionSize >= 64, sectionOffset > 0, sectionOffset + sectionSize * sectionCount <= bytes.count else {
            return
        }
        func section(_ index: Int) -> (type: UInt32, offset: Int, size: Int, link: Int) {
            let base = sectionOffset + index * sectionSize
            return (
                bytes.loadUnaligned(fromByteOffset: base + 4, as: UInt32.self),
                Int(bytes.loadUnaligned(fromByteOffset: base + 24, as: UInt64.self)),
                Int(bytes.loadUnaligned(fromByteOffset: base + 32, as: UInt64.self)),
                Int(bytes.loadUnaligned(fromByteOffset: base + 40, as: UInt32.self))
            )
        }
        let tables = (0..<sectionCount).map(section)
        // SHT_SYMTAB (2) when the file has one, else SHT_DYNSYM (11).
        guard let table = tables.first(where: { $0.type == 2 }) ?? tables.first(where: { $0.type == 11 }),
            table.link < tables.count, table.offset + table.size <= bytes.count
        else { return }
        let strings = tables[table.link]
        // Name offsets are kept in 32 bits: a string table past 4 GiB is not read.
        guard strings.offset + strings.size <= min(bytes.count, Int(UInt32.max)) else { return }
        stringsEnd = strings.offset + strings.size
        let entries = stride(from: table.offset, to: table.offset + table.size - 23, by: 24)
        // STT_OBJECT 1, STT_FUNC 2, STT_TLS 6; an undefined symbol has no value.
        func kind(_ entry: Int) -> UInt8? {
            let kind = bytes[entry + 4] & 0xF
            guard kind == 1 || kind == 2 || kind == 6,
                bytes.loadUnaligned(fromByteOffset: entry + 8, as: UInt64.self) != 0,
                bytes.loadUnaligned(fromByteOffset: entry, as: UInt32.self) < strings.size
            else { return nil }
            return kind
        }
        // Counted first, so that each table is allocated once at its size (no doubling left over).
        let functionCount = entries.reduce(0) { $0 + (kind($1) == 2 ? 1 : 0) }
        functions.reserveCapacity(functionCount)
        objects.reserveCapacity(entries.reduce(0) { $0 + (kind($1) != nil ? 1 : 0) } - functionCount)
        for entry in entries {
            guard let kind = kind(entry) else { continue }
            let symbol = Entry(
                value: bytes.loadUnaligned(fromByteOffset: entry + 8, as: UInt64.self),
                size: UInt32(clamping: bytes.loadUnaligned(fromByteOffset: entry + 16, as: UInt64.self)),
                nameOffset: UInt32(strings.offset) + bytes.loadUnaligned(fromByteOffset: entry, as: UInt32.self))
            if kind == 2 { functions.append(symbol) } else { objects.append(symbol) }
        }
        // The symbol table is read: its pages leave the resident set (the names stay mapped, read on demand).
        file?.release(table.offset..<(table.offset + table.size))
    }

    /// Symbols in the file, functions and objects.
    public var count: Int { functions.count + objects.count }

    /// The function holding `value` (a file address): the last one starting at or before it, within its size
    /// when it has one.
    public func function(containing value: UInt64) -> Symbol? { lookUp(value, in: functions, slack: 1 << 20) }

    /// The data object holding `value` (a file address), within its size.
    public func object(containing value: UInt64) -> Symbol? { lookUp(value, in: objects, slack: 0) }

    private func lookUp(_ value: UInt64, in symbols: [Entry], slack: UInt64) -> Symbol? {
        var low = 0
        var high = symbols.count
        while low < high {
            let middle = (low + high) / 2
            if symbols[middle].value <= value { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let symbol = symbols[low - 1]
        let size = UInt64(symbol.size)
        // A symbol without a size (hand-written assembly) holds what follows it up to `slack` bytes.
        let end = size > 0 ? symbol.value + size : symbol.value + slack
        guard value < end || (size == 0 && slack > 0 && value - symbol.value < slack) else { return nil }
        return Symbol(value: symbol.value, size: size, name: name(at: Int(symbol.nameOffset)))
    }

    /// The NUL-terminated name at `offset` of the file, within the string table.
    private func name(at offset: Int) -> String {
        guard let base = file?.bytes.baseAddress, offset < stringsEnd else { return "" }
        let length = strnlen(base.advanced(by: offset).assumingMemoryBound(to: CChar.self), stringsEnd - offset)
        return String(decoding: UnsafeRawBufferPointer(start: base.advanced(by: offset), count: length), as: UTF8.self)
    }
}

/// A file mapped read-only, unmapped with the last reference to it.
private final class MappedFile: @unchecked Sendable {
    // Safety: the mapping is read-only and never remapped; `bytes` is set once in `init` and only read after.
    let bytes: UnsafeRawBufferPointer

    init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let size = lseek(descriptor, 0, SEEK_END)
        guard size > 0, let base = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, descriptor, 0), base != MAP_FAILED
        else { return nil }
        bytes = UnsafeRawBufferPointer(start: base, count: Int(size))
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }

    /// Takes the whole pages of `range` out of the resident set; they are read from the file again if touched (the
    /// mapping is private and never written, so nothing is lost).
    func release(_ range: Range<Int>) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (range.lowerBound + page - 1) / page * page
        let end = range.upperBound / page * page
        guard start < end, let base = bytes.baseAddress else { return }
        madvise(UnsafeMutableRawPointer(mutating: base + start), end - start, MADV_DONTNEED)
    }
}
