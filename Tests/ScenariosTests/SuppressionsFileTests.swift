import HarnessModel
import Scenarios
import Testing

@Suite struct SuppressionsFileTests {
    static func parse(_ text: String) -> Result<[LeakSuppression], ScenarioError> {
        Result { () throws(ScenarioError) in try SuppressionsFile.parse(text, file: "known-leaks.yaml") }
    }

    @Test func signaturesAndTypesWithTheirReasons() throws {
        let text = """
            suppressions:
              - signature: 3f9a0c12be47
                reason: OpenCombine's Assign keeps its object (upstream issue 250)
              - type: Foundation.Thread
                reason: the toolchain's Foundation keeps its main thread
            """
        let suppressions = try Self.parse(text).get()
        #expect(
            suppressions == [
                LeakSuppression(
                    .signature("3f9a0c12be47"), reason: "OpenCombine's Assign keeps its object (upstream issue 250)"),
                LeakSuppression(.type("Foundation.Thread"), reason: "the toolchain's Foundation keeps its main thread"),
            ])
    }

    @Test(arguments: [
        (
            "suppressions:\n  - signature: 3F9A-0c12\n    reason: x\n",
            "known-leaks.yaml:2:16: signature '3F9A-0c12' is not a leak signature; expected 12 lowercase hexadecimal digits"
        ),
        ("suppressions:\n  - type: App.Cache\n", "known-leaks.yaml:2:5: missing required key 'reason'"),
        (
            "suppressions:\n  - type: App.Cache\n    reson: x\n",
            "known-leaks.yaml:3:5: unknown key 'reson'; expected one of: signature, type, reason"
        ),
        (
            "suppressions:\n  - type: App.Cache\n    signature: 3f9a0c12be47\n    reason: x\n",
            "known-leaks.yaml:2:11: a suppression has one of signature and type, not both"
        ),
        ("suppressions:\n  - reason: x\n", "known-leaks.yaml:2:5: a suppression needs signature or type"),
        ("suppresions: []\n", "known-leaks.yaml:1:1: a suppressions file is a mapping with one key, suppressions"),
        ("suppressions: App.Cache\n", "known-leaks.yaml:1:15: 'suppressions' is a list of entries with keys"),
        ("", "known-leaks.yaml:1:1: a suppressions file is a mapping with one key"),
    ])
    func aBadFileSaysWhereWhatAndTheChoices(text: String, message: String) {
        guard case .failure(.invalid(let found)) = Self.parse(text) else {
            Issue.record("\(text) parsed")
            return
        }
        #expect(found.contains { $0.description.hasPrefix(message) }, "\(found)")
    }
}
