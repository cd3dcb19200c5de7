import Foundation
import HarnessModel
import Symbols

#if canImport(Glibc)
    import Glibc
#endif

/// Names a capture of this very process: Swift types from their metadata, fields from the reflection metadata,
/// side tables and `weak` references from the refcount word, C++ objects from their vtable, roots and stacks
/// from the modules' symbol tables. Must run in the process the capture was taken of, soon after it (it reads
/// the metadata the blocks point at); every read is checked against the process's readable mappings first.
///
/// How a block is recognised as a Swift heap object (stdlib/public/SwiftShims/HeapObject.h): its first word is
/// a metadata pointer. For a class instance the metadata's kind word is 0 (no Objective-C interop), its nominal
/// type descriptor (at +40) lies in a loaded image and says "class" (kind 16), and the instance size it states
/// (at +24) fits in the block; closure contexts, boxes and tasks have metadata kinds 0x400, 0x500 and 0x502. The
/// second word is the inline refcount; with its two top bits set it holds a side table's address shifted right
/// by 3 (RefCount.h), and the side table's first word points back at the object.
public struct CaptureNaming {
    private let capture: CaptureFile
    private let inspectsThisProcess: Bool
    private let mappings: ProcessMaps
    /// The capture's modules, each file's segments where the capture says it was loaded.
    private let modules: ModuleMap
    /// Names frames, roots and symbols, as allocation profiles name them.
    private let symbolizer: Symbolizer
    /// Type names keep their module (`App.Screen`), as the runtime's own names of this process's types do.
    private let typeDemangler = SwiftDemangler(methods: [.runtimeFull])

    /// What one metadata pointer says of the blocks that start with it.
    struct TypeInfo {
        var kind: HeapBlockKind
        var name: String
        /// (byte offset, field name, the field is `unowned`), sorted by offset.
        var fields: [(offset: UInt64, name: String, unowned: Bool)] = []
    }

    /// Names `capture`. With `inspectsThisProcess` (the capture is of this process, just taken), types are named
    /// from the metadata in memory; without it (a capture another program wrote) roots, stacks and types are named
    /// from the modules' files (a class instance by its metadata's symbol, a C++ object by its vtable's), fields
    /// are not, and every other block is an unnamed block of its size.
    public init(capture: CaptureFile, inspectsThisProcess: Bool, symbolizer: Symbolizer = .shared) {
        self.capture = capture
        self.inspectsThisProcess = inspectsThisProcess
        self.symbolizer = symbolizer
        mappings = inspectsThisProcess ? ProcessMaps.read() : ProcessMaps(regions: [])
        // The loader names the main executable with an empty path; the agent writes its file's path instead.
        modules = ModuleMap(
            loadedFiles: capture.modules.map { ($0.path.isEmpty ? "/proc/self/exe" : $0.path, $0.baseAddress) })
    }

    /// The capture as a named, canonical graph. The blocks and edges are read from the capture one at a time
    /// straight into the snapshot's columns, which the snapshot then takes over (nothing is held twice).
    public mutating func snapshot() throws(HeapGraphError) -> HeapSnapshot {
        var builder = HeapSnapshotBuilder(label: capture.label, timeNanoseconds: capture.timeNanoseconds)
        builder.reserve(blocks: capture.blockCount, edges: capture.edgeCount)
        var stackIndex: [UInt32: UInt32] = [:]
        let (frames, _) = symbolizer.symbolize(returnAddresses: capture.stacks.values.joined(), modules: modules)
        for (id, addresses) in capture.stacks { stackIndex[id] = builder.addStack(Self.stackText(addresses, frames)) }
        do {
            let infos = try readBlocks(into: &builder.blocks, stackIndex: stackIndex)
            let unnamed = builder.intern("")
            let infoNames = infos.map { builder.intern($0.name) }
            try readEdges(into: &builder, infos: infos)
            // The type column held indices into `infos` while the edges needed them: now into the names.
            for block in builder.blocks.typeNames.indices {
                let info = builder.blocks.typeNames[block]
                builder.blocks.typeNames[block] = info == HeapSnapshot.none ? unnamed : infoNames[Int(info)]
            }
        } catch {
            throw .unreadableCapture(error)
        }
        for root in capture.roots {
            let (kind, description) = describe(root)
            builder.addRoot(kind, description: description, block: UInt32(root.target), slotAddress: root.slot)
        }
        return try builder.build()
    }

    // MARK: Blocks

