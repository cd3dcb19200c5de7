import CSwiftRemoteMirror
import Symbols

#if canImport(Glibc)
    import Glibc
#endif

/// A field of a Swift class instance or a capture of a closure context, as the reflection metadata describes it.
public struct ReflectedField: Sendable, Hashable {
    /// How a reference field holds what it points at.
    public enum Ownership: Sendable, Hashable {
        case strong, weak, unowned, unmanaged
    }

    /// The field's name; empty for a closure's capture (captures have none).
    public var name: String
    /// Where the field starts in the object, bytes.
    public var offset: UInt64
    /// The field's type as the reflection metadata spells it (`weak Swift.Optional<App.Screen>`), nil when unknown.
    public var typeName: String?

    public var ownership: Ownership {
        guard let typeName else { return .strong }
        if typeName.hasPrefix("weak ") { return .weak }
        if typeName.hasPrefix("unowned(unsafe) ") || typeName.hasPrefix("unmanaged ") { return .unmanaged }
        if typeName.hasPrefix("unowned ") { return .unowned }
        return .strong
    }
}

/// Swift's own reflection reader (`libswiftRemoteMirror.so`) over one process's memory: type names from metadata
/// (generic arguments included, instantiated at run time or not), fields of classes and captures of closure contexts
/// from the images' reflection sections. The same reader serves this process and another one.
///
/// Not thread-safe (one context, read through callbacks): use one reflector per naming, on one thread.
public final class SwiftReflector {
    private let library: RemoteMirrorLibrary
    private let context: mh_rm_context_ref
    /// The memory the context reads; the context's callbacks get this reflector back through their reader context.
    public let memory: TargetMemory
    /// Names of metadata already asked for.
    private var names: [UInt64: String?] = [:]

    /// A reflector over `memory`, whose process loaded `images` (file, load bias): their reflection sections are read
    /// from the files (mapped here) and placed where the process has them. Throws when the library is not there.
    public init(memory: TargetMemory, images: [(path: String, loadBias: UInt64)]) throws(ReflectionUnavailable) {
        let library: RemoteMirrorLibrary
        switch RemoteMirrorLibrary.shared {
        case .success(let loaded): library = loaded
        case .failure(let reason): throw reason
        }
        self.library = library
        self.memory = memory
        let readerContext = Unmanaged.passUnretained(memory).toOpaque()
        guard
            let context = library.create(
                readerContext, Self.dataLayout, Self.freeBytes, Self.readBytes, Self.stringLength, Self.symbolAddress)
        else {
            throw .libraryNotLoaded(path: "libswiftRemoteMirror.so", reason: "it made no reflection context")
        }
        self.context = context
        var seen: Set<String> = []
        for image in images where seen.insert(image.path).inserted { addReflectionSections(of: image) }
    }

    deinit { library.destroy(context) }

    /// The reflection sections of one image, their bytes in the file's mapping (which lives as long as the process's
    /// symbol tables), their addresses where the image was loaded.
    private func addReflectionSections(of image: (path: String, loadBias: UInt64)) {
        let file = ELFSymbols.cached(path: image.path)
        func mapping(_ name: String) -> mh_rm_section_mapping {
            guard let section = file.section(named: name), let bytes = file.bytes(of: section),
                let base = bytes.baseAddress
            else { return mh_rm_section_mapping() }
            return mh_rm_section_mapping(
                local_section: mh_rm_local_section(
                    Begin: UnsafeMutableRawPointer(mutating: base),
                    End: UnsafeMutableRawPointer(mutating: base + bytes.count)),
                remote_section: mh_rm_remote_section(
                    StartAddress: section.address &+ image.loadBias, Size: UInt64(bytes.count)))
        }
        guard file.section(named: "swift5_fieldmd") != nil || file.section(named: "swift5_capture") != nil else {
            return
        }
        library.addMappingInfo(
            context,
            mh_rm_mapping_info(
                field: mapping("swift5_fieldmd"), associated_types: mapping("swift5_assocty"),
                builtin_types: mapping("swift5_builtin"), capture: mapping("swift5_capture"),
                type_references: mapping("swift5_typeref"), reflection_strings: mapping("swift5_reflstr")))
    }

