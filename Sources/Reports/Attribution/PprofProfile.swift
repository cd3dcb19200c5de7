import CZlib
import HarnessModel

/// The live set at the peak as pprof's `profile.proto` (`go tool pprof`, pprof.me, Grafana Pyroscope).
///
/// Hand-encoded protobuf (field numbers of `perftools.profiles` in google/pprof `proto/profile.proto`):
/// sample types `space/bytes` (the default) and `objects/count`, one sample per stack live at the
/// peak (leaf first), one location per frame (already symbolized: no addresses, the mappings say
/// functions, files, lines and inlined frames are present, so pprof does not symbolize again),
/// one function per name and file, one mapping per binary. Deterministic: same profile, same bytes.
public enum PprofProfile {
    /// Why the profile could not be compressed.
    public enum CompressionError: Error, CustomStringConvertible, Sendable, Hashable {
        /// zlib reported this error code (`Z_MEM_ERROR` is -4, `Z_STREAM_ERROR` -2).
        case zlib(code: Int32, step: String)

        public var description: String {
            switch self {
            case .zlib(let code, let step):
                return
                    "zlib \(step) failed with code \(code) while writing the pprof profile; with -4 (out of memory) free memory and retry"
            }
        }
    }

    /// The profile as a `*.pb.gz` file: the protobuf encoding, gzip-compressed as pprof expects.
    public static func gzipped(_ profile: AllocationProfile, comment: String? = nil) throws(CompressionError) -> [UInt8]
    {
        try Gzip.compress(encode(profile, comment: comment))
    }

    /// The uncompressed protobuf encoding of the `Profile` message.
    /// - Parameter comment: a line for the profile's comments (the scenario and strategy), besides the one saying what the values are.
    public static func encode(_ profile: AllocationProfile, comment: String? = nil) -> [UInt8] {
        var encoder = Encoder(profile)
        encoder.writeSampleTypes()
        encoder.writeSamples()
        encoder.writeMappings()
        encoder.writeLocations()
        encoder.writeFunctions()
        encoder.writePeriodAndComments(comment)
        return encoder.finish()
    }

    /// Writes one `Profile` message field by field; strings get their indices as fields use them,
    /// and the string table is written last.
    private struct Encoder {
        let profile: AllocationProfile
        /// The stacks live at the peak: one sample each.
        let live: [AllocationStack]
        var strings = StringTable()
        var message = ProtobufWriter()
        let space: Int
        let bytes: Int
        let objects: Int
        let count: Int
        // Only frames of live stacks; ids in order of first use (leaf to root, largest stack first).
        var locations = IDTable<Int>()
        var functions = IDTable<FunctionKey>()
        var mappings = IDTable<String>()

        init(_ profile: AllocationProfile) {
            self.profile = profile
            space = strings.index("space")
            bytes = strings.index("bytes")
            objects = strings.index("objects")
            count = strings.index("count")
            live = profile.stacks.filter { $0.peakLiveBytes > 0 }
            for stack in live {
                for index in stack.frameIndices.reversed() where locations[index] == nil {
                    let frame = profile.frames[index]
                    locations.add(index)
                    functions.add(FunctionKey(name: frame.function, file: frame.file ?? ""))
                    mappings.add(frame.module)
                }
            }
        }

        /// sample_type = 1: ValueType { type = 1, unit = 2 }
        mutating func writeSampleTypes() {
            message.message(1) {
                $0.int(1, space)
                $0.int(2, bytes)
            }
            message.message(1) {
                $0.int(1, objects)
                $0.int(2, count)
            }
        }

        /// sample = 2: Sample { location_id = 1 (packed, leaf first), value = 2 (packed) }
        mutating func writeSamples() {
            for stack in live {
                message.message(2) { sample in
                    sample.packed(1, stack.frameIndices.reversed().compactMap { locations[$0] })
                    sample.packed(2, [UInt64(stack.peakLiveBytes), UInt64(max(stack.peakLiveCount, 0))])
                }
            }
        }

        /// mapping = 3: Mapping { id = 1, filename = 5, has_functions = 7, has_filenames = 8, has_line_numbers = 9, has_inline_frames = 10 }
        mutating func writeMappings() {
            for module in mappings.order {
                let id = mappings[module] ?? 0
                let filename = strings.index(module)
                message.message(3) { mapping in
                    mapping.uint(1, id)
                    mapping.int(5, filename)
                    for field in 7...10 { mapping.uint(field, 1) }
                }
            }
        }