    /// Reads the blocks into `columns`, each named as it comes: a million blocks share a few hundred types, each
    /// named once. Until the edges are read, `typeNames` holds each block's index into the returned types
    /// (`HeapSnapshot.none`: unnamed).
    private mutating func readBlocks(
        into columns: inout HeapBlockColumns, stackIndex: [UInt32: UInt32]
    ) throws(CaptureFileError) -> [TypeInfo] {
        var infos: [TypeInfo] = []
        var indexOfWord: [UInt64: UInt32] = [:]
        // Blocks whose refcount word may hold a side table's address, with that address (few: objects that are
        // referenced weakly, and data whose second word has its two top bits set).
        var refcounts: [(block: Int, sideTable: UInt64)] = []
        try capture.forEachBlock { block in
            let index = columns.addresses.count
            columns.addresses.append(block.address)
            columns.sizes.append(block.sizeBytes)
            columns.stackIndices.append(
                block.stackID == 0 ? HeapSnapshot.none : stackIndex[block.stackID] ?? HeapSnapshot.none)
            columns.typeNames.append(type(of: block, infos: &infos, indexOfWord: &indexOfWord))
            if inspectsThisProcess && block.secondWord >> 62 == 3 {
                refcounts.append((index, (block.secondWord & 0x3FFF_FFFF_FFFF_FFFF) << 3))
            }
        }
        if inspectsThisProcess {
            // Side tables: named from their object's refcount word, once every object is known.
            let sideTable = UInt32(infos.count)
            infos.append(TypeInfo(kind: .sideTable, name: "side table"))
            for (block, address) in refcounts {
                let type = columns.typeNames[block]
                guard type != HeapSnapshot.none, infos[Int(type)].kind != .cxxObject,
                    let side = Self.block(at: address, in: columns.addresses),
                    columns.typeNames[side] == HeapSnapshot.none
                else { continue }
                columns.typeNames[side] = sideTable
            }
        }
        for type in columns.typeNames {
            columns.kinds.append(type == HeapSnapshot.none ? .unknown : infos[Int(type)].kind)
        }
        return infos
    }

    /// The index in `infos` of the type of `block` (added when new), or `HeapSnapshot.none`. In this process a
    /// block is named from the metadata or vtable its first word points at; in another process's capture from the
    /// modules' symbol tables alone: a block whose first word is the address of a class's metadata (a `…CN`/`…CMf`
    /// symbol) or a C++ vtable is an instance of it. A class whose metadata the runtime makes at run time (a generic
    /// class) has no symbol: its blocks stay unnamed there.
    private mutating func type(
        of block: CaptureFile.Block, infos: inout [TypeInfo], indexOfWord: inout [UInt64: UInt32]
    ) -> UInt32 {
        let first = block.firstWord
        if inspectsThisProcess {
            guard mappings.isReadable(first, length: 8) else { return HeapSnapshot.none }
        } else {
            guard first >= 4096 else { return HeapSnapshot.none }  // a small integer, not an address
        }
        let known: UInt32
        if let cached = indexOfWord[first] {
            known = cached
        } else {
            let info = inspectsThisProcess ? swiftType(metadata: first) ?? cxxType(vtable: first) : foreignType(first)
            if let info {
                infos.append(info)
                known = UInt32(infos.count - 1)
            } else {
                known = HeapSnapshot.none
            }
            indexOfWord[first] = known
        }
        guard known != HeapSnapshot.none, !inspectsThisProcess || fits(infos[Int(known)], first, in: block.sizeBytes)
        else { return HeapSnapshot.none }
        return known
    }

    /// Reads the edges into the builder, each classified by the types of the blocks at its ends (`infos`, which
    /// the builder's type column indexes for now).
    private mutating func readEdges(into builder: inout HeapSnapshotBuilder, infos: [TypeInfo]) throws(CaptureFileError)
    {
        try capture.forEachEdge { from, to, offset in
            let fromType = builder.blocks.typeNames[Int(from)]
            let toType = builder.blocks.typeNames[Int(to)]
            let (kind, field) = Self.classify(
                from: fromType == HeapSnapshot.none ? nil : infos[Int(fromType)],
                to: toType == HeapSnapshot.none ? nil : infos[Int(toType)], offset: offset)
            let fieldIndex = field.map { builder.intern($0) } ?? HeapSnapshot.none
            builder.addEdge(
                from: from, to: to, byteOffset: UInt32(clamping: offset), kind: kind, fieldNameIndex: fieldIndex)
        }
    }

