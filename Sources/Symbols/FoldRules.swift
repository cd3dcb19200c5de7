import HarnessModel

/// A frame as the symbolizer names it, before folding: the readable name and, for the fold
/// rules only, the name the binary uses (Swift's mangled name carries the declaring module and type).
///
/// `linkageName` never reaches an `AllocationProfile`.
public struct SymbolizedFrame: Sendable, Hashable, Codable {
    /// Readable name (demangled); `module+0xoffset` when no tool could name the address.
    public var function: String
    /// The symbol as the binary spells it (`$s12LiveQueryApp...`), nil when unknown or the same as `function`.
    public var linkageName: String?
    /// Source file, nil without debug information.
    public var file: String?
    /// Line in `file`, nil when unknown.
    public var line: Int?
    /// Path of the binary.
    public var module: String

    public init(function: String, linkageName: String? = nil, file: String? = nil, line: Int? = nil, module: String) {
        self.function = function
        self.linkageName = linkageName
        self.file = file
        self.line = line
        self.module = module
    }
}

/// One rule of which frames are not the user's and what folding does with them.
public struct FoldRule: Sendable, Hashable, Codable {
    /// What folding does with a frame the rule matches.
    public enum Action: String, Sendable, Hashable, Codable {
        /// Allocation machinery (the agent, jemalloc, malloc, `swift_allocObject`, `operator new`): removed
        /// from the leaf end of a stack, so the stack ends in the code that asked for memory.
        case allocator
        /// Process and thread entry (`_start`, `start_thread`): the innermost matching frame and every
        /// frame above it are removed.
        case entry
        /// The harness above the workload (its command line, its case executor): like `entry`, and the
        /// library frames right below the innermost one (a thunk or `forEach` calling the workload for
        /// the harness) go too, so stacks start at the workload.
        case harness
        /// Library code (standard library, Foundation, libc): kept in stacks, never named as the
        /// allocation site (the site is the innermost frame that is not library code).
        case library
        /// memharness's own code, wherever it runs (a workload's case process, a test process with
        /// `expectMemory`, a program that links the library): folding leaves such a frame as it is, but a
        /// block it allocated is the harness's, never the user's (`StackFolder.isHarnessAllocation`).
        case harnessOwn
        /// The kit memharness gives workloads (WorkloadKit: threads, pacing, random numbers): a block it allocates is
        /// whoever's called it, the harness's or the workload's (`StackFolder.isHarnessAllocation`).
        case kit
    }

    /// Which frames a rule matches.
    public enum Pattern: Sendable, Hashable, Codable {
        /// The readable function name is exactly this.
        case function(String)
        /// The readable function name starts with this (C++ names carry their parameter list).
        case functionPrefix(String)
        /// The binary's file name starts with this (`libjemalloc.so`).
        case module(String)
        /// A Swift symbol declared in this Swift module (its mangled name starts with the module).
        case swiftModule(String)
        /// A Swift symbol declared in this type or nested in it: methods, closures, local functions.
        case swiftType(module: String, type: String)
        /// A Swift symbol of the standard library, including its generic code specialized into other binaries.
        case swiftStandardLibrary
    }

    /// Which frames the rule matches.
    public var pattern: Pattern
    /// What folding does with them.
    public var action: Action
    /// Why the rule exists, for readers of the list.
    public var reason: String

    public init(_ pattern: Pattern, _ action: Action, reason: String) {
        self.pattern = pattern
        self.action = action
        self.reason = reason
    }

    /// True when the rule matches `frame`.
    public func matches(_ frame: SymbolizedFrame) -> Bool {
        switch pattern {
        case .function(let name):
            return frame.function == name
        case .functionPrefix(let prefix):
            return frame.function.hasPrefix(prefix)
        case .module(let prefix):
            return (frame.module.split(separator: "/").last.map(String.init) ?? frame.module).hasPrefix(prefix)
        case .swiftModule(let module):
            guard let body = Self.swiftMangledBody(frame.linkageName) else { return false }
            return body.hasPrefix(Self.identifier(module))
        case .swiftType(let module, let type):
            guard let body = Self.swiftMangledBody(frame.linkageName) else { return false }
            return body.hasPrefix(Self.identifier(module) + Self.identifier(type))
        case .swiftStandardLibrary:
            guard let body = Self.swiftMangledBody(frame.linkageName) else { return false }
            // `s` is the standard library's module; `S` + a letter is a standard type (`Sa` Array,
            // `SD` Dictionary, `Sc...` concurrency types): both mean code of the runtime libraries.
            return body.hasPrefix("s") || body.hasPrefix("S")
        }
    }

