import HarnessModel
import SwiftReflection
import Symbols

/// The types a capture's blocks are named with, indexed by the capture's type column while it is read, and what the
/// references between blocks add to them once read (the function of a closure, the elements of an erased array).
struct TypeTable {
    var infos: [CaptureNaming.TypeInfo] = []
    /// The type of each first word seen (`HeapSnapshot.none`: none).
    var indexOfWord: [UInt64: UInt32] = [:]
    /// Closure contexts whose function a reference names, by block.
    var functions: [Int: String] = [:]
    /// Closure contexts (or fixed boxes) that another context holds without a function beside: boxes of a `var`.
    var heldByContext: Set<Int> = []
    /// The element type of each erased array's storage, by block (`mixedElements`: more than one).
    var elements: [Int: UInt32] = [:]
    /// Refined types by (base type, name).
    private var refinements: [String: UInt32] = [:]

    static let mixedElements = UInt32.max - 1

    mutating func add(_ info: CaptureNaming.TypeInfo) -> UInt32 {
        infos.append(info)
        return UInt32(infos.count - 1)
    }

    /// The type `base` renamed `name` (added when new); `base` itself when there is no name.
    mutating func refined(_ base: UInt32, name: String?, kind: HeapBlockKind? = nil) -> UInt32 {
        guard let name else { return base }
        let key = "\(base) \(kind?.rawValue ?? 255) \(name)"
        if let known = refinements[key] { return known }
        var info = infos[Int(base)]
        info.name = name
        info.kind = kind ?? info.kind
        info.isTyped = true
        info.awaitsFunction = false
        info.erasesElements = false
        info.isTask = false
        let index = add(info)
        refinements[key] = index
        return index
    }

    mutating func noteElement(of block: Int, type: UInt32) {
        guard type != HeapSnapshot.none else {
            elements[block] = Self.mixedElements
            return
        }
        if let known = elements[block], known != type {
            elements[block] = Self.mixedElements
        } else {
            elements[block] = type
        }
    }

    /// Renames the blocks the references named: closures by their function, `var` boxes by their value's type,
    /// erased arrays by their elements' type.
    mutating func refine(_ columns: inout HeapBlockColumns) {
        for (block, function) in functions.sorted(by: { $0.key < $1.key }) {
            columns.typeNames[block] = refined(columns.typeNames[block], name: function)
        }
        for block in heldByContext.sorted() where functions[block] == nil {
            let base = columns.typeNames[block]
            let captures = infos[Int(base)].fields
            guard captures.count == 1, let value = captures.first?.name.boxedTypeName else { continue }
            columns.typeNames[block] = refined(base, name: "box of \(value)", kind: .box)
            columns.kinds[block] = .box
        }
        for (block, element) in elements.sorted(by: { $0.key < $1.key }) where element != Self.mixedElements {
            let name = infos[Int(element)].name
            guard !name.isEmpty, infos[Int(element)].isTyped else { continue }
            columns.typeNames[block] = refined(columns.typeNames[block], name: "[\(name)]")
        }
    }
}

extension String {
    /// `T` of a capture's field name `capture #1 (T)`.
    fileprivate var boxedTypeName: String? {
        guard let open = firstIndex(of: "("), hasSuffix(")") else { return nil }
        return String(self[index(after: open)..<index(before: endIndex)])
    }
}

extension CaptureNaming {
    /// The name a task's blocks start with until their entry function names them.
    static let taskName = "Task"

    // MARK: Swift metadata

    /// The type of the blocks that start with `metadata`, read from the process's memory; `object` is one such block.
    /// Nil when `metadata` is no Swift metadata; a type without a name when it is, but the library could not name it.
    mutating func swiftType(metadata: UInt64, object: UInt64) -> TypeInfo? {
        guard let memory, let kind = memory.load(metadata, as: UInt64.self) else { return nil }
        switch kind {
        case 0:
            guard isClassMetadata(metadata) else { return nil }
            return classType(metadata: metadata)
        case 0x400:
            // A closure context or a fixed-layout box: its metadata is static, in an image.
            guard memory.maps.isImage(metadata) else { return nil }
            let captures = reflector?.captures(ofContext: object) ?? []
            var info = TypeInfo(kind: .closureContext, name: "", isSwiftObject: true, isTyped: false)
            info.awaitsFunction = true
            info.fields = captures.enumerated().map { index, capture in
                let type = capture.typeName.map(SwiftTypeName.display) ?? "?"
                return Field(
                    offset: capture.offset, name: "capture #\(index + 1) (\(type))", ownership: capture.ownership)
            }
            return info
        case 0x500:
            // A generic box (`swift_allocBox`): its metadata, made by the runtime, holds the boxed type's at +16.
            let boxed = memory.load(metadata + 16, as: UInt64.self).flatMap { reflector?.typeName(ofMetadata: $0) }
            var info = TypeInfo(kind: .box, name: boxed.map { "box of " + SwiftTypeName.display($0) } ?? "")
            (info.isSwiftObject, info.isTyped) = (true, boxed != nil)
            info.fields = [Field(offset: 16, name: "value", ownership: .strong)]
            return info
        case 0x502:
            guard memory.maps.isImage(metadata) else { return nil }
            var info = TypeInfo(kind: .swiftObject, name: Self.taskName, isSwiftObject: true, isTyped: false)
            info.isTask = true
            return info
        default:
            return nil
        }
    }