    /// The type whose metadata or vtable symbol holds `word`, in another process's modules.
    private mutating func foreignType(_ word: UInt64) -> TypeInfo? {
        guard let (symbol, readable) = symbolizer.object(at: word, in: modules) else { return nil }
        if symbol.name.hasPrefix("_ZTV") { return TypeInfo(kind: .cxxObject, name: Self.cxxClassName(readable)) }
        guard symbol.name.hasPrefix("$s"), symbol.name.hasSuffix("CMf") || symbol.name.hasSuffix("CN") else {
            return nil
        }
        let full = typeDemangler.demangle([symbol.name]).names[symbol.name] ?? symbol.name
        for prefix in ["full type metadata for ", "type metadata for "] where full.hasPrefix(prefix) {
            let name = String(full.dropFirst(prefix.count))
            return TypeInfo(kind: Self.storageKind(of: name), name: name)
        }
        return nil
    }

    /// A Swift class instance must be at least as big as its metadata says.
    private func fits(_ info: TypeInfo, _ metadata: UInt64, in blockBytes: UInt64) -> Bool {
        guard info.kind != .cxxObject, info.kind != .closureContext, info.kind != .box else { return true }
        guard let size: UInt32 = load(metadata + 24) else { return false }
        return UInt64(size) <= blockBytes
    }

    /// The block starting at `address` in ascending `addresses`, or nil.
    private static func block(at address: UInt64, in addresses: ContiguousArray<UInt64>) -> Int? {
        var low = 0
        var high = addresses.count
        while low < high {
            let middle = (low + high) / 2
            if addresses[middle] < address { low = middle + 1 } else { high = middle }
        }
        return low < addresses.count && addresses[low] == address ? low : nil
    }

    private mutating func swiftType(metadata: UInt64) -> TypeInfo? {
        guard let kind: UInt64 = load(metadata) else { return nil }
        switch kind {
        case 0:
            guard let name = Self.validatedTypeName(metadata, mappings: mappings) else { return nil }
            var info = TypeInfo(kind: Self.storageKind(of: name), name: name)
            info.fields = classFields(metadata)
            return info
        case 0x400:
            return mappings.isImage(metadata) ? TypeInfo(kind: .closureContext, name: "closure context") : nil
        case 0x500:
            let boxed: UInt64? = load(metadata + 16)
            let inner = boxed.flatMap { Self.validatedTypeName($0, mappings: mappings) }
            return TypeInfo(kind: .box, name: inner.map { "box of \($0)" } ?? "box")
        case 0x502:
            return mappings.isImage(metadata) ? TypeInfo(kind: .swiftObject, name: "Swift.Task") : nil
        default:
            return nil
        }
    }

    private static func storageKind(of name: String) -> HeapBlockKind {
        if name.hasPrefix("Swift._ContiguousArrayStorage<") || name.hasPrefix("Swift.__EmptyArrayStorage") {
            return .arrayStorage
        }
        if name.hasPrefix("Swift._DictionaryStorage<") { return .dictionaryStorage }
        if name.hasPrefix("Swift._SetStorage<") { return .setStorage }
        if name.hasPrefix("Swift.__StringStorage") || name.hasPrefix("Swift.__SharedStringStorage") {
            return .stringStorage
        }
        return .swiftObject
    }

    /// The runtime's name of class, struct or enum metadata at `metadata`, after checking its descriptor.
    static func validatedTypeName(_ metadata: UInt64, mappings: ProcessMaps) -> String? {
        guard mappings.isReadable(metadata, length: 56), let pointer = UnsafeRawPointer(bitPattern: UInt(metadata))
        else { return nil }
        let kind = pointer.loadUnaligned(as: UInt64.self)
        // Classes keep their descriptor at +40, value types at +8 (swift/ABI/Metadata.h).
        let (descriptorOffset, expected): (Int, ClosedRange<UInt32>) =
            switch kind {
            case 0: (40, 16...16)
            case 0x200: (8, 17...17)
            case 0x201, 0x202: (8, 18...18)
            default: (0, 1...0)
            }
        guard !expected.isEmpty else { return nil }
        let descriptor = pointer.loadUnaligned(fromByteOffset: descriptorOffset, as: UInt64.self)
        guard mappings.isImage(descriptor), mappings.isReadable(descriptor, length: 44),
            let flags = UnsafeRawPointer(bitPattern: UInt(descriptor))?.loadUnaligned(as: UInt32.self),
            expected.contains(flags & 0x1F)
        else { return nil }
        if kind == 0 {
            // A class: its instance size and alignment mask must be sane.
            let size = pointer.loadUnaligned(fromByteOffset: 24, as: UInt32.self)
            let alignMask = pointer.loadUnaligned(fromByteOffset: 28, as: UInt16.self)
            guard size >= 16, size < 1 << 30, alignMask < 4096 else { return nil }
        }
        return _typeName(unsafeBitCast(pointer, to: Any.Type.self), qualified: true)
    }

