import FileIO
import HarnessModel

/// Renders checks (thresholds, baseline comparisons, leak expectations) for people and for CI.
public enum CheckOutputs {
    /// The checks for the terminal: the document's checks section (`section`) as `TerminalRenderer` lays it out,
    /// at most `width` columns wide, long cells wrapped within their column; then each failure with its full
    /// message, wrapped. A nil `width` (stdout is a file or a pipe, which has no width) keeps the table to
    /// `pipeWidth` columns and each failure message whole on one line, for a log that is read with grep.
    public static func terminalTable(_ checks: [CheckResult], width: Int? = 100) -> String {
        guard let section = section(checks, title: CheckWords.title) else { return CheckWords.noChecks + "\n" }
        return TerminalRenderer.render([.section(section)], width: width ?? pipeWidth, wrapsText: width != nil)
    }

    /// The check table's width in a log (stdout is no terminal): what a terminal of 120 columns shows whole.
    static let pipeWidth = 120

    /// JUnit XML: one test suite per scenario, one test case per check; failures carry the message.
    public static func junit(_ checks: [CheckResult]) -> String {
        var out = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>"]
        let failures = checks.filter { !$0.passed }.count
        out.append("<testsuites name=\"memharness\" tests=\"\(checks.count)\" failures=\"\(failures)\">")
        for scenario in checks.map(\.scenario).uniqued() {
            let group = checks.filter { $0.scenario == scenario }
            out.append(
                "  <testsuite name=\"\(xml(scenario))\" tests=\"\(group.count)\" "
                    + "failures=\"\(group.filter { !$0.passed }.count)\">"
            )
            for check in group {
                let name =
                    "<testcase classname=\"memharness.\(xml(scenario))\" name=\"\(xml(check.name))\""
                    + (check.file.map { " file=\"\(xml($0))\"" } ?? "") + (check.line.map { " line=\"\($0)\"" } ?? "")
                if check.passed {
                    out.append("    \(name)/>")
                } else {
                    out.append("    \(name)>")
                    out.append(
                        "      <failure message=\"\(xml(check.message))\" type=\"\(check.kind.rawValue)\">"
                            + xml("actual \(check.actual), limit \(check.limit), margin \(check.margin)") + "</failure>"
                    )
                    out.append("    </testcase>")
                }
            }
            out.append("  </testsuite>")
        }
        out.append("</testsuites>")
        return out.joined(separator: "\n") + "\n"
    }

    /// GitHub Actions workflow commands: an `::error` per failed check, pointing at its scenario file line.
    public static func githubAnnotations(_ checks: [CheckResult]) -> String {
        checks.filter { !$0.passed }.map { check in
            var properties: [String] = []
            if let file = check.file { properties.append("file=\(escapeProperty(file))") }
            if let line = check.line { properties.append("line=\(line)") }
            if let column = check.column { properties.append("col=\(column)") }
            properties.append("title=\(escapeProperty("memharness: \(check.scenario) / \(check.strategy)"))")
            return "::error \(properties.joined(separator: ","))::\(escapeData(check.message))\n"
        }.joined()
    }

    /// The Markdown summary for `GITHUB_STEP_SUMMARY` (and the report's Checks section).
    public static func markdown(_ checks: [CheckResult], title: String = "memharness checks") -> String {
        guard let section = section(checks, title: Phrase(stringLiteral: title)) else { return "" }
        return MarkdownRenderer.render([.section(section)])
    }

    /// The checks as a section of the document: how many passed, a row per check, then each failure's message;
    /// nil without checks.
    static func section(_ checks: [CheckResult], title: Phrase) -> Section? {
        guard !checks.isEmpty else { return nil }
        let failed = checks.filter { !$0.passed }
        var table = Table(columns: [
            .init("", identifiesRow: true), .init("Scenario"), .init("Check", identifiesRow: true),
            .init("Actual", .number), .init("Limit"),
            .init("Margin", .number), .init("Spread", .number),
        ])
        for check in checks {
            table.rows.append([
                CheckWords.status(passed: check.passed), Phrase(stringLiteral: check.scenario),
                Phrase(stringLiteral: check.name), Phrase(stringLiteral: check.actual),
                Phrase(stringLiteral: check.limit), Phrase(stringLiteral: check.margin),
                check.spreadPercent.map { .value(.plusMinusPercent($0 / 2, decimals: 1)) } ?? "–",
            ])
        }
        var blocks: [Block] = [.paragraph(CheckWords.counts(passed: checks.count - failed.count, failed: failed.count))]
        blocks.append(.table(table))
        if !failed.isEmpty { blocks.append(.list(failed.map { ListItem(CheckWords.failure($0.message)) })) }
        return Section(level: 2, heading: title, blocks: blocks)
    }

    /// github-action-benchmark's `customSmallerIsBetter` input: one entry per strategy's median peak allocated
    /// (and residue), so memory can be charted over commits.
    public static func benchmarkJSON(_ report: RunReport) -> String {
        var entries: [String] = []
        for run in report.scenarios {
            let summary = ScenarioSummary(run)
            for strategy in summary.ranked {
                let range = "\(Int(strategy.minPeakAllocatedNetBytes))..\(Int(strategy.maxPeakAllocatedNetBytes))"
                entries.append(
                    "  {\"name\": \(JSONText.quoted("\(run.name)/\(strategy.strategy) peak allocated")), "
                        + "\"unit\": \"bytes\", \"value\": \(Int(strategy.medianPeakAllocatedNetBytes)), "
                        + "\"range\": \"\(range)\", "
                        + "\"extra\": \(JSONText.quoted("median of \(strategy.okCount) repetitions"))}")
                entries.append(
                    "  {\"name\": \(JSONText.quoted("\(run.name)/\(strategy.strategy) residue")), \"unit\": \"bytes\", "
                        + "\"value\": \(Int(strategy.medianResidueBytes))}")
            }
        }
        return "[\n" + entries.joined(separator: ",\n") + "\n]\n"
    }

    /// XML text and attribute escaping (line breaks kept as character references).
    static func xml(_ text: String) -> String {
        SVGDocument.escape(text).replacingAll("\n", with: "&#10;")
    }

    /// Escapes a workflow command's message (GitHub's rules: %, CR, LF).
    static func escapeData(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "%": result += "%25"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.append(character)
            }
        }
        return result
    }

    /// Escapes a workflow command's property (also `:` and `,`).
    static func escapeProperty(_ text: String) -> String {
        var result = ""
        for character in escapeData(text) {
            switch character {
            case ":": result += "%3A"
            case ",": result += "%2C"
            default: result.append(character)
            }
        }
        return result
    }
}
