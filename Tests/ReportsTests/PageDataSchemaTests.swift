import FileIO
import Foundation
import HarnessModel
import Testing

@testable import Reports

/// The contract between Swift and report.js: the page's data has one schema (`Html/assets/page-data.schema.json`,
/// versioned), the data Swift emits follows it to the letter (no field missing, none unknown, each of its type), and
/// report.js reads no field the schema does not have. A field renamed on one side fails here, not only in Chromium.
struct PageDataSchemaTests {
    static let assets = SampleReportTests.repository.appendingPathComponent("Sources/Reports/Html/assets")

    static func schema() throws -> JSONValue {
        try JSONDecoder().decode(
            JSONValue.self, from: Data(contentsOf: assets.appendingPathComponent("page-data.schema.json")))
    }

    /// The data of the sample run (timelines with kills, stacks, heap graphs with cycles and paths), of the fixture
    /// run and of a comparison page (the earlier run's profiles), as JSON values.
    static func emitted() throws -> [JSONValue] {
        let sample = try ReportFolder.read(SampleReportTests.sample).report
        var earlier = HtmlReportTests.record.report
        earlier.generatedAt = "2026-01-02T03:04:05Z"
        let pages = [
            HtmlPageData(sample), HtmlPageData(HtmlReportTests.record.report),
            HtmlPageData(HtmlReportTests.record.report, earlier: .init(report: earlier, folder: "Reports/main")),
        ]
        return try pages.map { page in
            let text = page.scriptText().replacingOccurrences(of: "\\u003c", with: "<")
            return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        }
    }

    @Test func theEmittedDataFollowsTheSchema() throws {
        let check = SchemaCheck(schema: try Self.schema())
        let pages = try Self.emitted()
        for page in pages {
            let problems = check.problems(page)
            #expect(problems.isEmpty, "\(problems.prefix(10))")
        }
        // The probe sees a broken field: a renamed one, and one of the wrong type.
        guard case .object(var renamed) = pages[0] else {
            Issue.record("the data is no object")
            return
        }
        renamed["scenario"] = renamed.removeValue(forKey: "scenarios")
        let broken = check.problems(.object(renamed))
        #expect(broken.contains("$: no field scenarios") && broken.contains("$: unknown field scenario"))
        #expect(
            check.problems(.object(["schemaVersion": .number(2), "scenarios": .string("none")]))
                == ["$.scenarios: not an array"])
        #expect(
            check.problems(.object(["schemaVersion": .number(1), "scenarios": .array([])])) == [
                "$.schemaVersion: not 2"
            ])
    }

    @Test func theSchemaVersionIsTheDatas() throws {
        let schema = try Self.schema()
        #expect(schema["properties"]?["schemaVersion"]?["const"] == .number(Double(HtmlPageData.schemaVersion)))
        #expect(schema["$id"] == .string("memharness/page-data/\(HtmlPageData.schemaVersion)"))
    }

    /// Every name report.js reads after a dot is a field of the schema, or one of the browser's or the script's own
    /// (listed here): a field Swift renamed, still read by the script, is neither.
    @Test func reportJSReadsOnlyFieldsTheSchemaHas() throws {
        let script = try String(contentsOf: Self.assets.appendingPathComponent("report.js"), encoding: .utf8)
        let fields = Self.fieldNames(try Self.schema())
        let read = ScriptNames.memberNames(script)
        // The probe sees the data's reads: the timeline's peak marker and a heap graph's captures.
        #expect(read.isSuperset(of: ["peak", "sampleIndex", "captures", "flame", "weights", "earlierRun"]))
        let unknown = read.subtracting(fields).subtracting(ScriptNames.ownNames)
        #expect(unknown.isEmpty, "report.js reads fields the page data's schema does not have: \(unknown.sorted())")
        let listed = ScriptNames.ownNames.intersection(fields)
        #expect(listed.isEmpty, "names listed as the script's own are fields of the data: \(listed.sorted())")
    }

    /// Every property name of the schema.
    static func fieldNames(_ schema: JSONValue) -> Set<String> {
        switch schema {
        case .object(let object):
            var names = Set<String>()
            if case .object(let properties)? = object["properties"] { names.formUnion(properties.keys) }
            for value in object.values { names.formUnion(fieldNames(value)) }
            return names
        case .array(let array): return array.reduce(into: Set<String>()) { $0.formUnion(fieldNames($1)) }
        default: return []
        }
    }
}

/// A JSON value as JSONDecoder reads it: a boolean is never taken for a number, nor a number for a boolean.
enum JSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }
}

/// The part of JSON Schema the page data's schema uses: `type` (string, integer, boolean, array, object), `const`,
/// `properties`, `required`, `additionalProperties: false`, `items` and `$ref` to `#/$defs/NAME`.
struct SchemaCheck {
    var schema: JSONValue

    /// What in `value` the schema does not allow, each with where it is (`$.scenarios[0].timeline`).
    func problems(_ value: JSONValue) -> [String] {
        var problems: [String] = []
        check(value, against: schema, at: "$", problems: &problems)
        return problems
    }

