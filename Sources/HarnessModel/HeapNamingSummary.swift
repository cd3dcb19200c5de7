/// How much of one heap capture was named, and why the rest was not: the figures behind "most of the heap has no
/// name". Every live block is counted once, in `typed`, `siteOnly` or one reason of `unnamed`.
public struct HeapNamingSummary: Sendable, Hashable, Codable {
    /// Whose memory the names were read from.
    public var source: HeapNamingSource
    /// Blocks named by what they are: a Swift type (a class, a generic instance, collection storage, a closure by its
    /// function, a box by its value's type, a task by its entry function), a C++ class, a side table.
    public var typedBlocks: Int
    public var typedBytes: Int
    /// Blocks without a type that have an allocation stack: named by their allocation site.
    public var siteOnlyBlocks: Int
    public var siteOnlyBytes: Int
    /// Blocks recognised as Swift heap objects (they start with Swift metadata), and those of them named by their
    /// Swift type (a closure context by its function, a box by its value's type).
    public var swiftObjectBlocks: Int
    public var swiftObjectsNamedByType: Int
    /// The blocks named neither way, by why, most bytes first.
    public var unnamed: [HeapUnnamedBlocks]

    public init(
        source: HeapNamingSource, typedBlocks: Int = 0, typedBytes: Int = 0, siteOnlyBlocks: Int = 0,
        siteOnlyBytes: Int = 0, swiftObjectBlocks: Int = 0, swiftObjectsNamedByType: Int = 0,
        unnamed: [HeapUnnamedBlocks] = []
    ) {
        self.source = source
        self.typedBlocks = typedBlocks
        self.typedBytes = typedBytes
        self.siteOnlyBlocks = siteOnlyBlocks
        self.siteOnlyBytes = siteOnlyBytes
        self.swiftObjectBlocks = swiftObjectBlocks
        self.swiftObjectsNamedByType = swiftObjectsNamedByType
        self.unnamed = unnamed
    }
}

/// Whose memory a capture's names were read from.
public enum HeapNamingSource: String, Sendable, Hashable, Codable {
    /// The process that took the capture (a workload's own captures).
    case thisProcess = "this-process"
    /// Another process, held at its exit while its memory was read (a program under `profile`).
    case heldProcess = "held-process"
    /// Another process whose memory could not be read (it had ended): names from its files' symbols only.
    case filesOnly = "files-only"
}

/// Blocks that could not be named for one reason.
public struct HeapUnnamedBlocks: Sendable, Hashable, Codable {
    public var reason: HeapNameMissing
    public var blocks: Int
    public var bytes: Int

    public init(reason: HeapNameMissing, blocks: Int, bytes: Int) {
        self.reason = reason
        self.blocks = blocks
        self.bytes = bytes
    }
}

/// Why a block has no name.
public enum HeapNameMissing: String, Sendable, Hashable, Codable, CaseIterable {
    /// Its memory holds no type information (no Swift metadata, no C++ vtable at its start: a buffer, a C struct, an
    /// object of a runtime without metadata) and its allocation stack was not recorded.
    case noTypeInformation = "no-type-information"
    /// Its process's memory could not be read (it had ended), and its first word is no symbol of the process's files.
    case processMemoryUnavailable = "process-memory-unavailable"
    /// A closure context no reference names the function of (only a stack or register word holds it, or a value
    /// other than a closure): named "closure context", with its captures' types.
    case contextWithoutFunction = "context-without-function"
    /// It starts with Swift metadata the reflection library could not name (the library is missing, or read the
    /// metadata as something else).
    case reflectionFailed = "reflection-failed"
}
