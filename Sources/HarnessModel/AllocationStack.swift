/// One frame of a symbolized allocation stack: a function, where in the source, and which binary.
///
/// Inlined functions are frames of their own (an address inside an inlined call gives the inlined
/// function and then each caller it was inlined into). Names are readable: Swift names demangled
/// (`LiveQueryApp.deliver(_:)`, never `$s...`), C++ names demangled; a frame without symbols is
/// named `module+0xoffset`.
public struct AllocationFrame: Sendable, Hashable, Codable, Comparable {
    /// The function's readable name.
    public var function: String
    /// The source file from the debug information (as compiled, usually an absolute path); nil without DWARF.
    public var file: String?
    /// The line in `file` (1-based); nil when unknown.
    public var line: Int?
    /// Path of the binary (executable or shared library) the code was loaded from.
    public var module: String
    /// True for code that is not the user's but is kept in the stack (the Swift standard library,
    /// Foundation, libc, Dispatch): an allocation site is the innermost frame that is not library code.
    public var isLibrary: Bool

    public init(function: String, file: String? = nil, line: Int? = nil, module: String, isLibrary: Bool = false) {
        self.function = function
        self.file = file
        self.line = line
        self.module = module
        self.isLibrary = isLibrary
    }

    /// The file's last path component and the line: `LiveQueryApp.swift:42`, `LiveQueryApp.swift`, or nil.
    public var shortLocation: String? {
        guard let file else { return nil }
        let name = file.split(separator: "/").last.map(String.init) ?? file
        return line.map { "\(name):\($0)" } ?? name
    }

    /// The module's file name (`libswiftCore.so`).
    public var moduleName: String {
        module.split(separator: "/").last.map(String.init) ?? module
    }

    public static func < (lhs: AllocationFrame, rhs: AllocationFrame) -> Bool {
        (lhs.function, lhs.file ?? "", lhs.line ?? 0, lhs.module, lhs.isLibrary ? 1 : 0)
            < (rhs.function, rhs.file ?? "", rhs.line ?? 0, rhs.module, rhs.isLibrary ? 1 : 0)
    }
}

/// One allocation stack of a profile and what it holds live at the peak.
public struct AllocationStack: Sendable, Hashable, Codable {
    /// Indices into `AllocationProfile.frames`, **root first** (the outermost caller at index 0, the
    /// frame that asked for the memory last). Allocator and harness frames are already folded away.
    public var frameIndices: [Int]
    /// Estimated live bytes of this stack at the peak, net of the baseline (live at the peak minus
    /// live at the baseline, per recorded stack, negatives dropped), size-class bytes.
    public var peakLiveBytes: Int
    /// Estimated live blocks of this stack at the peak, net of the baseline the same way.
    public var peakLiveCount: Int

    public init(frameIndices: [Int], peakLiveBytes: Int, peakLiveCount: Int) {
        self.frameIndices = frameIndices
        self.peakLiveBytes = peakLiveBytes
        self.peakLiveCount = peakLiveCount
    }
}

/// Live bytes and blocks of one stack at one mark.
public struct StackLiveBytes: Sendable, Hashable, Codable {
    /// Index into `AllocationProfile.stacks`.
    public var stack: Int
    /// Estimated live bytes (size-class bytes, absolute: not net of the baseline).
    public var liveBytes: Int
    /// Estimated live blocks.
    public var liveCount: Int

    public init(stack: Int, liveBytes: Int, liveCount: Int) {
        self.stack = stack
        self.liveBytes = liveBytes
        self.liveCount = liveCount
    }
}

/// The live set after one iteration of a `repeat` step (an `iteration.<phase>.<k>` mark).
public struct IterationLiveSet: Sendable, Hashable, Codable {
    /// The phase of the `repeat` step.
    public var phase: String
    /// The iteration's number as the mark gives it.
    public var iteration: Int
    /// When the mark was taken, nanoseconds since the origin of the record.
    public var timeNanoseconds: Int64
    /// The peak signal when the mark was taken, absolute bytes.
    public var levelBytes: Int
    /// Live bytes per stack, absolute (not net of the baseline), sorted by stack index; stacks with nothing live are
    /// left out.
    public var live: [StackLiveBytes]

    public init(phase: String, iteration: Int, timeNanoseconds: Int64, levelBytes: Int, live: [StackLiveBytes]) {
        self.phase = phase
        self.iteration = iteration
        self.timeNanoseconds = timeNanoseconds
        self.levelBytes = levelBytes
        self.live = live
    }
}
