import CZlib
import FileIO
import Foundation
import HarnessModel
import Testing

@testable import Reports

/// A minimal protobuf reader: enough of the wire format to read back `profile.proto`.
struct ProtobufReader {
    enum Value: Equatable {
        case varint(UInt64)
        case bytes([UInt8])
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// The fields of one message, in order (repeated fields appear once per occurrence).
    static func fields(_ bytes: [UInt8]) throws -> [(field: Int, value: Value)] {
        var result: [(Int, Value)] = []
        var index = 0
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.count, shift < 64 else {
                    throw Malformed(description: "varint runs past the end at \(index)")
                }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        while index < bytes.count {
            let key = try varint()
            let field = Int(key >> 3)
            switch key & 7 {
            case 0: result.append((field, .varint(try varint())))
            case 2:
                let length = Int(try varint())
                guard length >= 0, index + length <= bytes.count else {
                    throw Malformed(description: "field \(field) runs past the end")
                }
                result.append((field, .bytes(Array(bytes[index..<index + length]))))
                index += length
            default: throw Malformed(description: "wire type \(key & 7) of field \(field) is not used by profile.proto")
            }
        }
        return result
    }

    static func packed(_ bytes: [UInt8]) throws -> [UInt64] {
        var values: [UInt64] = []
        var index = 0
        while index < bytes.count {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.count else { throw Malformed(description: "packed varint runs past the end") }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            values.append(value)
        }
        return values
    }
}

/// `profile.proto` read back: just what the checks need.
struct DecodedProfile {
    var strings: [String] = []
    var sampleTypes: [(type: Int, unit: Int)] = []
    var samples: [(locations: [UInt64], values: [UInt64])] = []
    var locations: [UInt64: (mapping: UInt64, lines: [(function: UInt64, line: UInt64)])] = [:]
    var functions: [UInt64: (name: Int, systemName: Int, file: Int)] = [:]
    var mappings: [UInt64: (file: Int, flags: [Int])] = [:]
    var period: UInt64 = 0
    var periodType: (type: Int, unit: Int) = (0, 0)
    var comments: [Int] = []
    var defaultSampleType = 0

    init(_ bytes: [UInt8]) throws {
        func int(_ value: ProtobufReader.Value) -> UInt64 {
            if case .varint(let number) = value { return number }
            return 0
        }
        func message(_ value: ProtobufReader.Value) throws -> [(field: Int, value: ProtobufReader.Value)] {
            if case .bytes(let payload) = value { return try ProtobufReader.fields(payload) }
            return []
        }
        func valueType(_ value: ProtobufReader.Value) throws -> (Int, Int) {
            let fields = try message(value)
            return (
                Int(fields.first { $0.field == 1 }.map { int($0.value) } ?? 0),
                Int(fields.first { $0.field == 2 }.map { int($0.value) } ?? 0)
            )
        }
        for (field, value) in try ProtobufReader.fields(bytes) {
            switch field {
            case 1: sampleTypes.append(try valueType(value))
            case 2:
                var locations: [UInt64] = []
                var values: [UInt64] = []
                for (inner, innerValue) in try message(value) {
                    guard case .bytes(let payload) = innerValue else { continue }
                    if inner == 1 { locations += try ProtobufReader.packed(payload) }
                    if inner == 2 { values += try ProtobufReader.packed(payload) }
                }
                samples.append((locations, values))
            case 3:
                let fields = try message(value)
                let id = fields.first { $0.field == 1 }.map { int($0.value) } ?? 0
                mappings[id] = (
                    Int(fields.first { $0.field == 5 }.map { int($0.value) } ?? 0),
                    fields.filter { (7...10).contains($0.field) && int($0.value) == 1 }.map(\.field)
                )
            case 4:
                let fields = try message(value)
                let id = fields.first { $0.field == 1 }.map { int($0.value) } ?? 0
                var lines: [(UInt64, UInt64)] = []
                for line in fields where line.field == 4 {
                    let lineFields = try message(line.value)
                    lines.append(
                        (
                            lineFields.first { $0.field == 1 }.map { int($0.value) } ?? 0,
                            lineFields.first { $0.field == 2 }.map { int($0.value) } ?? 0
                        ))
                }
                locations[id] = (fields.first { $0.field == 2 }.map { int($0.value) } ?? 0, lines)
            case 5:
                let fields = try message(value)
                func get(_ number: Int) -> Int { Int(fields.first { $0.field == number }.map { int($0.value) } ?? 0) }
                functions[UInt64(get(1))] = (get(2), get(3), get(4))
            case 6:
                if case .bytes(let payload) = value { strings.append(String(decoding: payload, as: UTF8.self)) }
            case 11: periodType = try valueType(value)
            case 12: period = int(value)
            case 13: comments.append(Int(int(value)))
            case 14: defaultSampleType = Int(int(value))
            default: break
            }
        }
    }

