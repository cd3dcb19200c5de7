/// One segment of a file loaded into a process (its code, or its data): where addresses in it come from.
public struct LoadedModule: Sendable, Hashable, Codable {
    /// What was added to the file's virtual addresses when it was loaded (0 for a non-PIE executable).
    public var loadBias: UInt64
    /// First address of the segment in the process.
    public var start: UInt64
    /// One past the last address of the segment.
    public var end: UInt64
    /// Path of the file.
    public var path: String

    public init(loadBias: UInt64, start: UInt64, end: UInt64, path: String) {
        self.loadBias = loadBias
        self.start = start
        self.end = end
        self.path = path
    }

    /// True when `address` lies in this segment.
    public func contains(_ address: UInt64) -> Bool { address >= start && address < end }

    /// The file's own name, without its folder.
    public var fileName: String { path.split(separator: "/").last.map(String.init) ?? path }
}

/// The loaded files of a process: the one lookup from an address to the segment (and file) it lies in.
public struct ModuleMap: Sendable {
    /// The segments, sorted by start (they do not overlap).
    public let modules: [LoadedModule]

    public init(_ modules: [LoadedModule]) {
        self.modules = modules.sorted { $0.start < $1.start }
    }

    /// The segments of files loaded at these load biases, from each file's program headers; a file that cannot be read
    /// has none.
    public init(loadedFiles: [(path: String, loadBias: UInt64)]) {
        self.init(
            loadedFiles.flatMap { file in
                ELFSymbols.cached(path: file.path).loadSegments.map {
                    LoadedModule(
                        loadBias: file.loadBias, start: file.loadBias &+ $0.lowerBound,
                        end: file.loadBias &+ $0.upperBound, path: file.path)
                }
            })
    }

    /// The segment holding `address`, or nil when no loaded file does.
    public func module(containing address: UInt64) -> LoadedModule? {
        guard let index = modules.lastIndex(startingAtOrBelow: address, start: \.start),
            modules[index].contains(address)
        else { return nil }
        return modules[index]
    }
}
