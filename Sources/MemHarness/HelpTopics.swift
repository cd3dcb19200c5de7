import ArgumentParser
import HarnessModel

/// `memharness help NAME...`: argument-parser shows the nearest command's help for a name it does not know,
/// with status 0, so a mistyped topic looks answered. Checked before parsing, the unknown name is refused.
enum HelpTopics {
    /// The problem with a `help` command line (`words` without the executable's name), naming the unknown
    /// subcommand and the valid ones; nil when it is not `help` or names only known subcommands.
    static func problem(_ words: [String], root: any ParsableCommand.Type = MemHarnessCommand.self) -> String? {
        guard words.first == "help" else { return nil }
        var command = root
        var path = root._commandName
        for name in words.dropFirst() where !name.hasPrefix("-") {
            let subcommands = command.configuration.subcommands
            guard let next = subcommands.first(where: { $0._commandName == name }) else {
                let valid = subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
                guard !valid.isEmpty else { return "help: '\(path)' has no subcommands; got '\(name)'" }
                return "help: unknown subcommand '\(name)' of '\(path)'; expected one of: "
                    + valid.joined(separator: ", ") + suggestion(name, valid)
            }
            command = next
            path += " " + name
        }
        return nil
    }
}