    /// Function names of a sample, leaf first.
    func functionNames(_ sample: (locations: [UInt64], values: [UInt64])) -> [String] {
        sample.locations.flatMap { id in (locations[id]?.lines ?? []).map { strings[functions[$0.function]?.name ?? 0] }
        }
    }
}

enum GunzipError: Error { case zlib(Int32) }

/// gunzip through zlib's inflate (window bits 15 + 32: gzip or zlib header, detected).
func gunzip(_ input: [UInt8]) throws -> [UInt8] {
    var stream = z_stream()
    var status = inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
    guard status == Z_OK else { throw GunzipError.zlib(status) }
    defer { inflateEnd(&stream) }
    var input = input
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    try input.withUnsafeMutableBufferPointer { source in
        stream.next_in = source.baseAddress
        stream.avail_in = uInt(source.count)
        repeat {
            let produced: Int = chunk.withUnsafeMutableBufferPointer { destination in
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                status = inflate(&stream, Z_NO_FLUSH)
                return destination.count - Int(stream.avail_out)
            }
            guard status == Z_OK || status == Z_STREAM_END else { throw GunzipError.zlib(status) }
            output += chunk.prefix(produced)
        } while status != Z_STREAM_END
    }
    return output
}

struct AttributionRenderTests {
    let unbounded = AttributionFixture.unbounded
    let signalNext = AttributionFixture.signalNext

    @Test func foldedStacksMatchGolden() throws {
        let folded = FoldedStacks.render(unbounded)
        try ReportWriterTests().checkGolden(folded, "attribution-folded.txt")
        // Every line is `frames bytes`; the bytes add up to the sampled live set; no stack without bytes.
        var total = 0
        for line in folded.split(separator: "\n") {
            let parts = line.split(separator: " ")
            let last = try #require(parts.last)
            let bytes = try #require(Int(last))
            #expect(bytes > 0)
            total += bytes
        }
        #expect(total == unbounded.sampledPeakLiveBytes)
        #expect(
            folded.contains(
                "LiveQueryCase.run(_:context:);LiveQueryApp.deliver(_:);specialized Array.append(_:) 137363456\n"))
    }

    @Test func foldedNamesCannotBreakTheFormat() {
        let profile = AllocationProfile(
            frames: [
                AllocationFrame(function: "operator;weird\nname", module: "/a"),
                AllocationFrame(function: "leaf", module: "/a"),
            ],
            stacks: [AllocationStack(frameIndices: [0, 1], peakLiveBytes: 10, peakLiveCount: 1)],
            peakLevelBytes: 10, baselineLevelBytes: 0, peakTimeNanoseconds: 0, sampleMeanBytes: 1)
        #expect(FoldedStacks.render(profile) == "operator:weird name;leaf 10\n")
    }

