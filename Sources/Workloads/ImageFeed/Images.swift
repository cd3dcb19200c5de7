import Synchronization
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// Counts the images alive: gauges for the time line and the peak for the metrics.
final class ImageLedger: Sendable {
    let count: Gauge
    let bytes: Gauge
    private let peak = Atomic<Int64>(0)

    init(count: Gauge, bytes: Gauge) {
        self.count = count
        self.bytes = bytes
    }

    func created(_ size: Int) {
        count.increment()
        bytes.add(Int64(size))
        let now = bytes.value
        var seen = peak.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = peak.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    func released(_ size: Int) {
        count.decrement()
        bytes.add(-Int64(size))
    }

    /// Most image bytes alive at once, bytes.
    var peakBytes: Int64 { peak.load(ordering: .relaxed) }
}

/// An image in memory: the decoded bitmap, or the file's bytes when the feed does not decode.
///
/// Its memory comes straight from malloc (jemalloc) at exactly `byteCount` bytes and every page
/// is written, so it is both allocated and resident.
public final class LoadedImage: @unchecked Sendable {
    // Safety: every stored property is immutable after init; the buffer is written only in init
    // (by the loader, before the image is shared) and freed only in deinit, when no reference is left.
    /// The post whose image this is.
    public let post: Int
    private let buffer: UnsafeMutableRawBufferPointer
    private let ledger: ImageLedger?

    init(post: Int, buffer: UnsafeMutableRawBufferPointer, ledger: ImageLedger?) {
        self.post = post
        self.buffer = buffer
        self.ledger = ledger
        ledger?.created(buffer.count)
    }

    deinit {
        ledger?.released(buffer.count)
        buffer.deallocate()
    }

    /// Size in memory, bytes.
    public var byteCount: Int { buffer.count }

    /// The last byte (tests check an image came from its post's file).
    public var lastByte: UInt8 { buffer.last ?? 0 }
}

/// The image files of a timeline: one per post, generated once into a directory, and loaded
/// (read, then optionally decoded) on demand.
struct ImageFiles: Sendable {
    let directory: String
    let fileSize: Int
    /// Size of the decoded bitmap, bytes; 0: the image is the file's bytes as read.
    let decodedSize: Int

    func path(of post: Int) -> String {
        "\(directory)/post-\(post).img"
    }

    /// The byte the files of `post` are filled with (so a test can tell images apart).
    static func fill(of post: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: post &* 31 &+ 7)
    }

    /// Writes one file per post. Throws with the path and the system's reason when the disk refuses.
    func generate(posts: Int) throws(ImageFeedError) {
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: fileSize, alignment: 16)
        defer { block.deallocate() }
        for post in 0..<posts {
            block.initializeMemory(as: UInt8.self, repeating: Self.fill(of: post))
            // Vary the bytes inside a file as image data would, keeping the last byte the post's fill.
            for offset in Swift.stride(from: 0, to: fileSize - 1, by: 4096) {
                block[offset] = UInt8(truncatingIfNeeded: offset >> 12)
            }
            try transfer(post, flags: O_WRONLY | O_CREAT | O_TRUNC) { file, offset in
                write(file, block.baseAddress.map { $0 + offset }, fileSize - offset)
            }
        }
    }

    /// Opens the file of `post` and calls `step` (a read or write at an offset, returning the
    /// bytes moved) until `fileSize` bytes have moved.
    private func transfer(_ post: Int, flags: Int32, _ step: (_ file: Int32, _ offset: Int) -> Int)
        throws(ImageFeedError)
    {
        let file = open(path(of: post), flags, 0o644)
        guard file >= 0 else { throw .io(path: path(of: post), reason: String(cString: strerror(errno))) }
        defer { close(file) }
        var moved = 0
        while moved < fileSize {
            let result = step(file, moved)
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else {
                throw .io(
                    path: path(of: post),
                    reason: result == 0 ? "the file is shorter than imageSize" : String(cString: strerror(errno)))
            }
            moved += result
        }
    }

    /// Reads the file of `post` into memory and, with a decoded size, expands it into a bitmap.
    ///
    /// The "decode" tiles copies of the file's bytes over a bitmap of `decodedSize`, ending with
    /// the file's last bytes: it writes every byte of the bitmap, as a real decoder does, but costs
    /// less CPU than a JPEG decode would.
    func load(_ post: Int, ledger: ImageLedger?) throws(ImageFeedError) -> LoadedImage {
        let file = UnsafeMutableRawBufferPointer.allocate(byteCount: fileSize, alignment: 16)
        var fileOwned = true
        defer { if fileOwned { file.deallocate() } }
        try transfer(post, flags: O_RDONLY) { descriptor, offset in
            read(descriptor, file.baseAddress.map { $0 + offset }, fileSize - offset)
        }
        guard decodedSize > 0 else {
            fileOwned = false
            return LoadedImage(post: post, buffer: file, ledger: ledger)
        }
        let bitmap = UnsafeMutableRawBufferPointer.allocate(byteCount: decodedSize, alignment: 16)
        var end = decodedSize
        while end > 0 {
            let chunk = min(fileSize, end)
            UnsafeMutableRawBufferPointer(rebasing: bitmap[(end - chunk)..<end])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: file[(fileSize - chunk)..<fileSize]))
            end -= chunk
        }
        return LoadedImage(post: post, buffer: bitmap, ledger: ledger)
    }
}

/// Why an image-feed case could not run.
public enum ImageFeedError: Error, CustomStringConvertible {
    case io(path: String, reason: String)
    case unknownStrategy(String, expected: [String])

    public var description: String {
        switch self {
        case .io(let path, let reason):
            return
                "\(path): \(reason); the image files live in the case's scratch directory, which needs room for "
                + "posts × imageSize"
        case .unknownStrategy(let name, let expected):
            return "unknown image-feed strategy '\(name)'; expected one of: \(expected.joined(separator: ", "))"
        }
    }
}