    /// A class's name and fields; a type without a name (a Swift object of its size) when the library cannot read it.
    private mutating func classType(metadata: UInt64) -> TypeInfo {
        let runtimeName = reflector?.typeName(ofMetadata: metadata) ?? thisProcessTypeName(metadata)
        guard let runtimeName else {
            return TypeInfo(kind: .swiftObject, name: "", isSwiftObject: true, isTyped: false)
        }
        let (name, kind) = SwiftTypeName.object(runtimeName)
        var info = TypeInfo(kind: kind, name: name, isSwiftObject: true)
        info.instanceBytes = UInt64(memory?.load(metadata + 24, as: UInt32.self) ?? 0)
        info.erasesElements = kind == .arrayStorage && name == "[AnyObject]"
        info.fields = (reflector?.fields(ofClassMetadata: metadata) ?? []).map {
            Field(offset: $0.offset, name: $0.name, ownership: $0.ownership)
        }
        return info
    }

    /// The runtime's own name of class metadata in this very process, when the reflection library is missing.
    private func thisProcessTypeName(_ metadata: UInt64) -> String? {
        guard memory?.isThisProcess == true, let pointer = UnsafeRawPointer(bitPattern: UInt(metadata)) else {
            return nil
        }
        return _typeName(unsafeBitCast(pointer, to: Any.Type.self), qualified: true)
    }

    /// True when `metadata` is a Swift class's metadata (no Objective-C interop): its nominal type descriptor (at +40)
    /// lies in a loaded image and says "class", and its instance size and alignment are sane (swift/ABI/Metadata.h).
    private func isClassMetadata(_ metadata: UInt64) -> Bool {
        guard let memory, memory.maps.isReadable(metadata, length: 56),
            let descriptor = memory.load(metadata + 40, as: UInt64.self), memory.maps.isImage(descriptor),
            let flags = memory.load(descriptor, as: UInt32.self), flags & 0x1F == 16,
            let size = memory.load(metadata + 24, as: UInt32.self),
            let alignMask = memory.load(metadata + 28, as: UInt16.self)
        else { return false }
        return size >= 16 && size < 1 << 30 && alignMask < 4096
    }

    // MARK: Tasks and closures

    /// `Task running <entry function>` for the task at `task`: the async function it was started with is the
    /// outermost frame of its chain of async contexts (the task's resume function, then each context's caller's) that
    /// is not the concurrency runtime's own. Nil when the chain cannot be read.
    ///
    /// The layout read (swift/ABI/Task.h on 64-bit): a Job's `ResumeTask` at +56, an AsyncTask's `ResumeContext` at
    /// +64; an AsyncContext's `Parent` at +0 and `ResumeParent` at +8.
    func taskName(_ task: UInt64) -> String? {
        guard let memory, let resume = memory.load(task + 56, as: UInt64.self) else { return nil }
        var functions = [resume]
        var context = memory.load(task + 64, as: UInt64.self) ?? 0
        for _ in 0..<256 where context != 0 {
            guard let parentResume = memory.load(context + 8, as: UInt64.self) else { break }
            functions.append(parentResume)
            context = memory.load(context, as: UInt64.self) ?? 0
        }
        let named = functions.compactMap { code -> (module: String, name: String)? in
            guard let module = modules.module(containing: code), let name = symbolizer.function(at: code, in: modules)
            else { return nil }
            return (module.fileName, name)
        }
        // The outermost frame of the program's own code: neither the runtime's nor a thunk the compiler made to fit the
        // closure to `Task`'s signature.
        guard
            let entry = named.last(where: { !$0.module.hasPrefix("libswift_Concurrency") && !$0.name.contains("thunk") }
            )
        else {
            return notStartedTaskName(
                resume: named.first?.name, initialContext: memory.load(task + 64, as: UInt64.self))
        }
        return "Task running " + Self.functionName(entry.name)
    }