    @Test func pprofReadsBackWithTheSameTotals() throws {
        let encoded = PprofProfile.encode(unbounded, comment: "live-query / unbounded-dispatch")
        let decoded = try DecodedProfile(encoded)
        #expect(decoded.strings.first == "")
        #expect(
            decoded.sampleTypes.map { "\(decoded.strings[$0.type])/\(decoded.strings[$0.unit])" } == [
                "space/bytes", "objects/count",
            ])
        #expect(decoded.strings[decoded.defaultSampleType] == "space")
        #expect(decoded.period == 65_536)
        #expect(decoded.strings[decoded.periodType.type] == "space")
        #expect(decoded.comments.map { decoded.strings[$0] }.last == "live-query / unbounded-dispatch")
        // One sample per stack live at the peak, values bytes then count, totals kept.
        #expect(decoded.samples.count == unbounded.stacks.filter { $0.peakLiveBytes > 0 }.count)
        #expect(decoded.samples.reduce(0) { $0 + Int($1.values[0]) } == unbounded.sampledPeakLiveBytes)
        #expect(
            decoded.samples.reduce(0) { $0 + Int($1.values[1]) } == unbounded.stacks.reduce(0) { $0 + $1.peakLiveCount }
        )
        // Leaf first.
        #expect(
            decoded.functionNames(decoded.samples[0]) == [
                "specialized Array.append(_:)", "LiveQueryApp.deliver(_:)", "LiveQueryCase.run(_:context:)",
            ])
        // Every reference resolves; ids are non-zero; mappings claim symbolized frames.
        for sample in decoded.samples {
            #expect(sample.values.count == 2)
            for id in sample.locations {
                let location = try #require(decoded.locations[id])
                #expect(decoded.mappings[location.mapping] != nil)
                for line in location.lines { #expect(decoded.functions[line.function] != nil) }
            }
        }
        #expect(
            !decoded.locations.keys.contains(0) && !decoded.functions.keys.contains(0)
                && !decoded.mappings.keys.contains(0))
        #expect(decoded.mappings.values.allSatisfy { $0.flags == [7, 8, 9, 10] })
        #expect(
            Set(decoded.mappings.values.map { decoded.strings[$0.file] }) == [
                AttributionFixture.executable, AttributionFixture.swiftCore, AttributionFixture.dispatch,
            ])
        let deliver = try #require(
            decoded.locations.values.first { location in
                location.lines.contains {
                    decoded.strings[decoded.functions[$0.function]?.name ?? 0] == "LiveQueryApp.deliver(_:)"
                        && $0.line == 42
                }
            })
        #expect(deliver.lines.count == 1)
        #expect(
            decoded.functions.values.contains {
                decoded.strings[$0.file] == "/work/Sources/Workloads/LiveQuery/LiveQueryApp.swift"
            })
    }

    @Test func pprofMatchesGoldenAndGunzipsToTheSameBytes() throws {
        let encoded = PprofProfile.encode(unbounded, comment: "live-query / unbounded-dispatch")
        let url = ReportWriterTests.goldenDirectory.appendingPathComponent("attribution-profile.pb")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" { try Data(encoded).write(to: url) }
        #expect(
            encoded == Array(try Data(contentsOf: url)),
            "attribution-profile.pb differs from its golden file; rerun with UPDATE_GOLDEN=1 and review")
        #expect(PprofProfile.encode(unbounded, comment: "live-query / unbounded-dispatch") == encoded, "deterministic")
        let gzipped = try PprofProfile.gzipped(unbounded, comment: "live-query / unbounded-dispatch")
        #expect(Array(gzipped.prefix(3)) == [0x1f, 0x8b, 0x08], "a gzip member with deflate")
        #expect(try gunzip(gzipped) == encoded)
        #expect(gzipped.count < encoded.count)
    }

    @Test func protobufVarintsAndFieldsEncodeAsTheSpecSays() throws {
        var writer = ProtobufWriter()
        writer.uint(1, 150)
        writer.int(2, -1)
        writer.string(6, "")
        writer.uint(3, 0)
        // Field 1 varint 150 is 08 96 01 (the protobuf encoding guide's example); -1 is ten bytes; zero is left out.
        #expect(
            writer.bytes == [
                0x08, 0x96, 0x01, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x32, 0x00,
            ])
        let fields = try ProtobufReader.fields(writer.bytes)
        #expect(fields.map(\.field) == [1, 2, 6])
        #expect(fields[0].value == .varint(150))
    }

    @Test func flameGraphIsValidAccessibleSVGAndMatchesGolden() throws {
        let svg = try #require(
            FlameGraph.render(unbounded, title: "live-query / unbounded-dispatch: live memory at the peak"))
        let check = XMLCheck.parse(svg)
        #expect(check.error == nil, "\(String(describing: check.error))")
        #expect(check.elements.first == "svg")
        #expect(check.elements.contains("title") && check.elements.contains("desc"))
        // One box per node of the call tree (a function under the same callers is one box), each with its own tooltip:
        // all; LiveQueryCase.run > deliver > append, enqueue > async, apply > resize, Document.init;
        // _dispatch_worker_thread2 > _dispatch_client_callout > closure > deliver.
        let boxes = svg.components(separatedBy: "<g><title>").count - 1
        #expect(boxes == 13)
        #expect(svg.contains("Document.init(fields:) &lt;with &quot;markup&quot; &amp; a | pipe&gt;"))
        #expect(
            svg.contains("LiveQueryApp.swift:42, LiveQueryApp.swift:44"), "a function's locations merged in its tooltip"
        )
        #expect(!svg.contains("$s"))
        try ReportWriterTests().checkGolden(svg, "attribution-flamegraph.svg")
    }

    @Test func flameGraphLabelsAreCutToFitTheirBox() throws {
        #expect(FlameGraph.fit("LiveQueryApp.deliver(_:)", width: 1000, size: 11) == "LiveQueryApp.deliver(_:)")
        #expect(
            FlameGraph.fit("LiveQueryApp.deliver(_:)", width: 66, size: 11) == "LiveQuery…", "10 characters of 6.6 px")
        #expect(FlameGraph.fit("LiveQueryApp.deliver(_:)", width: 12, size: 11) == nil)
        let svg = try #require(FlameGraph.render(unbounded, title: "t", width: 400))
        // Every label fits its box: its estimated width is within the rect's.
        let pattern = try NSRegularExpression(
            pattern: "<rect x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"([0-9.]+)\"[^>]*/><text[^>]*>([^<]*)</text>")
        let matches = pattern.matches(in: svg, range: NSRange(svg.startIndex..., in: svg))
        #expect(!matches.isEmpty)
        for match in matches {
            guard let widthRange = Range(match.range(at: 1), in: svg),
                let textRange = Range(match.range(at: 2), in: svg),
                let width = Double(svg[widthRange])
            else { continue }
            let label = String(svg[textRange]).replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(
                of: "&lt;", with: "<"
            )
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&quot;", with: "\"")
            #expect(Double(label.count) * 11 * 0.6 <= width - 6 + 0.01, "\(label) in \(width)")
        }
        #expect(
            FlameGraph.render(
                AllocationProfile(
                    frames: [], stacks: [], peakLevelBytes: 0, baselineLevelBytes: 0,
                    peakTimeNanoseconds: 0, sampleMeanBytes: 1), title: "empty") == nil)
    }

    @Test func topSitesMatchGolden() throws {
        let table = unbounded.siteTable(limit: 4)
        #expect(
            table.rows.map(\.site.function) == [
                "LiveQueryApp.deliver(_:)", "LiveQueryApp.enqueue(_:)",
                "DocumentStore.apply(_:)", "Document.init(fields:) <with \"markup\" & a | pipe>",
            ])
        try ReportWriterTests().checkGolden(AttributionMarkdown.topSites(table), "attribution-sites.md")
    }

    @Test func aProfileWithNoSiteLiveAtThePeakGetsASentenceNotAnEmptyTable() {
        let empty = AllocationProfile(
            frames: [], stacks: [], peakLevelBytes: 0, baselineLevelBytes: 0, peakTimeNanoseconds: 0,
            sampleMeanBytes: 64 << 10)
        let text = AttributionMarkdown.topSites(empty.siteTable(limit: 5), sampleMeanBytes: empty.sampleMeanBytes)
        #expect(!text.contains("| # |"), "\(text)")
        #expect(text.hasPrefix("No allocation stack sampled (about one per 64.00 KiB allocated) was live"), "\(text)")
        #expect(text.contains("--stack-sample"))
        // A profile with sites keeps its table.
        #expect(AttributionMarkdown.topSites(unbounded.siteTable(limit: 4)).hasPrefix("| # |"))
    }

    @Test func differenceSentenceNamesTheSiteThatExplainsIt() throws {
        let difference = unbounded.difference(from: signalNext, label: "unbounded-dispatch", baseLabel: "signal-next")
        #expect(difference.peakNetDeltaBytes == 138 * AttributionFixture.mebibyte)
        #expect(
            AttributionMarkdown.differenceSentence(difference)
                == "`unbounded-dispatch` +138.00 MiB at the peak over `signal-next`, of which 129.00 MiB from `LiveQueryApp.deliver(_:)` (LiveQueryApp.swift:42) "
                + "and 7.00 MiB from `LiveQueryApp.enqueue(_:)` (LiveQueryApp.swift:61).")
        let reverse = signalNext.difference(from: unbounded, label: "signal-next", baseLabel: "unbounded-dispatch")
        #expect(
            AttributionMarkdown.differenceSentence(reverse).hasPrefix(
                "`signal-next` -138.00 MiB at the peak over `unbounded-dispatch`, of which 129.00 MiB less from `LiveQueryApp.deliver(_:)`"
            ))
        try ReportWriterTests().checkGolden(AttributionMarkdown.difference(difference), "attribution-difference.md")
    }

    @Test func growthTableMatchesGolden() throws {
        let growth = unbounded.siteGrowth()
        #expect(growth.first?.site.function == "LiveQueryApp.deliver(_:)")
        try ReportWriterTests().checkGolden(AttributionMarkdown.growth(growth), "attribution-growth.md")
        #expect(AttributionMarkdown.growth([]) == "No allocation site grows per iteration.\n")
    }

    @Test func codeSpansSurviveBackticks() {
        #expect(AttributionMarkdown.code("a`b") == "``a`b``")
        #expect(AttributionMarkdown.code("`x`") == "`` `x` ``")
        #expect(AttributionMarkdown.code("a|b") == "`a\\|b`")
    }
}
