import Foundation
import Testing

@testable import Symbols

/// A tool that answers every address with the names it was given, as llvm-symbolizer would (Swift left mangled).
struct ScriptedTool: SymbolizerTool {
    var answers: [UInt64: [ToolLocation]]
    var name: String { "scripted" }

    func symbolize(modulePath: String, addresses: [UInt64]) throws(SymbolsError) -> [[ToolLocation]] {
        addresses.map { answers[$0] ?? [] }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct DemanglerTests {
    static let deliver = "$s1a12LiveQueryAppC7deliveryySaySiGF"
    static let specialized = "$s1a7genericySayxGxSjRzlFSd_Tg5"
    static let partialApply = "$s4main3FooC3baryyFyyXEfU_TA"
    static let cxx = "_ZN5swift20swift_slowAllocTypedEmmy"

    var swiftDemangleTool: String? {
        let environment = ProcessInfo.processInfo.environment
        for directory in (environment["PATH"] ?? "").split(separator: ":") + ["/opt/swift/usr/bin"] {
            let path = "\(directory)/swift-demangle"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    @Test func theRuntimeDemanglerGivesSimplifiedNames() throws {
        #expect(SwiftDemangler.hasSimplifiedRuntimeDemangler, "the Swift runtime exports _swift_backtrace_demangle")
        let (names, diagnostics) = SwiftDemangler(methods: [.runtimeSimplified]).demangle(
            [Self.deliver, Self.specialized, Self.partialApply, Self.cxx, "main"])
        #expect(diagnostics.isEmpty)
        #expect(
            names == [
                Self.deliver: "LiveQueryApp.deliver(_:)",
                Self.specialized: "specialized generic<A>(_:)",
                Self.partialApply: "partial apply for closure #1 in Foo.bar()",
                Self.cxx: "swift::swift_slowAllocTyped(unsigned long, unsigned long, unsigned long long)",
            ])
    }

    @Test func swiftDemangleInOneBatchGivesTheSameNames() throws {
        let tool = try #require(swiftDemangleTool, "swift-demangle is beside swift in the toolchain")
        let (names, diagnostics) = SwiftDemangler(methods: [.tool(path: tool)]).demangle([
            Self.deliver, Self.specialized,
        ])
        #expect(diagnostics.isEmpty)
        #expect(names == [Self.deliver: "LiveQueryApp.deliver(_:)", Self.specialized: "specialized generic<A>(_:)"])
    }

    @Test func theFullDemanglerIsReadableButNoisy() {
        let (names, _) = SwiftDemangler(methods: [.runtimeFull]).demangle([Self.specialized])
        #expect(
            names[Self.specialized]
                == "generic specialization <Swift.Double> of a.generic<A where A: Swift.Numeric>(A) -> Swift.Array<A>")
    }

    @Test func aMissingToolFallsThroughToTheRuntime() {
        let demangler = SwiftDemangler(methods: [.tool(path: "/nonexistent/swift-demangle"), .runtimeFull])
        let (names, diagnostics) = demangler.demangle([Self.deliver])
        #expect(names[Self.deliver] == "a.LiveQueryApp.deliver(Swift.Array<Swift.Int>) -> ()")
        #expect(diagnostics.count == 1)
    }

    @Test func aNameNoDemanglerUnderstandsNeverReachesTheProfile() throws {
        let module = LoadedModule(loadBias: 0x1000, start: 0x2000, end: 0x9000, path: "/app/bin/app")
        let tool = ScriptedTool(answers: [
            0x1fff: [ToolLocation(function: "$sThisIsNotAValidMangling!", file: "/app/a.swift", line: 3)],
            0x2fff: [
                ToolLocation(function: Self.specialized, file: "/app/b.swift", line: 9),
                ToolLocation(function: Self.deliver, file: "/app/c.swift", line: 12),
            ],
            0x3fff: [ToolLocation(function: "??", file: "??", line: 0)],
        ])
        let (frames, diagnostics) = Symbolizer(tools: [tool]).symbolize(
            returnAddresses: [0x3000, 0x4000, 0x5000], modules: ModuleMap([module]))
        #expect(
            diagnostics.map(\.description) == [
                "/app/bin/app: 1 of 3 addresses have no symbol and are named module+0xoffset: "
                    + "the binary is stripped or was replaced after the run; keep its symbol table, or build it with -g"
            ])
        // The tool sees return address - 1 - load bias: 0x3000 -> 0x1fff.
        #expect(frames[0x3000]?.map(\.function) == ["app+0x1fff"])
        #expect(frames[0x3000]?.first?.file == "/app/a.swift")
        #expect(frames[0x4000]?.map(\.function) == ["specialized generic<A>(_:)", "LiveQueryApp.deliver(_:)"])
        #expect(frames[0x5000]?.map(\.function) == ["app+0x3fff"])
        #expect(frames[0x5000]?.first?.file == nil)
        for list in frames.values {
            #expect(!list.contains { SwiftDemangler.isSwiftMangled($0.function) })
        }
    }
}

extension DemanglerTests {
    /// A closure inside `@Test func aRealRecordBecomesAProfileEndingInTheRealSite()`: the macro's unique
    /// names are printed raw by every demangler.
    static let macroExpanded =
        "$s16AttributionTests013SymbolizationB0V04$s16a8Tests013C81B0V037aRealRecordBecomesAProfileEndingInTheD4Site4TestfMp_17Z619774250a3a234cfMu_33_C5AFF63F9F168EF0CF67042F58C935CBLLyyYaYbKFZ0daecfghijklmnopqR14_7__localfMu0_L_yyScA_pSgYiYaYbKF"

    @Test(arguments: [[SwiftDemangler.Method.runtimeSimplified], [.runtimeFull]])
    func namesMadeByMacrosAreDemangledInsideTheName(methods: [SwiftDemangler.Method]) throws {
        let (names, _) = SwiftDemangler(methods: methods).demangle([Self.macroExpanded])
        let readable = try #require(names[Self.macroExpanded])
        #expect(!SwiftDemangler.containsSwiftMangling(readable), "\(readable)")
        #expect(
            readable.contains("peer macro @Test expansion #1 of aRealRecordBecomesAProfileEndingInTheRealSite"),
            "\(readable)")
    }

    @Test func embeddedManglingsAreFound() {
        #expect(SwiftDemangler.containsSwiftMangling("closure in $s4main3fooyyF"))
        #expect(!SwiftDemangler.containsSwiftMangling("price in $ and $ 5"))
        #expect(!SwiftDemangler.containsSwiftMangling("LiveQueryApp.deliver(_:)"))
        #expect(SwiftDemangler.expandEmbeddedNames("x $sNotReallyMangled y") == "x (macro-generated name) y")
    }
}
