import Foundation
import HarnessModel
import Symbols

/// Reads a run's provenance from git and from the CI environment; every field can be given instead.
public enum ProvenanceReader {
    /// What the caller gives: a field set here is taken as is.
    public struct Overrides: Sendable, Hashable {
        public var commit: String?
        public var branch: String?
        public var time: String?
        public var machine: String?
        public init(commit: String? = nil, branch: String? = nil, time: String? = nil, machine: String? = nil) {
            self.commit = commit
            self.branch = branch
            self.time = time
            self.machine = machine
        }
    }

    /// Commit variables of the CI systems, in the order they are read (GitHub Actions, GitLab, Buildkite, CircleCI,
    /// Jenkins, Travis).
    static let commitVariables = ["GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "CIRCLE_SHA1", "GIT_COMMIT"]
    /// Branch variables; GitHub's head ref first, as a pull request's ref name is `N/merge`.
    static let branchVariables = [
        "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH", "CIRCLE_BRANCH", "GIT_BRANCH",
    ]
    /// Machine variables: the runner's name.
    static let machineVariables = ["RUNNER_NAME", "CI_RUNNER_DESCRIPTION", "BUILDKITE_AGENT_NAME", "NODE_NAME"]

    /// The provenance of a run made in `directory` (git finds the repository that holds it, else the one of the
    /// working directory): each field from
    /// `overrides`, else git (the commit, the author time, the branch unless HEAD is detached), else the CI
    /// variables of `environment`; the time falls back to the run's own, the machine to the run's CPU.
    public static func read(
        directory: String, report: RunReport, overrides: Overrides, environment: [String: String]
    ) -> Provenance {
        func variable(_ names: [String]) -> String? {
            names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        }
        // One git call (two for a folder outside any repository): HEAD's commit, author time and branch.
        let asked = overrides.commit == nil || overrides.time == nil || overrides.branch == nil
        let head = asked ? [directory, "."].lazy.compactMap { Head(in: $0, environment: environment) }.first : nil
        let commit = overrides.commit ?? head?.commit ?? variable(commitVariables) ?? ""
        let authored =
            head?.commit == commit
            ? head?.time
            : head.flatMap { git(["log", "-1", "--format=%aI", commit], in: $0.repository, environment: environment) }
        let time = overrides.time ?? authored ?? report.generatedAt
        let gitBranch = head?.branch
        let branch = overrides.branch ?? variable(branchVariables) ?? gitBranch ?? ""
        let machine =
            overrides.machine ?? variable(machineVariables)
            ?? "\(report.environment.cpuModel) x\(report.environment.cpuCount)"
        return Provenance(commit: commit, branch: branch, time: utc(time) ?? time, machine: machine)
    }

    /// An ISO 8601 time in UTC (`2026-11-27T00:30:00Z`), so that times sort as text whatever zone they were
    /// written in; nil when `text` is not ISO 8601.
    public static func utc(_ text: String) -> String? {
        let parser = ISO8601DateFormatter()
        var date = parser.date(from: text)
        if date == nil {
            parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            date = parser.date(from: text)
        }
        guard let date else { return nil }
        let writer = ISO8601DateFormatter()
        writer.timeZone = TimeZone(identifier: "UTC")
        return writer.string(from: date)
    }

    /// HEAD of the repository that holds a folder: `git log -1 --format=%H%n%aI%n%D HEAD`.
    struct Head {
        var repository: String
        var commit: String
        var time: String
        /// The branch HEAD is on; nil when detached (`%D` is `HEAD -> main, origin/main` on a branch).
        var branch: String?

        init?(in directory: String, environment: [String: String]) {
            guard
                let lines = ProvenanceReader.gitLines(
                    ["log", "-1", "--format=%H%n%aI%n%D", "HEAD"], in: directory, environment: environment),
                lines.count >= 2
            else { return nil }
            repository = directory
            commit = lines[0]
            time = lines[1]
            let references = lines.count > 2 ? lines[2].components(separatedBy: ", ") : []
            branch = references.first { $0.hasPrefix("HEAD -> ") }.map { String($0.dropFirst("HEAD -> ".count)) }
        }
    }

    /// `git -C directory ARGUMENTS`'s first output line; nil when git is missing or fails (not a repository).
    static func git(_ arguments: [String], in directory: String, environment: [String: String]) -> String? {
        gitLines(arguments, in: directory, environment: environment)?.first
    }

    /// `git -C directory ARGUMENTS`'s output lines, trimmed; nil when git is missing, fails or prints nothing.
    static func gitLines(_ arguments: [String], in directory: String, environment: [String: String]) -> [String]? {
        guard let executable = ToolProcess.findInPath("git", environment: environment) else { return nil }
        let output = try? ToolProcess.run(
            executable: executable, arguments: ["-C", directory] + arguments, input: "", timeout: .seconds(30))
        let lines = output?.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        return lines.first?.isEmpty == false ? lines : nil
    }
}
