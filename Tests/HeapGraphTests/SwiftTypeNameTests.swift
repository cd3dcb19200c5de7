import HarnessModel
import Testing

@testable import HeapGraph

/// Type names as reports show them, from the runtime's spelling.
@Suite struct SwiftTypeNameTests {
    @Test(arguments: [
        ("Swift._ContiguousArrayStorage<App.Document>", "[App.Document]", HeapBlockKind.arrayStorage),
        ("Swift._DictionaryStorage<Swift.String, App.Image>", "[String : App.Image]", .dictionaryStorage),
        ("Swift._SetStorage<Swift.Int>", "Set<Int>", .setStorage),
        ("Swift.__StringStorage", "String", .stringStorage),
        ("Swift._ContiguousArrayStorage<Swift.Array<Swift.Optional<App.Page>>>", "[[App.Page?]]", .arrayStorage),
        (
            "App.Cache<Swift.Dictionary<Swift.String, Swift.Array<Swift.Int>>>", "App.Cache<[String : [Int]]>",
            .swiftObject
        ),
        ("Swift.AsyncStream<Swift.Int>._Storage<>", "AsyncStream<Int>._Storage", .swiftObject),
        ("MySwift.Thing", "MySwift.Thing", .swiftObject),
        (
            "FoundationEssentials.LockedState<FoundationEssentials.FileManager.(State in $7f32f7fc0954)>",
            "FoundationEssentials.LockedState<FoundationEssentials.FileManager.State>", .swiftObject
        ),
    ])
    func objectsAreNamedAsSwiftSpellsThem(runtime: String, shown: String, kind: HeapBlockKind) {
        let (name, found) = SwiftTypeName.object(runtime)
        #expect(name == shown)
        #expect(found == kind)
    }

    @Test func optionalFunctionsAreBracketedAndBoxesSaySo() {
        #expect(SwiftTypeName.display("Swift.Optional<() -> ()>") == "(() -> ())?")
        #expect(SwiftTypeName.display("<> { var Swift.Optional<App.Counter> } <>") == "box of App.Counter?")
        #expect(SwiftTypeName.display("weak Swift.Optional<App.Screen>") == "weak App.Screen?")
    }

    @Test func aCompilerMadeNameIsTheClosureOrFunctionItWasMadeFor() {
        #expect(
            CaptureNaming.functionName("partial apply for closure #1 in Screen.bind()") == "closure #1 in Screen.bind()"
        )
        #expect(
            CaptureNaming.functionName("(1) await resume partial function for closure #1 in Worker.start(on:)")
                == "closure #1 in Worker.start(on:)")
    }
}