    /// The mangled name after its Swift prefix (`$s`, `_$s`, `$S`, `$e`), nil for other symbols.
    static func swiftMangledBody(_ linkageName: String?) -> Substring? {
        guard let name = linkageName else { return nil }
        for prefix in ["$s", "_$s", "$S", "_$S", "$e", "_$e"] where name.hasPrefix(prefix) {
            return name.dropFirst(prefix.count)
        }
        return nil
    }

    /// An identifier as Swift mangles it: its length in UTF-8 bytes, then the identifier.
    static func identifier(_ name: String) -> String { "\(name.utf8.count)\(name)" }
}

/// The fold: which frames are not the user's, as a small declarative list, and the function that applies it.
public struct StackFolder: Sendable, Hashable, Codable {
    /// The rules, in no particular order: a frame matches an action when any rule of that action matches it.
    public var rules: [FoldRule]

    public init(rules: [FoldRule] = StackFolder.standardRules) {
        self.rules = rules
    }

    /// The rules memharness uses: the agent, jemalloc, the malloc family, the Swift runtime's
    /// allocation entry points and C++ `operator new` are allocator frames; process and thread entry
    /// are entry frames; the harness's command line and its case executor are harness frames; the
    /// Swift, C and C++ runtime libraries and compiler-generated thunks are library frames.
    public static let standardRules: [FoldRule] = {
        var rules: [FoldRule] = [
            FoldRule(
                .module("libmemharness-agent"), .allocator,
                reason: "the memharness agent (interposed malloc family, stack recorder)"),
            FoldRule(.module("libjemalloc"), .allocator, reason: "jemalloc"),
            FoldRule(.functionPrefix("je_"), .allocator, reason: "jemalloc linked statically or with its prefix"),
            FoldRule(.functionPrefix("operator new"), .allocator, reason: "C++ operator new, every overload"),
        ]
        for name in mallocFamily {
            rules.append(FoldRule(.function(name), .allocator, reason: "the malloc family"))
        }
        for prefix in [
            "swift_slowAlloc", "swift::swift_slowAlloc", "swift_allocObject", "_swift_allocObject", "swift_allocBox",
            "swift_allocEmptyBox", "swift_allocError", "swift_bufferAllocate", "swift_coroFrameAlloc",
        ] {
            rules.append(
                FoldRule(.functionPrefix(prefix), .allocator, reason: "the Swift runtime's allocation entry points"))
        }
        for name in ["_start", "start_thread", "clone", "clone3"] {
            rules.append(FoldRule(.function(name), .entry, reason: "process and thread entry"))
        }
        rules += [
            FoldRule(.functionPrefix("__libc_start_"), .entry, reason: "process entry (glibc)"),
            FoldRule(.functionPrefix("__clone"), .entry, reason: "thread entry (glibc)"),
            FoldRule(
                .swiftType(module: "Measurement", type: "Agent"), .allocator,
                reason: "the agent's stack capture (a tracked object's stack ends where the workload tracks it)"),
            FoldRule(
                .swiftType(module: "WorkloadKit", type: "LifetimeTracker"), .allocator, reason: "tracking an object"),
            FoldRule(.swiftType(module: "WorkloadKit", type: "CaseContext"), .allocator, reason: "tracking an object"),
            FoldRule(.swiftModule("MemHarness"), .harness, reason: "the harness's command line"),
            FoldRule(.swiftModule("memharness"), .harness, reason: "the harness's main"),
            FoldRule(
                .swiftModule("ArgumentParser"), .harness, reason: "the command-line parser the harness runs under"),
            FoldRule(.swiftType(module: "Measurement", type: "CaseExecutor"), .harness, reason: "the case executor"),
            FoldRule(
                .swiftType(module: "Measurement", type: "CaseRun"), .harness,
                reason: "the case run, which calls the workload"),
            FoldRule(
                .swiftStandardLibrary, .library,
                reason: "the Swift standard library, also where specialized into other binaries"),
            FoldRule(.functionPrefix("thunk for "), .library, reason: "compiler-generated thunks"),
            FoldRule(.functionPrefix("reabstraction thunk"), .library, reason: "compiler-generated thunks"),
            FoldRule(.functionPrefix("partial apply for thunk"), .library, reason: "compiler-generated thunks"),
            FoldRule(.swiftModule("Foundation"), .library, reason: "Foundation"),
            FoldRule(.swiftModule("FoundationEssentials"), .library, reason: "Foundation"),
            FoldRule(.swiftModule("Dispatch"), .library, reason: "Dispatch"),
        ]
        rules += ownershipRules
        for prefix in [
            "libswift", "libFoundation", "lib_Foundation", "libdispatch.so", "libBlocksRuntime", "libc.so", "libm.so",
            "libstdc++.so", "libgcc_s.so", "ld-linux",
        ] {
            rules.append(FoldRule(.module(prefix), .library, reason: "the Swift, C and C++ runtime libraries"))
        }
        return rules
    }()

