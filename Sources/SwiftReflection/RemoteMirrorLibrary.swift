import CSwiftRemoteMirror
import Foundation
import Symbols

#if canImport(Glibc)
    import Glibc
#endif

/// The Swift runtime's out-of-process reflection reader, `libswiftRemoteMirror.so`, loaded with `dlopen` from beside
/// the Swift runtime this process runs on (the toolchain's `usr/lib/swift/linux`), or from
/// `MEMHARNESS_SWIFT_REMOTE_MIRROR`. Loaded once; nil with the reason when it cannot be (a runtime installed without
/// the toolchain, a library without a function this uses).
struct RemoteMirrorLibrary: @unchecked Sendable {
    // @unchecked: a set of C function pointers written once at initialization; the library keeps no state of its own
    // between calls other than in the contexts it hands out, which SwiftReflector owns.
    let create: mh_rm_create_context
    let destroy: mh_rm_destroy_context
    let addMappingInfo: mh_rm_add_mapping_info
    let typeRefForMetadata: mh_rm_typeref_for_metadata
    let copyName: mh_rm_copy_name_for_typeref
    let infoForMetadata: mh_rm_info_for
    let childOfMetadata: mh_rm_child_of
    let infoForInstance: mh_rm_info_for
    let childOfInstance: mh_rm_child_of

    /// The library of this process, or why there is none.
    static let shared: Result<RemoteMirrorLibrary, ReflectionUnavailable> = load()

    private static func load() -> Result<RemoteMirrorLibrary, ReflectionUnavailable> {
        let candidates = [ProcessInfo.processInfo.environment["MEMHARNESS_SWIFT_REMOTE_MIRROR"], besideRuntime()]
        guard let path = candidates.compactMap({ $0 }).first(where: { FileManager.default.fileExists(atPath: $0) })
        else {
            return .failure(.libraryNotFound(searched: candidates.compactMap { $0 }))
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(
                .libraryNotLoaded(path: path, reason: dlerror().map { String(cString: $0) } ?? "dlopen failed"))
        }
        func function<T>(_ name: String, _ type: T.Type) -> T? {
            dlsym(handle, name).map { unsafeBitCast($0, to: T.self) }
        }
        guard
            let create = function("swift_reflection_createReflectionContextWithDataLayout", mh_rm_create_context.self),
            let destroy = function("swift_reflection_destroyReflectionContext", mh_rm_destroy_context.self),
            let add = function("swift_reflection_addReflectionMappingInfo", mh_rm_add_mapping_info.self),
            let typeRef = function("swift_reflection_typeRefForMetadata", mh_rm_typeref_for_metadata.self),
            let copyName = function("swift_reflection_copyNameForTypeRef", mh_rm_copy_name_for_typeref.self),
            let infoForMetadata = function("swift_reflection_infoForMetadata", mh_rm_info_for.self),
            let childOfMetadata = function("swift_reflection_childOfMetadata", mh_rm_child_of.self),
            let infoForInstance = function("swift_reflection_infoForInstance", mh_rm_info_for.self),
            let childOfInstance = function("swift_reflection_childOfInstance", mh_rm_child_of.self)
        else {
            return .failure(.libraryNotLoaded(path: path, reason: "a swift_reflection_* function it needs is missing"))
        }
        return .success(
            RemoteMirrorLibrary(
                create: create, destroy: destroy, addMappingInfo: add, typeRefForMetadata: typeRef, copyName: copyName,
                infoForMetadata: infoForMetadata, childOfMetadata: childOfMetadata, infoForInstance: infoForInstance,
                childOfInstance: childOfInstance))
    }

    /// `libswiftRemoteMirror.so` in the folder of the `libswiftCore.so` this process loaded.
    private static func besideRuntime() -> String? {
        let core = ProcessMaps.read().regions.first { $0.path.hasSuffix("/libswiftCore.so") }?.path
        return core.map {
            URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("libswiftRemoteMirror.so").path
        }
    }
}

/// Why types cannot be named from a process's memory.
public enum ReflectionUnavailable: Error, Sendable, Hashable, CustomStringConvertible {
    /// No `libswiftRemoteMirror.so` beside the Swift runtime (nor at `MEMHARNESS_SWIFT_REMOTE_MIRROR`).
    case libraryNotFound(searched: [String])
    /// The library is there but could not be loaded, or lacks a function.
    case libraryNotLoaded(path: String, reason: String)

    public var description: String {
        switch self {
        case .libraryNotFound(let searched):
            return
                "no libswiftRemoteMirror.so (looked at \(searched.isEmpty ? "nothing: no Swift runtime is loaded" : searched.joined(separator: ", "))); "
                + "install the Swift toolchain, or set MEMHARNESS_SWIFT_REMOTE_MIRROR"
        case .libraryNotLoaded(let path, let reason):
            return "\(path) could not be used: \(reason)"
        }
    }
}
