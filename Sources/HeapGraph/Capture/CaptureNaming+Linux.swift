import Foundation
import HarnessModel
import SwiftReflection
import Symbols

#if canImport(Glibc)
    import Glibc
#endif

/// Whose memory a capture's reader may read to name its blocks.
public enum CaptureMemory: Sendable, Hashable {
    /// The capture is of this very process: its metadata is in this process's memory.
    case thisProcess
    /// The capture is of process `pid`, held at its exit until naming is done (`/proc/PID/mem` is read).
    case process(pid: Int32)
    /// The capture's process has ended: blocks are named from its files' symbols only.
    case none
}

/// Names a heap capture as Swift names it: every block that starts with Swift metadata by its type (generic
/// arguments included, `[App.Document]` for the storage of an array of documents), closure contexts by the function
/// they belong to and their captures, boxes by their value's type, tasks by their entry function, fields of classes
/// from the reflection metadata, side tables and `weak` references from the refcount word, C++ objects by their
/// vtable; roots, frames and allocation stacks through `Symbols`, as allocation profiles name them.
///
/// Types and fields are read by Swift's own reflection reader (`SwiftReflector`, over `libswiftRemoteMirror.so`) from
/// the memory of the process the capture was taken of: this process, or another one held at its exit. Without that
/// memory (the process has ended), a class instance is named by its metadata's symbol and a C++ object by its
/// vtable's; generic instances, closures, boxes and tasks are then unnamed blocks, and the naming summary says why.
///
/// How a block is recognised as a Swift heap object (stdlib/public/SwiftShims/HeapObject.h): its first word is a
/// metadata pointer. For a class instance the metadata's kind word is 0 (no Objective-C interop), its nominal type
/// descriptor (at +40) lies in a loaded image and says "class" (kind 16), and the instance size it states (at +24)
/// fits in the block; closure contexts and fixed boxes have metadata kind 0x400, generic boxes 0x500, tasks 0x502.
/// The second word is the inline refcount; with its two top bits set it holds a side table's address shifted right
/// by 3 (RefCount.h), and the side table's first word points back at the object.
public struct CaptureNaming {
    let capture: CaptureFile
    /// The memory of the capture's process, nil when it could not be read.
    let memory: TargetMemory?
    /// Swift's reflection reader over `memory`; nil without memory or without the library (`reflectionProblem`).
    let reflector: SwiftReflector?
    /// Why there is no reflector although there is memory.
    let reflectionProblem: ReflectionUnavailable?
    /// Where the names come from, for the naming summary.
    let source: HeapNamingSource
    /// The capture's modules, each file's segments where the capture says it was loaded.
    let modules: ModuleMap
    /// Names frames, roots and symbols, as allocation profiles name them.
    let symbolizer: Symbolizer
    /// Type names from symbols keep their module (`App.Screen`), as the runtime's own names do.
    let typeDemangler = SwiftDemangler(methods: [.runtimeFull])

    /// What one metadata pointer (or vtable) says of the blocks that start with it.
    struct TypeInfo {
        var kind: HeapBlockKind
        var name: String
        /// Fields (a class's) or captures (a closure context's), sorted by offset.
        var fields: [Field] = []
        /// The blocks are Swift heap objects.
        var isSwiftObject = false
        /// Named by what the blocks are (a type, a function); false for a name that only says what kind they are.
        var isTyped = true
        /// A closure context (or fixed box) whose function a reference to it names (`functionBeside`).
        var awaitsFunction = false
        /// Array storage whose elements the runtime erased to `AnyObject`: the elements say what it holds.
        var erasesElements = false
        /// An async task, named by its entry function block by block.
        var isTask = false
        /// The smallest block an instance fits in (a class's instance size), 0 when any block does.
        var instanceBytes: UInt64 = 0
    }

    /// A stored field or a capture, and how it holds what it points at.
    struct Field {
        var offset: UInt64
        var name: String
        var ownership: ReflectedField.Ownership
    }

    /// Whether blocks get their allocation stacks (frames symbolized and folded); without them a block that is no
    /// object is unnamed, and reachability, types and fields are as with them.
    let namesStacks: Bool
    /// What folding allocation stacks found per frame: one for the captures of one process (a server's between its
    /// rounds) folds each frame once, not once per capture.
    let foldMemo: FoldMemo