    /// Field offsets and names of a class and its superclasses, from their descriptors' field records.
    private func classFields(_ metadata: UInt64) -> [(offset: UInt64, name: String, unowned: Bool)] {
        var fields: [(offset: UInt64, name: String, unowned: Bool)] = []
        var current = metadata
        for _ in 0..<32 where current != 0 {
            guard let descriptor: UInt64 = load(current + 40), mappings.isImage(descriptor),
                let flags: UInt32 = load(descriptor), flags & 0x1F == 16,
                flags & (1 << 29) == 0,  // a resilient superclass moves the field offsets: not named
                let fieldCount: UInt32 = load(descriptor + 36), fieldCount < 4096,
                let vectorOffset: UInt32 = load(descriptor + 40),
                let fieldDescriptor = relative(descriptor + 16)
            else { break }
            for field in 0..<UInt64(fieldCount) {
                let record = fieldDescriptor + 16 + 12 * field
                guard let offset: UInt64 = load(current + 8 * UInt64(vectorOffset) + 8 * field),
                    let nameAddress = relative(record + 8), let name = cString(nameAddress)
                else { continue }
                let ownership = relative(record + 4).flatMap { mangledSuffix($0) }
                fields.append((offset, name, ownership == "Xo" || ownership == "Xu"))
            }
            current = load(current + 8) ?? 0
        }
        return fields.sorted { $0.offset < $1.offset }
    }

    private mutating func cxxType(vtable: UInt64) -> TypeInfo? {
        guard mappings.isImage(vtable), let (symbol, readable) = symbolizer.object(at: vtable, in: modules),
            symbol.name.hasPrefix("_ZTV")
        else { return nil }
        return TypeInfo(kind: .cxxObject, name: Self.cxxClassName(readable))
    }

    /// `Shape` of the symbol `_ZTV5Shape` (`vtable for Shape`).
    private static func cxxClassName(_ readable: String) -> String {
        readable.hasPrefix("vtable for ") ? String(readable.dropFirst("vtable for ".count)) : readable
    }

    // MARK: Edges

    static func classify(from source: TypeInfo?, to target: TypeInfo?, offset: UInt64) -> (HeapEdgeKind, String?) {
        if source?.kind == .sideTable { return (.sideTableToObject, nil) }
        if target?.kind == .sideTable { return (.weak, field(of: source, at: offset)?.name) }
        guard let source else { return (.strong, nil) }
        switch source.kind {
        case .arrayStorage, .dictionaryStorage, .setStorage: return (.strong, offset >= 32 ? "element" : nil)
        case .closureContext: return (.strong, offset >= 16 ? "capture" : nil)
        case .box: return (.strong, offset >= 16 ? "value" : nil)
        default:
            guard let found = field(of: source, at: offset) else { return (.strong, nil) }
            return (found.unowned ? .unowned : .strong, found.name)
        }
    }

    private static func field(of info: TypeInfo?, at offset: UInt64) -> (name: String, unowned: Bool)? {
        guard let info, let index = info.fields.lastIndex(where: { $0.offset <= offset }) else { return nil }
        return (info.fields[index].name, info.fields[index].unowned)
    }

    // MARK: Roots, frames, symbols

    private mutating func describe(_ root: CaptureFile.Root) -> (HeapRootKind, String) {
        switch root.kind {
        case .global:
            let module = capture.modules.indices.contains(root.owner) ? capture.modules[root.owner] : nil
            let moduleName = module.map { Self.displayName(of: $0.path) } ?? "?"
            let name = symbolizer.object(at: root.slot, in: modules)?.name ?? String(format: "0x%llx", root.slot)
            return (.global(symbol: name, module: moduleName), "global \(name) (\(moduleName))")
        case .stack:
            let thread = capture.threads.indices.contains(root.owner) ? capture.threads[root.owner] : nil
            let function = thread.flatMap { frameFunction(of: $0, slot: root.slot) }
            let kind = HeapRootKind.threadStack(
                threadID: Int(thread?.id ?? 0), threadName: thread?.name, frameFunction: function)
            return (kind, "\(Self.threadText(thread)) stack" + (function.map { ", frame of \($0)" } ?? ""))
        case .register:
            let thread = capture.threads.indices.contains(root.owner) ? capture.threads[root.owner] : nil
            let name = Self.registerName(Int(root.slot))
            return (
                .register(threadID: Int(thread?.id ?? 0), name: name), "\(Self.threadText(thread)) register \(name)"
            )
        case .threadLocal:
            guard capture.threads.indices.contains(root.owner) else {
                return (.other, "the thread vector of an ended thread's control block, kept by the C library for reuse")
            }
            let thread = capture.threads[root.owner]
            return (.tls(threadID: Int(thread.id)), "\(Self.threadText(thread)) thread-local storage")
        }
    }

