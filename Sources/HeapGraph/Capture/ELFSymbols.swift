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

    /// One symbol as the table keeps it: its name stays in the file's string table until a lookup asks for it (a
    /// debug build's table has hundreds of thousands of names, and a capture names a few hundred).
    private struct Entry: Sendable {
        var value: UInt64
        var size: UInt64
        var nameOffset: Int
    }

    /// The file, mapped: the string table the entries' names are in.
    private let file: Data
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
        self.init(file: (try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)) ?? Data())
    }

    private init(file: Data) {
        self.file = file
        file.withUnsafeBytes { bytes in index(bytes) }
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
        guard strings.offset + strings.size <= bytes.count else { return }
        stringsEnd = strings.offset + strings.size
        for entry in stride(from: table.offset, to: table.offset + table.size - 23, by: 24) {
            let info = bytes[entry + 4]
            let value = bytes.loadUnaligned(fromByteOffset: entry + 8, as: UInt64.self)
            let kind = info & 0xF
            // STT_OBJECT 1, STT_FUNC 2, STT_TLS 6; an undefined symbol has no value.
            guard kind == 1 || kind == 2 || kind == 6, value != 0 else { continue }
            let nameOffset = Int(bytes.loadUnaligned(fromByteOffset: entry, as: UInt32.self))
            guard nameOffset < strings.size else { continue }
            let size = bytes.loadUnaligned(fromByteOffset: entry + 16, as: UInt64.self)
            let symbol = Entry(value: value, size: size, nameOffset: strings.offset + nameOffset)
            if kind == 2 { functions.append(symbol) } else { objects.append(symbol) }
        }
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
        // A symbol without a size (hand-written assembly) holds what follows it up to `slack` bytes.
        let end = symbol.size > 0 ? symbol.value + symbol.size : symbol.value + slack
        guard value < end || (symbol.size == 0 && slack > 0 && value - symbol.value < slack) else { return nil }
        return Symbol(value: symbol.value, size: symbol.size, name: name(at: symbol.nameOffset))
    }

    /// The NUL-terminated name at `offset` of the file, within the string table.
    private func name(at offset: Int) -> String {
        file.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, offset < stringsEnd else { return "" }
            let length = strnlen(base.advanced(by: offset).assumingMemoryBound(to: CChar.self), stringsEnd - offset)
            return String(
                decoding: UnsafeRawBufferPointer(start: base.advanced(by: offset), count: length), as: UTF8.self)
        }
    }
}