    /// A task that has not run yet resumes in the runtime's adapter (`future_adapter`, `non_future_adapter`), which
    /// calls the closure the task was made with: its entry point and context sit just before the task's initial
    /// context (the runtime's `AsyncContextPrefix`: entry point at -24, closure context at -16, for both adapters).
    /// The entry point is mostly a thunk that fits the closure to `Task`'s signature; the closure it calls is then
    /// in the thunk's context.
    func notStartedTaskName(resume: String?, initialContext: UInt64?) -> String? {
        guard let resume, resume.hasPrefix("future_adapter") || resume.hasPrefix("non_future_adapter"),
            let context = initialContext, context > 24, let memory,
            let entry = memory.load(context - 24, as: UInt64.self), let name = codeName(entry)
        else { return nil }
        let closure = memory.load(context - 16, as: UInt64.self) ?? 0
        guard let function = name.contains("thunk") ? innerFunction(context: closure) : Self.functionName(name) else {
            return nil
        }
        return "Task running \(function) (not started)"
    }

    /// The function of the closure whose context a reference at `slot` points at: the word before the reference is
    /// a closure value's function pointer (a thick function is the pair function, context). A reabstraction thunk's
    /// context holds the closure it forwards to: the first code pointer among its captures names it.
    func functionBeside(_ slot: UInt64, context: UInt64) -> String? {
        guard slot >= 8, let word = memory?.load(slot - 8, as: UInt64.self), let name = codeName(word) else {
            return nil
        }
        guard name.contains("thunk") else { return Self.functionName(name) }
        return innerFunction(context: context)
    }

    /// The function of the first closure a context holds among its first words (a reabstraction thunk's context holds
    /// the closure it forwards to), nil when it holds none.
    func innerFunction(context: UInt64) -> String? {
        for offset in stride(from: UInt64(16), to: 80, by: 8) {
            guard let inner = memory?.load(context + offset, as: UInt64.self) else { break }
            if let innerName = codeName(inner), !innerName.contains("thunk") { return Self.functionName(innerName) }
        }
        return nil
    }

    /// The function whose code `address` is, when it is code.
    private func codeName(_ address: UInt64) -> String? {
        guard memory?.maps.region(containing: address)?.isExecutable == true else { return nil }
        return symbolizer.function(at: address, in: modules)
    }

    /// A closure's or async function's name without what the compiler made of it: `partial apply for closure #1 in
    /// Screen.bind()` and `(1) await resume partial function for closure #1 in Worker.start(on:)` are both the closure.
    static func functionName(_ symbol: String) -> String {
        var name = Substring(symbol)
        if name.hasPrefix("("), let close = name.firstIndex(of: ")") { name = name[name.index(after: close)...] }
        name = name.drop { $0 == " " }
        for prefix in [
            "partial apply for ", "await resume partial function for ", "suspend resume partial function for ",
            "async function pointer to ",
        ] where name.hasPrefix(prefix) {
            name = name.dropFirst(prefix.count)
        }
        return String(name)
    }

    // MARK: C++ and symbols

    /// A C++ object by its vtable, or one of the Swift runtime's own structures by the marker it starts with.
    mutating func cxxType(vtable: UInt64) -> TypeInfo? {
        guard let (symbol, readable) = symbolizer.object(at: vtable, in: modules) else { return nil }
        if symbol.name.hasPrefix("_ZTV") { return TypeInfo(kind: .cxxObject, name: Self.cxxClassName(readable)) }
        return Self.runtimeStructures[symbol.name].map { TypeInfo(kind: .unknown, name: $0) }
    }

    /// The Swift runtime's structures that start with a marker of their own instead of metadata, by the marker's
    /// symbol: a task's allocator slab (StackAllocator.h), which holds the task's async frames.
    static let runtimeStructures = ["_ZN5swift25TaskAllocatorSlabMetadataE": "async frames (a task's allocator slab)"]

    /// `Shape` of the symbol `_ZTV5Shape` (`vtable for Shape`).
    static func cxxClassName(_ readable: String) -> String {
        readable.hasPrefix("vtable for ") ? String(readable.dropFirst("vtable for ".count)) : readable
    }

    /// The type whose metadata or vtable symbol holds `word`, in another process's modules.
    mutating func foreignType(_ word: UInt64) -> TypeInfo? {
        guard let (symbol, readable) = symbolizer.object(at: word, in: modules) else { return nil }
        if symbol.name.hasPrefix("_ZTV") { return TypeInfo(kind: .cxxObject, name: Self.cxxClassName(readable)) }
        guard symbol.name.hasPrefix("$s"), symbol.name.hasSuffix("CMf") || symbol.name.hasSuffix("CN") else {
            return nil
        }
        let full = typeDemangler.demangle([symbol.name]).names[symbol.name] ?? symbol.name
        for prefix in ["full type metadata for ", "type metadata for "] where full.hasPrefix(prefix) {
            let (name, kind) = SwiftTypeName.object(String(full.dropFirst(prefix.count)))
            return TypeInfo(kind: kind, name: name, isSwiftObject: true)
        }
        return nil
    }
}
