/// What a live heap block is, as the heap capture recognised it.
public enum HeapBlockKind: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// A Swift class instance (starts with class metadata).
    case swiftObject
    /// The context of an escaping closure (its captures).
    case closureContext
    /// A heap box holding a captured `var` or an indirect enum payload.
    case box
    /// The buffer of a Swift `Array` or `ContiguousArray`.
    case arrayStorage
    /// The storage of a Swift `Dictionary`.
    case dictionaryStorage
    /// The storage of a Swift `Set`.
    case setStorage
    /// The out-of-line storage of a Swift `String`.
    case stringStorage
    /// A Swift refcount side table (`HeapObjectSideTableEntry`): owned by its object, what `weak` points at.
    case sideTable
    /// A C++ object named by its vtable's symbol.
    case cxxObject
    /// Any other block (a C `malloc`, a buffer): named by its allocation site, if at all.
    case unknown
}

/// What a reference between two heap blocks is.
public enum HeapEdgeKind: UInt8, Sendable, Hashable, Codable, CaseIterable {
    /// An ordinary (strong) reference: retains its target.
    case strong
    /// A Swift `weak` reference: it points at the target's side table and never retains.
    case weak
    /// A Swift `unowned` reference: does not retain, but the memory it points at is reachable through it.
    case unowned
    /// A side table's pointer back at its object: never retains and is never followed.
    case sideTableToObject
}

/// What holds a root reference into the heap: where a reachability walk starts.
public enum HeapRootKind: Sendable, Hashable, Codable {
    /// A global or static variable in a loaded module's writable segment.
    case global(symbol: String, module: String)
    /// A word on a thread's stack, in the frame of `frameFunction` (nil when the frame is not known).
    case threadStack(threadID: Int, threadName: String?, frameFunction: String?)
    /// A thread's register at the moment of capture.
    case register(threadID: Int, name: String)
    /// A thread's thread-local storage.
    case tls(threadID: Int)
    /// Anything else the capture treats as a root.
    case other

    /// A root that holds its block only conservatively: a stack word in no known frame, a register, anything else
    /// (perhaps a stale value rather than an owner). Globals, statics, thread-local storage and the stack words of a
    /// known function's frame are named roots.
    public var isConservative: Bool {
        switch self {
        case .global, .tls: return false
        case .threadStack(_, _, let frame): return frame == nil
        case .register, .other: return true
        }
    }
}

/// Why a retaining path was asked for.
public enum HeapPathReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// An object the workload tracked (`context.track`) that survived teardown.
    case trackedSurvivor = "tracked-survivor"
    /// A type that grew in every iteration (a suspect).
    case growingType = "growing-type"
    /// A type the user named (`--retained-by TYPE`).
    case requestedType = "requested-type"
}

/// A type as the heap graph tallies it: its name and kind; unnamed blocks are told apart by their size and the site
/// that allocated them.
///
/// A block without a type name (an `unknown` block the capture could not name) has an empty `name`, its size in
/// `unnamedBlockBytes` and, when its allocation stack was recorded, that stack's site in `allocationSite`: a renderer
/// calls it "block of N bytes allocated at `Foo.bar() (Foo.swift:41)`", as macOS `heap` names a block that is no
/// object by its allocation site. Named types have both nil.
public struct HeapTypeName: Sendable, Hashable, Codable, Comparable {
    /// The type's name as the runtime spells it (`App.ProfileScreen`), or empty for an unnamed block.
    public var name: String
    /// What the blocks are.
    public var kind: HeapBlockKind
    /// The block's size, bytes, when `name` is empty; nil otherwise.
    public var unnamedBlockBytes: Int?
    /// The first frame of the allocation stack of an unnamed block (its first frame of the program's code, or the
    /// library function that called malloc when the stack holds no program code); nil when the stack was not
    /// recorded, and for a named type.
    public var allocationSite: String?

    public init(name: String, kind: HeapBlockKind, unnamedBlockBytes: Int? = nil, allocationSite: String? = nil) {
        self.name = name
        self.kind = kind
        self.unnamedBlockBytes = name.isEmpty ? unnamedBlockBytes : nil
        self.allocationSite = name.isEmpty ? allocationSite : nil
    }

    public static func < (lhs: HeapTypeName, rhs: HeapTypeName) -> Bool {
        (lhs.name, lhs.kind.rawValue, lhs.unnamedBlockBytes ?? 0, lhs.allocationSite ?? "") < (
            rhs.name, rhs.kind.rawValue, rhs.unnamedBlockBytes ?? 0, rhs.allocationSite ?? ""
        )
    }
}
