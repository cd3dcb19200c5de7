#if canImport(Glibc)
    import Glibc
#else
    #error("memharness builds on Linux only: a process's mappings are read from /proc")
#endif

/// One mapping of a process's address space, as `/proc/PID/maps` lists it.
public struct MappedRegion: Sendable, Hashable {
    public var start: UInt64
    public var end: UInt64
    public var isReadable: Bool
    public var isExecutable: Bool
    /// Where in its file the mapping starts.
    public var fileOffset: UInt64
    /// The mapped file's path; empty for anonymous memory, `[heap]`-style names for the kernel's own regions.
    public var path: String

    /// True when a file backs the mapping (a loaded image).
    public var isFile: Bool { path.hasPrefix("/") }
}

/// A process's mappings (`/proc/PID/maps`), sorted by address: which addresses can be read, and which files are
/// loaded where.
public struct ProcessMaps: Sendable {
    public let regions: [MappedRegion]
    /// Each region's start, in order: the lookups search these (asked for every read a naming makes, so they must not
    /// copy a region or build a closure each time).
    private let starts: [UInt64]

    public init(regions: [MappedRegion]) {
        self.regions = regions.sorted { $0.start < $1.start }
        starts = self.regions.map(\.start)
    }

    /// The mappings of process `pid` (this process when nil), read whole; empty when they cannot be read.
    ///
    /// Read with `read(2)` to the end: /proc files report a size of 0, and Foundation's
    /// `String(contentsOfFile:)` stops after the first 4 KiB (38 of a Swift program's 101 mappings, measured).
    public static func read(pid: Int32? = nil) -> ProcessMaps {
        let path = pid.map { "/proc/\($0)/maps" } ?? "/proc/self/maps"
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return ProcessMaps(regions: []) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return ProcessMaps(regions: String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap(parse))
    }

    /// `start-end perms offset device inode path`.
    private static func parse(_ line: Substring) -> MappedRegion? {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count >= 5 else { return nil }
        let range = fields[0].split(separator: "-")
        guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16),
            let offset = UInt64(fields[2], radix: 16)
        else { return nil }
        let path = fields.count == 6 ? String(fields[5].drop { $0 == " " }) : ""
        return MappedRegion(
            start: start, end: end, isReadable: fields[1].hasPrefix("r"), isExecutable: fields[1].contains("x"),
            fileOffset: offset, path: path)
    }

    /// The mapping holding `address`, or nil.
    public func region(containing address: UInt64) -> MappedRegion? {
        guard let index = starts.lastIndex(startingAtOrBelow: address), address < regions[index].end
        else { return nil }
        return regions[index]
    }

    /// True when the `length` bytes from `address` are readable (in one readable mapping, or in readable mappings
    /// that follow each other without a gap).
    public func isReadable(_ address: UInt64, length: Int) -> Bool {
        length <= readableLength(from: address, atLeast: length)
    }

    /// How many bytes from `address` on are readable without a gap; reading stops counting past `atLeast`.
    public func readableLength(from address: UInt64, atLeast wanted: Int = .max) -> Int {
        guard var index = starts.lastIndex(startingAtOrBelow: address),
            address < regions[index].end, regions[index].isReadable
        else { return 0 }
        var end = regions[index].end
        while end - address < UInt64(wanted), index + 1 < regions.count, regions[index + 1].start == end,
            regions[index + 1].isReadable
        {
            index += 1
            end = regions[index].end
        }
        return Int(clamping: end - address)
    }

    /// True when `address` lies in a file-backed mapping (a loaded image).
    public func isImage(_ address: UInt64) -> Bool { region(containing: address)?.isFile ?? false }

    /// The segments of every loaded file. A mapping of a file at offset O, at address A, says that the file was loaded
    /// with a bias of A minus the address the file's program headers give offset O (the file may also be mapped
    /// whole elsewhere, read as data: such a mapping's offset is in no segment's place, or gives another bias, and
    /// the mapping of the code decides).
    public var modules: ModuleMap {
        var bias: [String: UInt64] = [:]
        for region in regions where region.isFile && region.isExecutable && bias[region.path] == nil {
            guard let address = ELFSymbols.cached(path: region.path).loadedAddress(ofFileOffset: region.fileOffset)
            else { continue }
            bias[region.path] = region.start &- address
        }
        return ModuleMap(
            regions.filter(\.isFile).compactMap { region in
                guard let loadBias = bias[region.path],
                    ELFSymbols.cached(path: region.path).loadedAddress(ofFileOffset: region.fileOffset)
                        .map({ region.start &- $0 == loadBias }) == true
                else { return nil }
                return LoadedModule(loadBias: loadBias, start: region.start, end: region.end, path: region.path)
            })
    }
}