    /// Names `capture`, reading `memory` for its types and fields; `namesStacks`: see the property; `foldMemo`: see the
    /// property (a fresh one when nil).
    public init(
        capture: CaptureFile, memory: CaptureMemory, symbolizer: Symbolizer = .shared, namesStacks: Bool = true,
        foldMemo: FoldMemo? = nil
    ) {
        self.capture = capture
        self.symbolizer = symbolizer
        self.namesStacks = namesStacks
        self.foldMemo = foldMemo ?? FoldMemo()
        let images = Self.images(of: capture)
        modules = ModuleMap(loadedFiles: images)
        switch memory {
        case .thisProcess: self.memory = TargetMemory()
        case .process(let pid): self.memory = TargetMemory(pid: pid)
        case .none: self.memory = nil
        }
        source =
            self.memory == nil ? .filesOnly : (self.memory?.isThisProcess == true ? .thisProcess : .heldProcess)
        var problem: ReflectionUnavailable?
        if let target = self.memory {
            do {
                reflector = try SwiftReflector(memory: target, images: images.map { (path: $0.0, loadBias: $0.1) })
            } catch {
                reflector = nil
                problem = error
            }
        } else {
            reflector = nil
        }
        reflectionProblem = problem
    }

    /// The files the capture's process had loaded, with their load bias. The loader names the main executable with an
    /// empty path; the agent writes its file's path instead.
    static func images(of capture: CaptureFile) -> [(String, UInt64)] {
        capture.modules.map { ($0.path.isEmpty ? "/proc/self/exe" : $0.path, $0.baseAddress) }
    }

    /// Names the allocation stacks of several captures of one process in one batch, which `symbolizer` remembers:
    /// naming each capture afterwards asks no tool (a tool's process is started once, not once per capture). The
    /// modules are the last capture's (a process loads more as it runs; an address outside them is named later).
    public static func symbolizeStacks(of captures: [CaptureFile], symbolizer: Symbolizer = .shared) {
        guard let last = captures.last else { return }
        let addresses = captures.reduce(into: Set<UInt64>()) { $0.formUnion($1.stacks.values.joined()) }
        _ = symbolizer.symbolize(returnAddresses: addresses, modules: ModuleMap(loadedFiles: images(of: last)))
    }

    /// The capture as a named, canonical graph. The blocks and edges are read from the capture one at a time
    /// straight into the snapshot's columns, which the snapshot then takes over (nothing is held twice).
    public mutating func snapshot() throws(HeapGraphError) -> HeapSnapshot {
        var builder = HeapSnapshotBuilder(label: capture.label, timeNanoseconds: capture.timeNanoseconds)
        builder.reserve(blocks: capture.blockCount, edges: capture.edgeCount)
        var stackIndex: [UInt32: UInt32] = [:]
        // The stacks of memharness's own code, outside the agent's harness mode (its runner and bookkeeping in a
        // workload's case process, a test's `expectMemory`): their blocks are set aside once named, as the agent sets
        // aside the harness-mode ones (`HeapSnapshotBuilder.setAside`).
        var harnessStacks = Set<UInt32>()
        let stacks = namesStacks ? capture.stacks : [:]
        let (frames, _) = symbolizer.symbolize(returnAddresses: stacks.values.joined(), modules: modules)
        let memo = foldMemo
        for (id, addresses) in stacks {
            // A return address is in a module's code: any other word is what a walk read past a frame without a frame
            // pointer. A stack with none left is no allocation site.
            let code = addresses.filter { modules.module(containing: $0) != nil }
            guard !code.isEmpty else { continue }
            let innermostFirst = Self.frames(code, frames)
            if Self.folder.isHarnessAllocation(innermostFirst.reversed(), memo: memo) {
                harnessStacks.insert(id)
                continue
            }
            stackIndex[id] = builder.addStack(Self.stackText(innermostFirst, memo: memo))
        }
        do {
            var harnessBlocks: [UInt32] = []
            var table = try readBlocks(
                into: &builder.blocks, stackIndex: stackIndex, harnessStacks: harnessStacks, found: &harnessBlocks)
            try readEdges(into: &builder, table: &table)
            nameUnreferencedContexts(builder.blocks, &table)
            table.refine(&builder.blocks)
            valueFields(ofBoxes: table, &builder)
            for root in capture.roots {
                let (kind, description) = describe(root)
                builder.addRoot(kind, description: description, block: UInt32(root.target), slotAddress: root.slot)
            }
            builder.setAside(harnessBlocks, heldBy: Self.harnessRootDescription)
            builder.naming = namingSummary(builder.blocks, table)
            let unnamed = builder.intern("")
            let infoNames = table.infos.map { builder.intern($0.name) }
            // The type column held indices into the type table while the edges needed them: now into the names.
            for block in builder.blocks.typeNames.indices {
                let info = builder.blocks.typeNames[block]
                builder.blocks.typeNames[block] = info == HeapSnapshot.none ? unnamed : infoNames[Int(info)]
            }
        } catch {
            throw .unreadableCapture(error)
        }
        return try builder.build()
    }