    func check(_ value: JSONValue, against node: JSONValue, at path: String, problems: inout [String]) {
        if case .string(let reference)? = node["$ref"] {
            guard let target = schema["$defs"]?[String(reference.dropFirst("#/$defs/".count))] else {
                return problems.append("\(path): no definition \(reference)")
            }
            return check(value, against: target, at: path, problems: &problems)
        }
        if let constant = node["const"], value != constant {
            let expected = if case .number(let number) = constant { String(Int(number)) } else { "\(constant)" }
            problems.append("\(path): not \(expected)")
        }
        switch (node["type"], value) {
        case (.string("string")?, .string), (.string("boolean")?, .bool): break
        case (.string("integer")?, .number(let number)) where number == number.rounded(): break
        case (.string("array")?, .array(let array)):
            guard let items = node["items"] else { break }
            for (index, item) in array.enumerated() {
                check(item, against: items, at: "\(path)[\(index)]", problems: &problems)
            }
        case (.string("object")?, .object(let object)):
            checkObject(object, against: node, at: path, problems: &problems)
        case (.string(let type)?, _):
            problems.append("\(path): not \(["integer", "array", "object"].contains(type) ? "an" : "a") \(type)")
        default: break
        }
    }

    func checkObject(
        _ object: [String: JSONValue], against node: JSONValue, at path: String, problems: inout [String]
    ) {
        if case .array(let required)? = node["required"] {
            for case .string(let name) in required where object[name] == nil {
                problems.append("\(path): no field \(name)")
            }
        }
        for (name, value) in object.sorted(by: { $0.key < $1.key }) {
            guard let property = node["properties"]?[name] else {
                if node["additionalProperties"] == .bool(false) { problems.append("\(path): unknown field \(name)") }
                continue
            }
            check(value, against: property, at: "\(path).\(name)", problems: &problems)
        }
    }
}

/// The names report.js reads after a dot, and those that are not the data's.
enum ScriptNames {
    /// `a.b` → `b`, for every member read or call in `script`, its comments and string literals left out.
    static func memberNames(_ script: String) -> Set<String> {
        let characters = Array(script)
        var code: [Character] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : " "
            if character == "/" && next == "/" {
                while index < characters.count && characters[index] != "\n" { index += 1 }
            } else if character == "/" && next == "*" {
                index += 2
                while index + 1 < characters.count && !(characters[index] == "*" && characters[index + 1] == "/") {
                    index += 1
                }
                index += 2
            } else if character == "'" || character == "\"" || character == "`" {
                index += 1
                while index < characters.count && characters[index] != character {
                    index += characters[index] == "\\" ? 2 : 1
                }
                index += 1
                code.append(contentsOf: "\"\"")
            } else {
                code.append(character)
                index += 1
            }
        }
        var names = Set<String>()
        var position = 0
        while position < code.count {
            defer { position += 1 }
            guard code[position] == ".", position + 1 < code.count, code[position + 1].isLetter else { continue }
            var end = position + 1
            while end < code.count && (code[end].isLetter || code[end].isNumber || code[end] == "_") { end += 1 }
            names.insert(String(code[(position + 1)..<end]))
        }
        return names
    }

    /// The browser's names (DOM, canvas, JavaScript) and those of the script's own objects (its trees, views and
    /// scales), none of them a field of the data.
    static let ownNames: Set<String> = [
        // JavaScript and the DOM
        "PI", "abs", "add", "addEventListener", "appendChild", "arc", "beginPath", "button", "ceil", "charCodeAt",
        "checked", "classList", "clear", "clearRect", "clientWidth", "clientX", "clientY", "clip", "closePath",
        "closest", "concat", "cos", "createElement", "createElementNS", "dataset", "delete", "devicePixelRatio",
        "documentElement", "fill", "fillRect", "fillStyle", "fillText", "filter", "find", "findIndex", "floor", "font",
        "forEach", "get", "getAttribute", "getBoundingClientRect", "getContext", "getElementById", "getPropertyValue",
        "has", "height", "hidden", "hypot", "includes", "innerHeight", "innerWidth", "isIntersecting", "join", "key",
        "keys", "lastChild", "left", "length", "lineTo", "lineWidth", "log10", "map", "matchMedia", "max",
        "measureText", "min", "moveTo", "observe", "parse", "pow", "preventDefault", "push", "querySelectorAll",
        "reduce", "remove", "replace", "restore", "round", "save", "scrollWidth", "set", "setAttribute", "setLineDash",
        "setTransform", "sin",
        "slice", "some", "sort", "startsWith", "stroke", "strokeRect", "strokeStyle", "style", "target", "textAlign",
        "textContent", "toFixed", "toLowerCase", "top", "trim", "trunc", "unobserve", "unshift", "value", "values",
        "width",
        // The script's own objects: flame trees and their nodes, views, zoom and hover state, diagram boxes
        "b", "base", "before", "bytes", "caption", "column", "compared", "count", "drawn", "frames", "full", "hh", "hw",
        "kids", "l", "location", "marks", "matchedShare", "measure", "r", "ready", "rect", "scenario",
        "selected", "show", "steps", "t", "t0", "t1", "tip", "x", "x0", "x1", "y", "zoom",
    ]
}