    /// Which code's blocks are the harness's (`Action.harnessOwn`) and which code allocates for its caller
    /// (`Action.kit`): see `isHarnessAllocation`.
    static let ownershipRules: [FoldRule] = {
        var rules: [FoldRule] = []
        for module in harnessModules {
            rules.append(FoldRule(.swiftModule(module), .harnessOwn, reason: "memharness's own code"))
        }
        rules.append(FoldRule(.swiftModule("WorkloadKit"), .kit, reason: "the kit memharness gives workloads"))
        // `WorkloadCatalog` is mangled with a substitution for its first word (`0A7Catalog`): its readable name then.
        for type in ["CaseContext", "LifetimeTracker", "MemoryWarnings", "Parameters"] {
            rules.append(
                FoldRule(
                    .swiftType(module: "WorkloadKit", type: type), .harnessOwn,
                    reason: "the workload kit's bookkeeping for the harness"))
        }
        rules.append(
            FoldRule(
                .functionPrefix("WorkloadKit.WorkloadCatalog."), .harnessOwn,
                reason: "the workload kit's bookkeeping for the harness"))
        return rules
    }()

    /// The Swift modules of memharness's own code (its libraries and its command line): a block allocated there is the
    /// harness's. A program of the user's whose module has one of these names would have its blocks taken for the
    /// harness's: the names are this package's, which SwiftPM keeps unique within a build.
    public static let harnessModules = [
        "HarnessModel", "Measurement", "Runner", "Reports", "HeapGraph", "Symbols", "SwiftReflection", "Attribution",
        "Scenarios", "FileIO", "ChildProcesses", "Verdicts", "History", "AllocatorProbe", "MemHarness",
        "MemHarnessTesting", "memharness", "BuiltInWorkloads",
    ]

    /// The malloc family's entry points, glibc's and jemalloc's non-standard ones included.
    static let mallocFamily = [
        "malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign", "valloc",
        "pvalloc", "mallocx", "rallocx", "xallocx", "__libc_malloc", "__libc_calloc", "__libc_realloc",
        "__libc_memalign", "__posix_memalign",
    ]

