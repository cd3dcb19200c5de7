// libyaml, as vendored by Yams (the same copy Yams composes with). Yams gives no way to bound what it
// composes, so the event stream is read here first, with limits; see `YAMLPreflight`.
internal import CYaml
import HarnessModel

/// The limits a scenario file's YAML is held to before it is composed into a document.
///
/// Yams' `compose` shares an aliased node instead of copying it, but it hashes and compares every
/// mapping key in full to find duplicates, so an alias bomb (a few lines of `&a [*b, *b, ...]`
/// doubling at every level) used as a key takes exponential time, and any walk of such a tree
/// would too. libyaml stops at 1,000 levels of nesting; Yams composes recursively.
public enum YAMLLimits {
    /// Collections nested in one another; a scenario file needs about 6.
    public static let maximumDepth = 32
    /// Aliases (`*name`) in one file; a file sharing a block of parameters needs a handful.
    public static let maximumAliases = 100
    /// Nodes of the document with every alias expanded: what any walk of the document may visit.
    public static let maximumNodes = 100_000
}

/// Reads a scenario file's YAML event by event (linear time, constant stack) before it is composed:
/// syntax errors, a second document, an alias to an undefined anchor, too many aliases, an
/// expansion beyond `YAMLLimits.maximumNodes`, nesting beyond `YAMLLimits.maximumDepth` and
/// duplicate keys, each reported at the token that causes it (the duplicate, not the first key; the
/// alias, not the anchor).
enum YAMLPreflight {
    /// The problems of `text`, at most `limit`; empty when it can be composed safely.
    static func problems(in text: String, file: String, limit: Int = 10) -> [ScenarioDiagnostic] {
        var bytes = Array(text.utf8)
        // libyaml asserts a non-null input even when it is empty.
        if bytes.isEmpty { bytes = [0] }
        let count = text.utf8.count
        return bytes.withUnsafeBufferPointer { buffer in
            var scan = Scan(file: file, text: text, limit: limit)
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else {
                return [ScenarioDiagnostic(scan.place(line: 1, column: 1), "cannot read YAML: out of memory")]
            }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&parser, buffer.baseAddress, count)
            while !scan.finished {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    scan.syntaxError(parser)
                    break
                }
                scan.handle(event)
                yaml_event_delete(&event)
            }
            return scan.diagnostics
        }
    }

    /// A collection being read.
    private struct Frame {
        var isMapping: Bool
        var anchor: String?
        /// Nodes inside, aliases expanded (the collection itself not counted).
        var nodes = 0
        /// For a mapping: the next node is a key.
        var expectsKey = true
        /// For a mapping: scalar keys seen, with where.
        var keys: [String: (line: Int, column: Int)] = [:]
    }

    /// What an anchor stands for: its size with aliases expanded, and its text when it is a scalar.
    private struct Anchored {
        var nodes: Int
        var scalar: String?
    }

    private struct Scan {
        let file: String
        let text: String
        let limit: Int
        var diagnostics: [ScenarioDiagnostic] = []
        var finished = false
        var stack: [Frame] = []
        var anchors: [String: Anchored] = [:]
        var aliases = 0
        var nodes = 0
        var documents = 0

        init(file: String, text: String, limit: Int) {
            self.file = file
            self.text = text
            self.limit = limit
        }

        func place(line: Int, column: Int) -> SourceLocation {
            SourceLocation(file: file, line: line, column: column)
        }

        mutating func report(_ mark: yaml_mark_t, _ message: String, stop: Bool = false) {
            diagnostics.append(ScenarioDiagnostic(place(line: mark.line + 1, column: mark.column + 1), message))
            if stop || diagnostics.count >= limit { finished = true }
        }

        mutating func handle(_ event: yaml_event_t) {
            let mark = event.start_mark
            switch event.type {
            case YAML_STREAM_END_EVENT:
                finished = true
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                if documents > 1 {
                    report(mark, "a scenario file holds one YAML document; a second one starts here", stop: true)
                }
            case YAML_SCALAR_EVENT:
                guard checkTag(event.data.scalar.tag, at: mark) else { return }
                let anchor = string(event.data.scalar.anchor)
                let value = scalarText(event)
                if let anchor { anchors[anchor] = Anchored(nodes: 1, scalar: value) }
                add(nodes: 1, scalar: value, at: mark)
            case YAML_ALIAS_EVENT:
                handleAlias(event)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                handleCollectionStart(event)
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let frame = stack.popLast() else { return }
                let size = frame.nodes + 1
                if let anchor = frame.anchor { anchors[anchor] = Anchored(nodes: size, scalar: nil) }
                // The collection's own node was not counted when it started: count it now with its contents.
                nodes -= frame.nodes
                add(nodes: size, scalar: nil, at: mark)
            default:
                break
            }
        }

        /// `*name`: counts the anchored node again, refusing unknown anchors and alias bombs.
        private mutating func handleAlias(_ event: yaml_event_t) {
            let mark = event.start_mark
            let name = string(event.data.alias.anchor) ?? ""
            aliases += 1
            guard let anchored = anchors[name] else {
                let known = anchors.keys.sorted().map { "&\(Excerpt.of($0))" }
                report(
                    mark,
                    "alias '*\(Excerpt.of(name))' names no anchor defined before it"
                        + (known.isEmpty
                            ? "; define it first with '&\(Excerpt.of(name))'"
                            : "; anchors: \(known.prefix(10).joined(separator: ", "))"),
                    stop: true)
                return
            }
            guard aliases <= YAMLLimits.maximumAliases else {
                report(
                    mark,
                    "more than \(YAMLLimits.maximumAliases) aliases; a scenario file may use at most "
                        + "\(YAMLLimits.maximumAliases) (write the values out instead)", stop: true)
                return
            }
            if nodes + anchored.nodes > YAMLLimits.maximumNodes {
                report(
                    mark,
                    "alias '*\(Excerpt.of(name))' expands the document beyond \(YAMLLimits.maximumNodes) nodes "
                        + "(\(anchored.nodes) here); aliases of aliases multiply: refused as an alias bomb",
                    stop: true)
                return
            }
            add(nodes: anchored.nodes, scalar: anchored.scalar, at: mark)
        }

        /// The start of a list or mapping: checks its tag and the nesting depth.
        private mutating func handleCollectionStart(_ event: yaml_event_t) {
            let mark = event.start_mark
            let isMapping = event.type == YAML_MAPPING_START_EVENT
            guard checkTag(isMapping ? event.data.mapping_start.tag : event.data.sequence_start.tag, at: mark)
            else { return }
            guard stack.count < YAMLLimits.maximumDepth else {
                report(mark, Self.tooDeep, stop: true)
                return
            }
            let anchor = string(isMapping ? event.data.mapping_start.anchor : event.data.sequence_start.anchor)
            // A collection used as a key takes the key's turn; it cannot collide with a scalar key.
            stack.append(Frame(isMapping: isMapping, anchor: anchor))
        }

        /// The tags a scenario file may write: the core schema's. Others (`!!binary`, `!!set`, `!local`)
        /// would be read as plain text by the parser, not as what they announce.
        static let allowedTags = Set(
            ["str", "int", "float", "bool", "null", "seq", "map"].map { "tag:yaml.org,2002:\($0)" })

        mutating func checkTag(_ pointer: UnsafePointer<UInt8>?, at mark: yaml_mark_t) -> Bool {
            guard let tag = string(pointer), !Self.allowedTags.contains(tag) else { return true }
            let spelled = tag.hasPrefix("tag:yaml.org,2002:") ? "!!" + tag.dropFirst("tag:yaml.org,2002:".count) : tag
            report(
                mark,
                "unsupported tag '\(Excerpt.of(spelled))'; a scenario file's values are plain text (tags allowed: "
                    + "!!str, !!int, !!float, !!bool, !!null, !!seq, !!map)")
            return false
        }

        /// Counts a finished node of `nodes` nodes (aliases expanded) in its parent, and checks a key.
        mutating func add(nodes count: Int, scalar: String?, at mark: yaml_mark_t) {
            nodes += count
            if nodes > YAMLLimits.maximumNodes {
                report(
                    mark,
                    "the document has more than \(YAMLLimits.maximumNodes) nodes; a scenario file needs a few hundred",
                    stop: true)
                return
            }
            guard var parent = stack.popLast() else { return }
            parent.nodes += count
            if parent.isMapping {
                if parent.expectsKey, let key = scalar {
                    if let first = parent.keys[key] {
                        report(
                            mark,
                            "duplicate key '\(Excerpt.of(key))' (first at line \(first.line), column \(first.column)); "
                                + "a key may appear once in a mapping")
                    } else {
                        parent.keys[key] = (mark.line + 1, mark.column + 1)
                    }
                }
                parent.expectsKey.toggle()
            }
            stack.append(parent)
        }

        /// A libyaml error, at the place it found the problem.
        mutating func syntaxError(_ parser: yaml_parser_t) {
            let problem = string(parser.problem) ?? "malformed YAML"
            var context = string(parser.context) ?? ""
            let line: Int
            let column: Int
            if parser.error == YAML_READER_ERROR {
                // Reader errors carry a byte offset, not a mark.
                (line, column) = Self.lineAndColumn(ofByte: parser.problem_offset, in: text)
            } else {
                (line, column) = (parser.problem_mark.line + 1, parser.problem_mark.column + 1)
            }
            let contextMark = parser.context_mark
            if !context.isEmpty, contextMark.line + 1 != line || contextMark.column + 1 != column {
                context += " at \(contextMark.line + 1):\(contextMark.column + 1)"
            }
            var message = "invalid YAML: \(problem)" + (context.isEmpty ? "" : " (\(context))")
            if problem.hasPrefix("Maximum nesting level") {
                // libyaml's own limit (1,000 levels) is met while it reads ahead of the events.
                message = Self.tooDeep
            }
            if context.hasPrefix("while scanning a block scalar") {
                message += "; a value starting with '>' or '|' begins a block of text: quote it, e.g. '> 5MiB'"
            }
            if problem.hasPrefix("found character that cannot start any token"),
                Self.character(atLine: line, column: column, in: text) == "\t"
            {
                message += "; indent with spaces, not tabs"
            }
            diagnostics.append(ScenarioDiagnostic(place(line: line, column: column), message))
            finished = true
        }

        static let tooDeep =
            "nested deeper than \(YAMLLimits.maximumDepth) levels of lists and mappings; a scenario file needs "
            + "fewer than 10"

        /// Line and column (from 1, in characters) of the byte at `offset` of `text`.
        static func lineAndColumn(ofByte offset: Int, in text: String) -> (Int, Int) {
            var line = 1
            var column = 1
            var consumed = 0
            for scalar in text.unicodeScalars {
                if consumed >= offset { break }
                consumed += UTF8.width(scalar)
                if scalar == "\n" {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            }
            return (line, column)
        }

        static func character(atLine line: Int, column: Int, in text: String) -> Character? {
            guard line >= 1, column >= 1 else { return nil }
            let lines = text.split(separator: "\n", maxSplits: line, omittingEmptySubsequences: false)
            guard line <= lines.count else { return nil }
            return Array(lines[line - 1].unicodeScalars.prefix(column)).last.map(Character.init)
        }

        func scalarText(_ event: yaml_event_t) -> String {
            guard let value = event.data.scalar.value else { return "" }
            let buffer = UnsafeBufferPointer(start: value, count: event.data.scalar.length)
            return String(decoding: buffer, as: UTF8.self)
        }

        func string(_ pointer: UnsafePointer<UInt8>?) -> String? {
            pointer.map { String(cString: $0) }
        }

        func string(_ pointer: UnsafePointer<CChar>?) -> String? {
            pointer.map { String(cString: $0) }
        }
    }
}
