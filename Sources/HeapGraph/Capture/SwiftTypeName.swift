import Foundation
import HarnessModel

/// Type names as a report shows them, from the runtime's spelling of them: the standard library's module left out
/// (`Int`, not `Swift.Int`; other modules stay, `App.Screen`), arrays, dictionaries, sets and optionals in their
/// sugared spelling, and the storage classes behind collections named by the collection (`_ContiguousArrayStorage<
/// App.Document>` is the storage of a `[App.Document]`). Pure text: the names come from the runtime's demangler.
enum SwiftTypeName {
    /// The name to show for a heap object of the type the runtime names `name`, and what kind of block it is.
    static func object(_ name: String) -> (name: String, kind: HeapBlockKind) {
        let plain = withoutEmptyGenerics(sugared(withoutStandardModule(name)))
        if let inner = genericArguments(of: plain, named: "_ContiguousArrayStorage"), inner.count == 1 {
            return ("[\(inner[0])]", .arrayStorage)
        }
        if let inner = genericArguments(of: plain, named: "_DictionaryStorage"), inner.count == 2 {
            return ("[\(inner[0]) : \(inner[1])]", .dictionaryStorage)
        }
        if let inner = genericArguments(of: plain, named: "_SetStorage"), inner.count == 1 {
            return ("Set<\(inner[0])>", .setStorage)
        }
        if plain == "__StringStorage" || plain == "__SharedStringStorage" { return ("String", .stringStorage) }
        return (plain, .swiftObject)
    }

    /// The name to show for a type the runtime names `name` (a field's, a box's value's, a generic argument): a
    /// `var` box (`<> { var T } <>`, as SIL spells it) as `box of T`.
    static func display(_ name: String) -> String {
        let plain = sugared(withoutStandardModule(name))
        var box = Substring(plain)
        if box.hasPrefix("<> ") { box = box.dropFirst(3) }
        if box.hasSuffix(" <>") { box = box.dropLast(3) }
        for prefix in ["{ var ", "{ let "] where box.hasPrefix(prefix) && box.hasSuffix(" }") {
            return "box of " + withoutEmptyGenerics(String(box.dropFirst(prefix.count).dropLast(2)))
        }
        return withoutEmptyGenerics(plain)
    }

    /// `AsyncStream<Int>._Storage` for the runtime's `AsyncStream<Int>._Storage<>` (a nested type of a generic one), and
    /// `State` for a private type's `(State in $7f32f7fc0954)` or `(State in _7A1B…)` (the discriminator is no name).
    private static func withoutEmptyGenerics(_ name: String) -> String {
        var text = name.replacingOccurrences(of: "<>", with: "")
        var searchStart = text.startIndex
        while let marker = text.range(of: " in ", range: searchStart..<text.endIndex) {
            searchStart = marker.upperBound
            guard let open = text[..<marker.lowerBound].lastIndex(of: "("),
                let close = text[marker.upperBound...].firstIndex(of: ")"),
                text[marker.upperBound...].first.map({ $0 == "$" || $0 == "_" }) == true,
                !text[text.index(after: open)..<marker.lowerBound].contains(where: { "(), <>".contains($0) })
            else { continue }
            let inner = String(text[text.index(after: open)..<marker.lowerBound])
            text.replaceSubrange(open...close, with: inner)
            searchStart = text.index(open, offsetBy: inner.count)
        }
        return text
    }

    /// `name` without `Swift.` where it qualifies a name (at the start, or after `<`, `(`, `[`, `,`, `:`, space).
    static func withoutStandardModule(_ name: String) -> String {
        var result = ""
        var rest = Substring(name)
        while let range = rest.range(of: "Swift.") {
            result += rest[..<range.lowerBound]
            // `Swift.` that ends a longer name (`MySwift.`) is kept.
            if let previous = result.last, !"<([,: ".contains(previous) { result += "Swift." }
            rest = rest[range.upperBound...]
        }
        return result + rest
    }

    /// `Array<X>` as `[X]`, `Dictionary<K, V>` as `[K : V]`, `Optional<X>` as `X?`, wherever they appear.
    static func sugared(_ name: String) -> String {
        var text = name
        for (generic, arguments) in [("Array", 1), ("Dictionary", 2), ("Optional", 1)] {
            // Each pass rewrites the first occurrence; nested ones are rewritten by later passes.
            for _ in 0..<64 {
                guard let (range, inner) = firstGeneric(generic, in: text), inner.count == arguments else { break }
                let replacement: String
                switch generic {
                case "Array": replacement = "[\(inner[0])]"
                case "Dictionary": replacement = "[\(inner[0]) : \(inner[1])]"
                default:
                    let wrapped = inner[0]
                    replacement = wrapped.contains(" ") || wrapped.contains("->") ? "(\(wrapped))?" : "\(wrapped)?"
                }
                text.replaceSubrange(range, with: replacement)
            }
        }
        return text
    }

    /// The generic arguments of `name` when it is `base<…>` and nothing more.
    static func genericArguments(of name: String, named base: String) -> [String]? {
        guard let (range, inner) = firstGeneric(base, in: name), range == name.startIndex..<name.endIndex else {
            return nil
        }
        return inner
    }

    /// The first `base<…>` in `text` where `base` is a whole name (not the end of a longer one), and its arguments.
    private static func firstGeneric(_ base: String, in text: String) -> (Range<String.Index>, [String])? {
        var searchStart = text.startIndex
        while let found = text.range(of: base + "<", range: searchStart..<text.endIndex) {
            searchStart = found.upperBound
            if found.lowerBound > text.startIndex {
                let previous = text[text.index(before: found.lowerBound)]
                guard !(previous.isLetter || previous.isNumber || previous == "_" || previous == ".") else { continue }
            }
            guard let (arguments, end) = arguments(in: text, from: found.upperBound) else { return nil }
            return (found.lowerBound..<end, arguments)
        }
        return nil
    }

    /// The comma-separated arguments from `start` (just after a `<`) to its matching `>`, and the index after it.
    private static func arguments(in text: String, from start: String.Index) -> ([String], String.Index)? {
        var depth = 0
        var current = ""
        var arguments: [String] = []
        var index = start
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            switch character {
            case "<", "(", "[":
                depth += 1
            case ")", "]":
                depth -= 1
            case ">" where current.last == "-":
                break  // `->` of a function type is no closing bracket
            case ">" where depth == 0:
                return (arguments + [current.trimmingSpaces], index)
            case ">":
                depth -= 1
            case "," where depth == 0:
                arguments.append(current.trimmingSpaces)
                current = ""
                continue
            default:
                break
            }
            current.append(character)
        }
        return nil
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