    /// Folds one stack given **root first**: allocator frames off the leaf end (with the library
    /// frames between them), entry frames off the root end, library frames marked. Never returns an empty
    /// stack for a non-empty one: when only allocator frames remain, the outermost of them stays (the entry
    /// point unknown code called);
    /// when an entry or harness frame is the innermost frame left, it stays (the harness itself allocated).
    /// Library frames directly below the innermost harness frame go with it (see `Action.harness`).
    public func fold(_ stack: [SymbolizedFrame], memo: FoldMemo? = nil) -> [AllocationFrame] {
        guard !stack.isEmpty else { return [] }
        // Each frame's actions looked up once (a memo's lookup hashes the whole frame), not once per question.
        let known = memo.map { memo in stack.map { memo.actions(of: $0, folder: self) } }
        func matches(_ index: Int, _ action: FoldRule.Action) -> Bool {
            known?[index].contains(action) ?? self.matches(stack[index], action)
        }
        var end = stack.count
        // The leaf end's run of allocator and library frames is cut at its outermost allocator frame:
        // library code the allocator machinery calls (a `withUnsafeMutableBufferPointer` inside the stack
        // capture, a `Mutex.withLock` inside the tracker) goes with it, while library code that called
        // the allocator (an `Array.append` growing its buffer) stays. At least one frame stays: when
        // everything is allocator machinery, the outermost frame keeps the bytes visible.
        var runStart = end
        while runStart > 0, matches(runStart - 1, .allocator) || matches(runStart - 1, .library) {
            runStart -= 1
        }
        if let outermost = (runStart..<end).first(where: { matches($0, .allocator) }) {
            end = max(outermost, 1)
        }
        var start = 0
        if let innermost = (0..<end).last(where: { matches($0, .entry) || matches($0, .harness) }) {
            start = innermost + 1 < end ? innermost + 1 : innermost
            if matches(innermost, .harness) {
                // Library frames right below the harness (a thunk, `forEach`) called the workload on the
                // harness's behalf: they go too, as long as a frame is left.
                while start < end - 1, matches(start, .library) { start += 1 }
            }
        }
        return (start..<end).map { index in
            let frame = stack[index]
            return AllocationFrame(
                function: memo?.shortened(frame.function) ?? ReadableName.shortened(frame.function), file: frame.file,
                line: frame.line, module: frame.module, isLibrary: matches(index, .library))
        }
    }

    /// True when the block allocated by `stack` (given **root first**) is the harness's own: the innermost frame that is
    /// neither allocation machinery, library code, the workload kit nor the code the harness runs under (its
    /// command-line parser: a program's own when it runs under it) is memharness's own code (`Action.harnessOwn`).
    /// Checked before the machinery: the harness's tracking of an object (`CaseContext.track`) folds as an allocator
    /// frame, and what it allocates for itself is the harness's. A workload's code that the harness called is the
    /// user's, and so is what the kit allocates for it.
    public func isHarnessAllocation(_ stack: [SymbolizedFrame], memo: FoldMemo? = nil) -> Bool {
        for frame in stack.reversed() {
            let actions =
                memo?.actions(of: frame, folder: self) ?? Set(rules.filter { $0.matches(frame) }.map(\.action))
            if actions.contains(.harnessOwn) { return true }
            if actions.isDisjoint(with: [.allocator, .library, .kit, .harness]) { return false }
        }
        return false
    }

    /// True when a rule with `action` matches `frame`.
    public func matches(_ frame: SymbolizedFrame, _ action: FoldRule.Action) -> Bool {
        rules.contains { $0.action == action && $0.matches(frame) }
    }
}

/// What the fold rules say of each frame, and each function's short name, remembered: folding the thousands of stacks of
/// a heap capture (every block has one, and they share most of their frames) matches each frame against the rules once.
/// For one folder's rules; not thread-safe (one naming uses it on one thread).
public final class FoldMemo {
    private var actions: [SymbolizedFrame: Set<FoldRule.Action>] = [:]
    private var shortNames: [String: String] = [:]

    public init() {}

    /// The actions of every rule of `folder` that matches `frame`.
    func actions(of frame: SymbolizedFrame, folder: StackFolder) -> Set<FoldRule.Action> {
        if let known = actions[frame] { return known }
        let matched = Set(folder.rules.filter { $0.matches(frame) }.map(\.action))
        actions[frame] = matched
        return matched
    }

    func shortened(_ function: String) -> String {
        if let known = shortNames[function] { return known }
        let short = ReadableName.shortened(function)
        shortNames[function] = short
        return short
    }
}
