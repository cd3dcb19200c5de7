import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One ELF file's function and object symbols (its `.symtab`, else `.dynsym`), for naming frames, roots and
/// metadata; its executable segments (where its code is once loaded); and its Swift reflection sections.
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
    /// The symbol table, indexed on the first lookup: a capture's reader opens every module for its reflection
    /// sections and segments, and looks symbols up in few of them.
    private let index = SymbolIndex()

    /// Functions and data objects (globals, statics, vtables, TLS), each sorted by value, and where the string table
    /// ends in the file.
    private struct Tables: Sendable {
        var functions: [Entry] = []
        var objects: [Entry] = []
        var stringsEnd = 0
    }

    private final class SymbolIndex: Sendable {
        private let tables = Mutex<Tables?>(nil)

        func tables(_ build: () -> Tables) -> Tables {
            tables.withLock { known in
                if let known { return known }
                let made = build()
                known = made
                return made
            }
        }
    }

    private var tables: Tables {
        index.tables { file.map { Self.readSymbols($0) } ?? Tables() }
    }
    /// The file's `PT_LOAD` segments (code and data), as file virtual addresses (add the load bias for the process's).
    public private(set) var loadSegments: [Range<UInt64>] = []
    /// Where each of `loadSegments` starts in the file.
    private var loadSegmentOffsets: [UInt64] = []
    /// Sections by name, for those the naming reads (`swift5_fieldmd` and the other reflection sections).
    private var sections: [String: Section] = [:]
    /// The file has DWARF line tables (`.debug_line`), or names a separate debug file (`.gnu_debuglink`) that is
    /// installed where debuggers look for it: a symbolizer can give its code's file:line. Without them it can only
    /// read the symbol table, as this value does.
    public private(set) var hasLineInformation = false

    /// A named section: where it is in the file and where it is once loaded.
    public struct Section: Sendable, Hashable {
        /// Its address in the file's virtual addresses (add the load bias for the process's).
        public var address: UInt64
        /// Where its bytes are in the file.
        public var fileOffset: Int
        public var size: Int
    }

    /// The Swift reflection sections the naming reads (field records, captures, type references and their strings).
    public static let reflectionSectionNames: Set<String> = [
        "swift5_fieldmd", "swift5_assocty", "swift5_builtin", "swift5_capture", "swift5_typeref", "swift5_reflstr",
    ]

    /// The table of the file at `path`, read once per process and file: a case's captures name roots and frames of the
    /// same modules again and again, and a debug build's symbol table is tens of megabytes. A file replaced at the
    /// same path (a rebuilt binary, between two commits of a bisection) is read again.
    public static func cached(path: String) -> ELFSymbols {
        let identity = FileIdentity(path: path)
        if let known = cache.withLock({ $0[path] }), known.identity == identity { return known.table }
        let table = ELFSymbols(path: path)
        cache.withLock { $0[path] = (identity, table) }
        return table
    }

    private static let cache = Mutex<[String: (identity: FileIdentity?, table: ELFSymbols)]>([:])

    /// What tells one file at a path from another put there later.
    private struct FileIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int

        init?(path: String) {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            modified = status.st_mtim.tv_sec * 1_000_000_000 + status.st_mtim.tv_nsec
        }
    }

    /// Reads the symbols of the file at `path`; an empty table when it is not a readable 64-bit little-endian ELF.
    public init(path: String) {
        file = MappedFile(path: path)
        if let file { index(file.bytes, path: path) }
    }

    private mutating func index(_ bytes: UnsafeRawBufferPointer, path: String) {
        guard bytes.count > 64, bytes.load(as: UInt32.self) == 0x464C_457F, bytes[4] == 2, bytes[5] == 1 else { return }
        readSegments(bytes)
        readSections(bytes)
        hasLineInformation =
            sections[".debug_line"] != nil || Self.debugFileInstalled(link: sections[".gnu_debuglink"], bytes, path)
    }

    /// Whether the separate debug file a `.gnu_debuglink` section names is where GDB and llvm-symbolizer look: beside
    /// the file, in its `.debug` folder, under /usr/lib/debug (by its path, or by build id: any such folder counts).
    private static func debugFileInstalled(link: Section?, _ bytes: UnsafeRawBufferPointer, _ path: String) -> Bool {
        guard let link, link.fileOffset + link.size <= bytes.count else { return false }
        let name = bytes[link.fileOffset..<(link.fileOffset + link.size)].prefix { $0 != 0 }
        let file = String(decoding: UnsafeRawBufferPointer(rebasing: name), as: UTF8.self)
        let folder = (path as NSString).deletingLastPathComponent
        let candidates = [
            "\(folder)/\(file)", "\(folder)/.debug/\(file)", "/usr/lib/debug\(folder)/\(file)",
            "/usr/lib/debug/.build-id",
        ]
        return !file.isEmpty && candidates.contains { access($0, F_OK) == 0 && $0 != path }
    }

    /// The file virtual address that the file's byte `offset` is loaded at (a `PT_LOAD` segment maps its bytes at its
    /// address), nil when no segment holds it: what a mapping of the file at `offset` says of the load bias.
    public func loadedAddress(ofFileOffset offset: UInt64) -> UInt64? {
        for (segment, start) in zip(loadSegments, loadSegmentOffsets)
        where offset >= start && offset - start < segment.upperBound - segment.lowerBound {
            return segment.lowerBound + (offset - start)
        }
        return nil
    }

    /// The `PT_LOAD` segments (type 1) of the program header table.
    private mutating func readSegments(_ bytes: UnsafeRawBufferPointer) {
        let tableOffset = Int(bytes.loadUnaligned(fromByteOffset: 0x20, as: UInt64.self))
        let entrySize = Int(bytes.loadUnaligned(fromByteOffset: 0x36, as: UInt16.self))
        let count = Int(bytes.loadUnaligned(fromByteOffset: 0x38, as: UInt16.self))
        guard entrySize >= 56, tableOffset > 0, tableOffset + entrySize * count <= bytes.count else { return }
        for index in 0..<count {
            let base = tableOffset + index * entrySize
            guard bytes.loadUnaligned(fromByteOffset: base, as: UInt32.self) == 1 else { continue }
            let address = bytes.loadUnaligned(fromByteOffset: base + 16, as: UInt64.self)
            let size = bytes.loadUnaligned(fromByteOffset: base + 40, as: UInt64.self)
            loadSegments.append(address..<(address &+ size))
            loadSegmentOffsets.append(bytes.loadUnaligned(fromByteOffset: base + 8, as: UInt64.self))
        }
    }

    /// The section header table: (type, offset, size, link, address, name offset) of section `index`.
    private static func sectionHeader(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> (
        type: UInt32, offset: Int, size: Int, link: Int, address: UInt64, name: Int
    )? {
        let tableOffset = Int(bytes.loadUnaligned(fromByteOffset: 0x28, as: UInt64.self))
        let entrySize = Int(bytes.loadUnaligned(fromByteOffset: 0x3A, as: UInt16.self))
        let count = Int(bytes.loadUnaligned(fromByteOffset: 0x3C, as: UInt16.self))
        guard entrySize >= 64, tableOffset > 0, index < count, tableOffset + entrySize * count <= bytes.count else {
            return nil
        }
        let base = tableOffset + index * entrySize
        return (
            bytes.loadUnaligned(fromByteOffset: base + 4, as: UInt32.self),
            Int(bytes.loadUnaligned(fromByteOffset: base + 24, as: UInt64.self)),
            Int(bytes.loadUnaligned(fromByteOffset: base + 32, as: UInt64.self)),
            Int(bytes.loadUnaligned(fromByteOffset: base + 40, as: UInt32.self)),
            bytes.loadUnaligned(fromByteOffset: base + 16, as: UInt64.self),
            Int(bytes.loadUnaligned(fromByteOffset: base, as: UInt32.self))
        )
    }

    /// The sections named in `reflectionSectionNames` and those that say whether there are line tables, found through
    /// the section name table.
    private mutating func readSections(_ bytes: UnsafeRawBufferPointer) {
        let count = Int(bytes.loadUnaligned(fromByteOffset: 0x3C, as: UInt16.self))
        let namesIndex = Int(bytes.loadUnaligned(fromByteOffset: 0x3E, as: UInt16.self))
        guard let names = Self.sectionHeader(bytes, namesIndex), names.offset + names.size <= bytes.count else {
            return
        }
        for index in 0..<count {
            guard let header = Self.sectionHeader(bytes, index), header.name < names.size,
                header.offset + header.size <= bytes.count, header.type != 8  // SHT_NOBITS: no bytes in the file
            else { continue }
            let start = names.offset + header.name
            let end = bytes[start..<(names.offset + names.size)].firstIndex(of: 0) ?? names.offset + names.size
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            guard Self.reflectionSectionNames.contains(name) || name == ".debug_line" || name == ".gnu_debuglink"
            else { continue }
            sections[name] = Section(address: header.address, fileOffset: header.offset, size: header.size)
        }
    }

    /// The section named `name` (one of `reflectionSectionNames`), nil when the file has none.
    public func section(named name: String) -> Section? { sections[name] }

    /// The bytes of `section`, in this file's mapping, which lives as long as this value; nil when out of the file.
    public func bytes(of section: Section) -> UnsafeRawBufferPointer? {
        guard let file, section.fileOffset + section.size <= file.bytes.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: file.bytes[section.fileOffset..<(section.fileOffset + section.size)])
    }

    /// A symbol's value and its place in the table, the key `sortedByValue` orders by.
    private struct SortKey {
        var value: UInt64
        var position: UInt64
    }

    /// `entries` ordered by value, those of one value in the table's order (as a stable sort leaves them). Sorted by
    /// the C library's `qsort` on plain keys: the standard library's generic sort, unspecialized in a debug build (the
    /// one `make test` runs), was 60% of a debug `heap-fixtures` run that names its capture (its 44,000 symbols), and
    /// every process that names a capture reads its own executable's table.
    private static func sortedByValue(_ entries: [Entry]) -> [Entry] {
        var keys = [SortKey]()
        keys.reserveCapacity(entries.count)
        for position in entries.indices {
            keys.append(SortKey(value: entries[position].value, position: UInt64(position)))
        }
        keys.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            qsort(base, buffer.count, MemoryLayout<SortKey>.stride) { left, right in
                guard let left, let right else { return 0 }
                let (a, b) = (left.load(as: SortKey.self), right.load(as: SortKey.self))
                // The position breaks ties: no two keys are equal, so the order does not depend on qsort's algorithm.
                return a.value != b.value ? (a.value < b.value ? -1 : 1) : (a.position < b.position ? -1 : 1)
            }
        }
        var sorted = [Entry]()
        sorted.reserveCapacity(entries.count)
        for key in keys { sorted.append(entries[Int(key.position)]) }
        return sorted
    }

    private static func readSymbols(_ file: MappedFile) -> Tables {
        let bytes = file.bytes
        var result = Tables()
        guard bytes.count > 64 else { return result }
        let count = Int(bytes.loadUnaligned(fromByteOffset: 0x3C, as: UInt16.self))
        let tables = (0..<count).compactMap { Self.sectionHeader(bytes, $0) }
        // SHT_SYMTAB (2) when the file has one, else SHT_DYNSYM (11).
        guard let table = tables.first(where: { $0.type == 2 }) ?? tables.first(where: { $0.type == 11 }),
            table.link < tables.count, table.offset + table.size <= bytes.count
        else { return result }
        let strings = tables[table.link]
        // Name offsets are kept in 32 bits: a string table past 4 GiB is not read.
        guard strings.offset + strings.size <= min(bytes.count, Int(UInt32.max)) else { return result }
        result.stringsEnd = strings.offset + strings.size
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
        result.functions.reserveCapacity(functionCount)
        result.objects.reserveCapacity(entries.reduce(0) { $0 + (kind($1) != nil ? 1 : 0) } - functionCount)
        for entry in entries {
            guard let kind = kind(entry) else { continue }
            let symbol = Entry(
                value: bytes.loadUnaligned(fromByteOffset: entry + 8, as: UInt64.self),
                size: UInt32(clamping: bytes.loadUnaligned(fromByteOffset: entry + 16, as: UInt64.self)),
                nameOffset: UInt32(strings.offset) + bytes.loadUnaligned(fromByteOffset: entry, as: UInt32.self))
            if kind == 2 { result.functions.append(symbol) } else { result.objects.append(symbol) }
        }
        result.functions = Self.sortedByValue(result.functions)
        result.objects = Self.sortedByValue(result.objects)
        // The symbol table is read: its pages leave the resident set (the names stay mapped, read on demand).
        file.release(table.offset..<(table.offset + table.size))
        return result
    }

    /// Symbols in the file, functions and objects.
    public var count: Int {
        let tables = tables
        return tables.functions.count + tables.objects.count
    }

    /// The function holding `value` (a file address): the last one starting at or before it, within its size
    /// when it has one.
    public func function(containing value: UInt64) -> Symbol? {
        let tables = tables
        return lookUp(value, in: tables.functions, slack: 1 << 20, stringsEnd: tables.stringsEnd)
    }

    /// The data object holding `value` (a file address), within its size.
    public func object(containing value: UInt64) -> Symbol? {
        let tables = tables
        return lookUp(value, in: tables.objects, slack: 0, stringsEnd: tables.stringsEnd)
    }

    private func lookUp(_ value: UInt64, in symbols: [Entry], slack: UInt64, stringsEnd: Int) -> Symbol? {
        guard let index = symbols.lastIndex(startingAtOrBelow: value, start: \.value) else { return nil }
        let symbol = symbols[index]
        let size = UInt64(symbol.size)
        // A symbol without a size (hand-written assembly) holds what follows it up to `slack` bytes; not `_init` or
        // `_fini`, the few instructions of an object's .init and .fini sections: in a stripped file, code after them is
        // another function whose name the file no longer has (a task's entry in sourcekit-lsp read "_fini").
        let end = size > 0 ? symbol.value + size : symbol.value + slack
        guard value < end || (size == 0 && slack > 0 && value - symbol.value < slack) else { return nil }
        let name = name(at: Int(symbol.nameOffset), stringsEnd: stringsEnd)
        guard size > 0 || value == symbol.value || (name != "_init" && name != "_fini") else { return nil }
        return Symbol(value: symbol.value, size: size, name: name)
    }

    /// The NUL-terminated name at `offset` of the file, within the string table.
    private func name(at offset: Int, stringsEnd: Int) -> String {
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