    // MARK: Blocks

    /// Reads the blocks into `columns`, each named as it comes: a million blocks share a few hundred types, each
    /// named once. Until the names are final, `typeNames` holds each block's index into the returned table
    /// (`HeapSnapshot.none`: unnamed).
    private mutating func readBlocks(
        into columns: inout HeapBlockColumns, stackIndex: [UInt32: UInt32], harnessStacks: Set<UInt32>,
        found harnessBlocks: inout [UInt32]
    ) throws(CaptureFileError) -> TypeTable {
        var table = TypeTable()
        // Blocks whose refcount word may hold a side table's address, with that address (few: objects that are
        // referenced weakly, and data whose second word has its two top bits set).
        var refcounts: [(block: Int, sideTable: UInt64)] = []
        try capture.forEachBlock { block in
            let index = columns.addresses.count
            if block.stackID != 0 && harnessStacks.contains(block.stackID) {
                harnessBlocks.append(UInt32(truncatingIfNeeded: index))
            }
            columns.addresses.append(block.address)
            columns.sizes.append(block.sizeBytes)
            columns.stackIndices.append(
                block.stackID == 0 ? HeapSnapshot.none : stackIndex[block.stackID] ?? HeapSnapshot.none)
            columns.typeNames.append(type(of: block, index: index, table: &table))
            if memory != nil && block.secondWord >> 62 == 3 {
                refcounts.append((index, (block.secondWord & 0x3FFF_FFFF_FFFF_FFFF) << 3))
            }
        }
        if memory != nil {
            // Side tables: named from their object's refcount word, once every object is known.
            let sideTable = table.add(TypeInfo(kind: .sideTable, name: "side table"))
            for (block, address) in refcounts {
                let type = columns.typeNames[block]
                guard type != HeapSnapshot.none, table.infos[Int(type)].isSwiftObject,
                    let side = Self.block(at: address, in: columns.addresses),
                    columns.typeNames[side] == HeapSnapshot.none
                else { continue }
                columns.typeNames[side] = sideTable
            }
        }
        nameMetadataPools(&columns, &table)
        for type in columns.typeNames {
            columns.kinds.append(type == HeapSnapshot.none ? .unknown : table.infos[Int(type)].kind)
        }
        return table
    }

    /// The blocks Swift objects' metadata lies in: the runtime makes the metadata of generic types (and others) at run
    /// time in pools it allocates from malloc, 16 KiB at a time.
    private func nameMetadataPools(_ columns: inout HeapBlockColumns, _ table: inout TypeTable) {
        let metadata = table.indexOfWord.filter {
            $0.value != HeapSnapshot.none && table.infos[Int($0.value)].isSwiftObject
        }
        guard memory != nil, !metadata.isEmpty else { return }
        let pool = table.add(TypeInfo(kind: .unknown, name: "Swift type metadata (the runtime's allocation pool)"))
        for word in metadata.keys.sorted() {
            guard let block = columns.addresses.lastIndex(startingAtOrBelow: word, start: { $0 }),
                word - columns.addresses[block] < UInt64(columns.sizes[block]),
                columns.typeNames[block] == HeapSnapshot.none
            else { continue }
            columns.typeNames[block] = pool
        }
    }

