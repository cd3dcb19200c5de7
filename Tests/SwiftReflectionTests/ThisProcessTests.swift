import SwiftReflection
import Symbols
import Testing

final class Document {
    var title = "draft"
    weak var parent: Document?
    unowned(unsafe) let image: Image
    var size = 3
    init(image: Image) { self.image = image }
}

final class Image {}

final class Box<Value> {
    var value: Value
    init(_ value: Value) { self.value = value }
}

struct Point {
    var x = 1.0
}

/// Holds a closure in its first field: the closure's function pointer at +16, its context at +24.
final class Holder {
    var action: () -> Int = { 0 }
}

/// The loaded files of this process and where, as a heap capture lists them.
func loadedImages() -> [(path: String, loadBias: UInt64)] {
    var seen: Set<String> = []
    return ProcessMaps.read().modules.modules.compactMap {
        seen.insert($0.path).inserted ? ($0.path, $0.loadBias) : nil
    }
}

func address(of object: AnyObject) -> UInt64 { UInt64(UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())) }

/// Objects of this test process, named by Swift's reflection reader over this process's own memory.
@Suite struct ThisProcessTests {
    let memory = TargetMemory()

    func reflector() throws -> SwiftReflector { try SwiftReflector(memory: TargetMemory(), images: loadedImages()) }

    /// The metadata pointer of the heap object at `object`.
    func metadata(_ object: UInt64) throws -> UInt64 { try #require(TargetMemory().load(object, as: UInt64.self)) }

    @Test func genericInstancesAreNamedWithTheirArgumentsMadeAtRunTime() throws {
        let reflector = try reflector()
        let points = (0..<Int.random(in: 3...5)).map { Point(x: Double($0)) }
        let images = ["a": Image(), "b": Image()]
        let box = Box(Int.random(in: 0...9))
        let documents = [Document(image: Image())]
        let (pointsMetadata, imagesMetadata, boxMetadata, documentsMetadata) = try withExtendedLifetime(
            (points, images, box, documents)
        ) {
            (
                try metadata(unsafeBitCast(points, to: UInt64.self)),
                try metadata(unsafeBitCast(images, to: UInt64.self)),
                try metadata(address(of: box)), try metadata(unsafeBitCast(documents, to: UInt64.self))
            )
        }
        #expect(
            reflector.typeName(ofMetadata: pointsMetadata)
                == "Swift._ContiguousArrayStorage<SwiftReflectionTests.Point>")
        #expect(
            reflector.typeName(ofMetadata: imagesMetadata)
                == "Swift._DictionaryStorage<Swift.String, SwiftReflectionTests.Image>")
        #expect(reflector.typeName(ofMetadata: boxMetadata) == "SwiftReflectionTests.Box<Swift.Int>")
        // The runtime stores every array of class instances as one of AnyObject: its elements say what it holds.
        #expect(reflector.typeName(ofMetadata: documentsMetadata) == "Swift._ContiguousArrayStorage<Swift.AnyObject>")
    }

    @Test func aClassHasItsFieldsWithTheirOffsetsAndOwnership() throws {
        let image = Image()
        let document = Document(image: image)
        let fields = try withExtendedLifetime((image, document)) {
            try reflector().fields(ofClassMetadata: try metadata(address(of: document)))
        }
        #expect(fields.map(\.name) == ["title", "parent", "image", "size"])
        #expect(fields.map(\.offset) == [16, 32, 40, 48])
        #expect(fields.map(\.ownership) == [.strong, .weak, .unmanaged, .strong])
        #expect(fields.first?.typeName == "Swift.String")
    }

    @Test func aClosureContextHasItsCapturesTypes() throws {
        let holder = Holder()
        let document = Document(image: Image())
        var count = Int.random(in: 0...9)
        let scale = Int.random(in: 1...9)
        holder.action = {
            count += scale
            return document.size * count
        }
        let captures = try withExtendedLifetime((holder, document)) {
            let context = try #require(memory.load(address(of: holder) + 24, as: UInt64.self))
            return try reflector().captures(ofContext: context)
        }
        let types = captures.compactMap(\.typeName)
        #expect(types.contains("SwiftReflectionTests.Document"), "\(captures)")
        #expect(types.contains("Swift.Int"), "\(captures)")
        #expect(captures.count == 3, "\(captures)")
    }
}