    /// The type the metadata at `metadata` describes, as the runtime's demangler prints it
    /// (`Swift._ContiguousArrayStorage<App.Document>`); nil when the library cannot read it.
    public func typeName(ofMetadata metadata: UInt64) -> String? {
        if let known = names[metadata] { return known }
        let typeRef = library.typeRefForMetadata(context, UInt(metadata))
        let name = typeRef == 0 ? nil : name(ofTypeRef: typeRef)
        names[metadata] = name
        return name
    }

    private func name(ofTypeRef typeRef: mh_rm_typeref) -> String? {
        guard typeRef != 0, let text = library.copyName(context, typeRef, false) else { return nil }
        defer { free(text) }
        let name = String(cString: text)
        // The library's demangler prints this for a node it could not build.
        return name.isEmpty || name.contains("<null node pointer>") ? nil : name
    }

    /// The stored fields of the class whose metadata is at `metadata`, its superclasses' included, by offset.
    public func fields(ofClassMetadata metadata: UInt64) -> [ReflectedField] {
        let info = library.infoForMetadata(context, UInt(metadata))
        return (0..<info.NumFields).map { field(library.childOfMetadata(context, UInt(metadata), $0)) }
            .sorted { $0.offset < $1.offset }
    }

    /// The captures of the closure context (or fixed-layout box) at `object`, by offset.
    public func captures(ofContext object: UInt64) -> [ReflectedField] {
        let info = library.infoForInstance(context, UInt(object))
        return (0..<info.NumFields).map { field(library.childOfInstance(context, UInt(object), $0)) }
            .sorted { $0.offset < $1.offset }
    }

    private func field(_ child: mh_rm_childinfo) -> ReflectedField {
        ReflectedField(
            name: child.Name.map { String(cString: $0) } ?? "", offset: UInt64(child.Offset),
            typeName: name(ofTypeRef: child.TR))
    }

    // MARK: The reader's callbacks (C function pointers: the memory comes back as the reader context)

    private static func memory(_ readerContext: UnsafeMutableRawPointer?) -> TargetMemory? {
        readerContext.map { Unmanaged<TargetMemory>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let dataLayout: mh_rm_query_data_layout = { _, query, _, output in
        // 0: the size of a pointer, 1: the size of size_t; anything else is left to the library's defaults.
        guard query == 0 || query == 1, let output else { return 0 }
        output.storeBytes(of: UInt8(MemoryLayout<UInt>.size), as: UInt8.self)
        return 1
    }

    private static let readBytes: mh_rm_read_bytes = { readerContext, address, size, freeContext in
        guard let memory = memory(readerContext), size < 1 << 30 else { return nil }
        freeContext?.pointee = nil
        if memory.isThisProcess {
            // This process's own bytes, handed over as they are (nothing to free).
            guard memory.maps.isReadable(address, length: Int(size)) else { return nil }
            return UnsafeRawPointer(bitPattern: UInt(address))
        }
        guard let buffer = malloc(max(Int(size), 1)) else { return nil }
        guard memory.copy(address, count: Int(size), into: buffer) else {
            free(buffer)
            return nil
        }
        freeContext?.pointee = buffer
        return UnsafeRawPointer(buffer)
    }

    private static let freeBytes: mh_rm_free_bytes = { _, _, context in
        // Only copies (from another process) carry a context: this process's own bytes were handed over as they are.
        free(context)
    }

    private static let stringLength: mh_rm_string_length = { readerContext, address in
        UInt64(memory(readerContext)?.stringLength(address) ?? 0)
    }

    private static let symbolAddress: mh_rm_symbol_address = { _, _, _ in
        // The library asks for Objective-C and isa-mask symbols, which a Linux process has none of.
        0
    }
}