    /// The index in the table of the type of `block` (added when new), or `HeapSnapshot.none`. With the process's
    /// memory, a block is named from the metadata or vtable its first word points at; without it from the modules'
    /// symbol tables alone: a block whose first word is the address of a class's metadata (a `…CN`/`…CMf` symbol) or
    /// a C++ vtable is an instance of it (a generic class's metadata is made at run time and has no symbol).
    private mutating func type(of block: CaptureFile.Block, index: Int, table: inout TypeTable) -> UInt32 {
        let first = block.firstWord
        guard first >= 4096 else { return HeapSnapshot.none }  // a small integer, not an address
        let known: UInt32
        if let cached = table.indexOfWord[first] {
            known = cached
        } else {
            let info =
                memory != nil
                ? swiftType(metadata: first, object: block.address) ?? cxxType(vtable: first) : foreignType(first)
            known = info.map { table.add($0) } ?? HeapSnapshot.none
            table.indexOfWord[first] = known
        }
        // A Swift class instance is at least as big as its metadata says.
        guard known != HeapSnapshot.none, table.infos[Int(known)].instanceBytes <= block.sizeBytes else {
            return HeapSnapshot.none
        }
        if table.infos[Int(known)].isTask { return table.refined(known, name: taskName(block.address)) }
        return known
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

    // MARK: Edges

    /// Reads the edges into the builder, each classified by the types of the blocks at its ends (the table, which
    /// the builder's type column indexes for now). A reference to a closure context names its function (the word
    /// before it is the function pointer of a closure value); the references out of array storage whose elements
    /// the runtime erased to `AnyObject` say what the array holds.
    private mutating func readEdges(into builder: inout HeapSnapshotBuilder, table: inout TypeTable)
        throws(CaptureFileError)
    {
        try capture.forEachEdge { from, to, offset in
            let fromType = builder.blocks.typeNames[Int(from)]
            let toType = builder.blocks.typeNames[Int(to)]
            if toType != HeapSnapshot.none, table.infos[Int(toType)].awaitsFunction, table.functions[Int(to)] == nil {
                let holder = builder.blocks.addresses[Int(from)]
                if let function = functionBeside(holder + offset, context: builder.blocks.addresses[Int(to)]) {
                    table.functions[Int(to)] = function
                } else if fromType != HeapSnapshot.none, table.infos[Int(fromType)].awaitsFunction {
                    table.heldByContext.insert(Int(to))
                }
            }
            if fromType != HeapSnapshot.none, offset >= 32, table.infos[Int(fromType)].erasesElements {
                table.noteElement(of: Int(from), type: toType)
            }
            let (kind, field) = Self.classify(from: fromType, to: toType, in: table.infos, offset: offset)
            let fieldIndex = field.map { builder.intern($0) } ?? HeapSnapshot.none
            builder.addEdge(
                from: from, to: to, byteOffset: UInt32(clamping: offset), kind: kind, fieldNameIndex: fieldIndex)
        }
    }

    /// Closure contexts no reference named (held by a task, a stack word): named by the closure they hold, when they
    /// are a thunk's.
    private func nameUnreferencedContexts(_ columns: HeapBlockColumns, _ table: inout TypeTable) {
        for block in columns.typeNames.indices {
            let type = columns.typeNames[block]
            guard type != HeapSnapshot.none, table.infos[Int(type)].awaitsFunction, table.functions[block] == nil,
                !table.heldByContext.contains(block), let function = innerFunction(context: columns.addresses[block])
            else { continue }
            table.functions[block] = function
        }
    }

    /// The references out of `var` boxes are their value: the box's only capture, named so once it is known to be a box.
    private func valueFields(ofBoxes table: TypeTable, _ builder: inout HeapSnapshotBuilder) {
        let boxes = Set(table.heldByContext.filter { builder.blocks.kinds[$0] == .box })
        guard !boxes.isEmpty else { return }
        let value = builder.intern("value")
        for edge in builder.edges.sources.indices where boxes.contains(Int(builder.edges.sources[edge])) {
            builder.edges.fieldNames[edge] = value
        }
    }

    /// What an edge from a block of type `source` (an index into `infos`) to one of type `target` at `offset` is, and
    /// the field it is in.
    static func classify(from source: UInt32, to target: UInt32, in infos: [TypeInfo], offset: UInt64)
        -> (HeapEdgeKind, String?)
    {
        let none = HeapSnapshot.none
        if source != none, infos[Int(source)].kind == .sideTable { return (.sideTableToObject, nil) }
        if target != none, infos[Int(target)].kind == .sideTable {
            return (.weak, source == none ? nil : field(of: infos[Int(source)], at: offset)?.name)
        }
        guard source != none else { return (.strong, nil) }
        switch infos[Int(source)].kind {
        case .arrayStorage, .dictionaryStorage, .setStorage: return (.strong, offset >= 32 ? "element" : nil)
        default:
            guard let found = field(of: infos[Int(source)], at: offset) else { return (.strong, nil) }
            // A weak, unowned or unmanaged reference is the one word at its field's offset: a word further on is in
            // a struct the field holds or past the declared fields (a task's or a buffer's tail), and keeps what it
            // points at as any word does.
            let keeps = found.ownership == .strong || found.ownership == .weak || offset != found.offset
            return (keeps ? .strong : .unowned, found.name)
        }
    }

    private static func field(of info: TypeInfo, at offset: UInt64) -> Field? {
        guard let index = info.fields.lastIndex(where: { $0.offset <= offset }) else { return nil }
        return info.fields[index]
    }

    // MARK: What was named

    /// How much of the capture is named: by type, by allocation site only, or not, and why not.
    private func namingSummary(_ columns: HeapBlockColumns, _ table: TypeTable) -> HeapNamingSummary {
        var summary = HeapNamingSummary(source: source)
        var unnamed: [HeapNameMissing: (blocks: Int, bytes: Int)] = [:]
        let defaultReason: HeapNameMissing = memory == nil ? .processMemoryUnavailable : .noTypeInformation
        for block in columns.addresses.indices {
            let bytes = Int(columns.sizes[block])
            let type = columns.typeNames[block]
            let isSwiftObject = type != HeapSnapshot.none && table.infos[Int(type)].isSwiftObject
            let isTyped = type != HeapSnapshot.none && table.infos[Int(type)].isTyped
            if isSwiftObject {
                summary.swiftObjectBlocks += 1
                if isTyped { summary.swiftObjectsNamedByType += 1 }
            }
            if isTyped {
                summary.typedBlocks += 1
                summary.typedBytes += bytes
            } else if columns.stackIndices[block] != HeapSnapshot.none {
                summary.siteOnlyBlocks += 1
                summary.siteOnlyBytes += bytes
            } else {
                let reason: HeapNameMissing =
                    type == HeapSnapshot.none
                    ? defaultReason
                    : table.infos[Int(type)].kind == .closureContext ? .contextWithoutFunction : .reflectionFailed
                unnamed[reason, default: (0, 0)].blocks += 1
                unnamed[reason, default: (0, 0)].bytes += bytes
            }
        }
        summary.unnamed = unnamed.map {
            HeapUnnamedBlocks(reason: $0.key, blocks: $0.value.blocks, bytes: $0.value.bytes)
        }
        .sorted { ($1.bytes, $0.reason.rawValue) < ($0.bytes, $1.reason.rawValue) }
        return summary
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
        case .harness:
            return (.other, Self.harnessRootDescription)
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

    /// What a root made of a word of the harness's own memory is.
    static let harnessRootDescription =
        "memory memharness allocated for itself (its bookkeeping, naming and analysing captures)"

    /// The folder of every capture's stacks.
    static let folder = StackFolder()

    /// The frames of a stack's return addresses, innermost first (an address no tool named is its hexadecimal).
    static func frames(_ returnAddresses: [UInt64], _ frames: [UInt64: [SymbolizedFrame]]) -> [SymbolizedFrame] {
        returnAddresses.flatMap { address in
            frames[address] ?? [SymbolizedFrame(function: String(format: "0x%llx", address), module: "[unknown]")]
        }
    }

    /// A stack's frames (given innermost first) as the heap graph keeps them: innermost first, folded as allocation
    /// profiles fold theirs (`StackFolder`: the agent, the malloc family and the runtime's allocation entry points off
    /// its leaf end, process entry off its root), starting at the innermost frame that is not library code (the
    /// allocation site); each frame `function (File.swift:41)`.
    static func stackText(_ innermostFirst: [SymbolizedFrame], memo: FoldMemo = FoldMemo()) -> [String] {
        var folded = Array(folder.fold(innermostFirst.reversed(), memo: memo).reversed())
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
}