    private static func threadText(_ thread: CaptureFile.Thread?) -> String {
        guard let thread else { return "thread ?" }
        return "thread \(thread.id)" + (thread.name.isEmpty ? "" : " '\(thread.name)'")
    }

    private static func displayName(of path: String) -> String {
        path.isEmpty ? "main executable" : (path.split(separator: "/").last.map(String.init) ?? path)
    }

    /// The function whose frame holds `slot`: frames run from the innermost out, each frame's locals lying
    /// between its frame pointer and the next one up.
    private func frameFunction(of thread: CaptureFile.Thread, slot: UInt64) -> String? {
        guard let innermost = thread.frames.first, slot >= innermost.frame else {
            return thread.wasStopped ? functionName(thread.programCounter) : nil
        }
        let index = thread.frames.lastIndex { $0.frame <= slot } ?? 0
        return functionName(thread.frames[index].returnAddress &- 1)
    }

    /// A sampled allocation stack as the heap graph keeps it: innermost first, folded as allocation profiles fold
    /// theirs (`StackFolder`: the agent, the malloc family and the runtime's allocation entry points off its leaf end,
    /// process entry off its root), starting at the innermost frame that is not library code (the allocation site);
    /// each frame `function (File.swift:41)`.
    static func stackText(_ returnAddresses: [UInt64], _ frames: [UInt64: [SymbolizedFrame]]) -> [String] {
        let innermostFirst = returnAddresses.flatMap { address in
            frames[address] ?? [SymbolizedFrame(function: String(format: "0x%llx", address), module: "[unknown]")]
        }
        var folded = Array(StackFolder().fold(innermostFirst.reversed()).reversed())
        if let site = folded.firstIndex(where: { !$0.isLibrary }) { folded.removeFirst(site) }
        return folded.map { frame in frame.function + (frame.shortLocation.map { " (\($0))" } ?? "") }
    }

    /// The function whose code holds `address` (a program counter; a return address minus one).
    private func functionName(_ address: UInt64) -> String? { symbolizer.function(at: address, in: modules) }

    private static func registerName(_ number: Int) -> String {
        #if arch(x86_64)
            let names = [
                "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rdi", "rsi", "rbp", "rbx", "rdx", "rax", "rcx",
                "rsp", "rip",
            ]
            return number < names.count ? names[number] : "register \(number)"
        #else
            return number == 31 ? "sp" : number == 32 ? "pc" : "x\(number)"
        #endif
    }

    // MARK: Checked reads

    private func load<T: BitwiseCopyable>(_ address: UInt64) -> T? {
        guard mappings.isReadable(address, length: MemoryLayout<T>.size),
            let pointer = UnsafeRawPointer(bitPattern: UInt(address))
        else { return nil }
        return pointer.loadUnaligned(as: T.self)
    }

    /// The target of a 32-bit relative pointer stored at `address` (nil when it is null or unreadable).
    private func relative(_ address: UInt64) -> UInt64? {
        guard let offset: Int32 = load(address), offset != 0 else { return nil }
        return UInt64(bitPattern: Int64(bitPattern: address) &+ Int64(offset))
    }

    private func cString(_ address: UInt64) -> String? {
        var bytes: [UInt8] = []
        for index in 0..<UInt64(256) {
            guard let byte: UInt8 = load(address + index) else { return nil }
            if byte == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }

    /// The last two plain characters of a mangled type name (symbolic references skipped): `Xw`, `Xo`, `Xu`
    /// mark `weak`, `unowned` and `unowned(unsafe)` storage.
    private func mangledSuffix(_ address: UInt64) -> String? {
        var last: [UInt8] = []
        var cursor = address
        for _ in 0..<512 {
            guard let byte: UInt8 = load(cursor) else { return nil }
            if byte == 0 { return last.count == 2 ? String(decoding: last, as: UTF8.self) : nil }
            if byte <= 0x17 {
                cursor += 5
                last = []
            } else if byte <= 0x1F {
                cursor += 9
                last = []
            } else {
                last = Array((last + [byte]).suffix(2))
                cursor += 1
            }
        }
        return nil
    }
}