        /// location = 4: Location { id = 1, mapping_id = 2, line = 4: Line { function_id = 1, line = 2 } }
        mutating func writeLocations() {
            for index in locations.order {
                let frame = profile.frames[index]
                let function = functions[FunctionKey(name: frame.function, file: frame.file ?? "")] ?? 0
                let mapping = mappings[frame.module] ?? 0
                let id = locations[index] ?? 0
                message.message(4) { location in
                    location.uint(1, id)
                    location.uint(2, mapping)
                    location.message(4) { line in
                        line.uint(1, function)
                        if let number = frame.line { line.int(2, number) }
                    }
                }
            }
        }

        /// function = 5: Function { id = 1, name = 2, system_name = 3, filename = 4 }
        mutating func writeFunctions() {
            for key in functions.order {
                let name = strings.index(key.name)
                let file = strings.index(key.file)
                let id = functions[key] ?? 0
                message.message(5) { function in
                    function.uint(1, id)
                    function.int(2, name)
                    function.int(3, name)
                    function.int(4, file)
                }
            }
        }

        /// period_type = 11, period = 12: one sample per `sampleMeanBytes` bytes on average.
        /// comment = 13 (string indices), default_sample_type = 14.
        mutating func writePeriodAndComments(_ comment: String?) {
            message.message(11) {
                $0.int(1, space)
                $0.int(2, bytes)
            }
            message.int(12, profile.sampleMeanBytes)
            let what =
                "memharness: live bytes at the peak above the baseline (measured peak above baseline \(profile.peakNetBytes) bytes); "
                + "byte-sampled, one sample per \(profile.sampleMeanBytes) bytes on average"
            for line in [what] + (comment.map { [$0] } ?? []) { message.int(13, strings.index(line)) }
            message.int(14, space)
        }

        /// The message with the string table = 6 last: every index above is known by now.
        func finish() -> [UInt8] {
            var encoded = message
            for string in strings.strings { encoded.string(6, string) }
            return encoded.bytes
        }
    }

    /// Ids from 1 in order of first use, as `profile.proto` numbers them (0 means none).
    private struct IDTable<Key: Hashable> {
        private(set) var order: [Key] = []
        private var ids: [Key: UInt64] = [:]

        subscript(key: Key) -> UInt64? { ids[key] }

        mutating func add(_ key: Key) {
            guard ids[key] == nil else { return }
            ids[key] = UInt64(order.count + 1)
            order.append(key)
        }
    }

    private struct FunctionKey: Hashable {
        var name: String
        var file: String
    }

    /// pprof's string table: index 0 is the empty string.
    private struct StringTable {
        var strings: [String] = [""]
        var indices: [String: Int] = ["": 0]

        mutating func index(_ string: String) -> Int {
            if let index = indices[string] { return index }
            indices[string] = strings.count
            strings.append(string)
            return strings.count - 1
        }
    }
}

/// The protobuf wire format, as much of it as `profile.proto` needs: varints (wire type 0) and
/// length-delimited fields (wire type 2: strings, messages, packed repeated varints).
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func key(_ field: Int, wireType: UInt64) {
        varint(UInt64(field) << 3 | wireType)
    }

    /// An unsigned field; zero is the default and is left out, as proto3 writers do.
    mutating func uint(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        key(field, wireType: 0)
        varint(value)
    }

    /// A signed 64-bit field (`int64`: negative values as ten-byte two's complement); zero left out.
    mutating func int(_ field: Int, _ value: Int) {
        guard value != 0 else { return }
        key(field, wireType: 0)
        varint(UInt64(bitPattern: Int64(value)))
    }

    mutating func lengthDelimited(_ field: Int, _ payload: [UInt8]) {
        key(field, wireType: 2)
        varint(UInt64(payload.count))
        bytes += payload
    }

    /// A string field; repeated string fields keep empty strings (the string table's first entry).
    mutating func string(_ field: Int, _ value: String) {
        lengthDelimited(field, Array(value.utf8))
    }

    mutating func packed(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var inner = ProtobufWriter()
        for value in values { inner.varint(value) }
        lengthDelimited(field, inner.bytes)
    }

    mutating func message(_ field: Int, _ build: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        build(&inner)
        lengthDelimited(field, inner.bytes)
    }
}

/// gzip through zlib (RFC 1952 framing: `deflateInit2` with window bits 15 + 16).
enum Gzip {
    static func compress(_ input: [UInt8], level: Int32 = 9) throws(PprofProfile.CompressionError) -> [UInt8] {
        var stream = z_stream()
        let status = deflateInit2_(
            &stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw .zlib(code: status, step: "deflateInit2") }
        defer { deflateEnd(&stream) }
        // deflateBound covers the deflate stream; the gzip header and trailer add 18 bytes.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 18)
        var input = input
        let result: Int32 = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else { throw .zlib(code: result, step: "deflate") }
        return Array(output.prefix(Int(stream.total_out)))
    }
}
