import Foundation
import PackagePlugin

/// `swift package memharness [run] [ARGS]`: builds the package's harness executable and the agent,
/// then runs the harness with the package's `Scenarios/` and a report folder under the package.
///
/// The harness executable is the package's executable product that depends on `MemHarness` (its
/// `main.swift` calls `MemHarness.main(workloads:)`), or the one named with `--product`. Any other
/// subcommand (`list`, `report`, `compare`, `baseline`, `merge`, `--help`) is passed through as is.
@main
struct MemHarnessPlugin: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let invocation: PluginInvocation
        let harness: String
        do throws(PluginUsageError) {
            invocation = try PluginInvocation(parsing: arguments)
            harness = try HarnessProducts(of: context.package).select(invocation.product)
        } catch {
            // Nothing was built or run: the harness's own code for a usage error.
            Diagnostics.error(error.description)
            exit(PluginExit.usage)
        }
        if invocation.wantsHelp { print(PluginInvocation.usage) }

        let parameters = PackageManager.BuildParameters(configuration: invocation.configuration, logging: .concise)
        let executable = try build(harness, kind: .executable, parameters: parameters)
        let agent = try build(PluginInvocation.agentProduct, kind: .dynamicLibrary, parameters: parameters)

        let process = Process()
        process.executableURL = executable
        process.arguments = invocation.harnessArguments(packageDirectory: context.package.directoryURL)
        var environment = ProcessInfo.processInfo.environment
        // The runner looks for the agent beside the executable; name it in case the build put it elsewhere.
        if environment["MEMHARNESS_AGENT_LIBRARY"] == nil { environment["MEMHARNESS_AGENT_LIBRARY"] = agent.path }
        process.environment = environment
        try process.run()
        process.waitUntilExit()
        switch process.terminationReason {
        case .exit where process.terminationStatus == 0: return
        // SwiftPM shows "Plugin ended with exit code N" and itself exits with 1 (Swift 6.3.1: a plugin cannot
        // pass its status through), so say where the status itself is to be had.
        case .exit:
            Diagnostics.warning(
                "\(harness) exited with status \(process.terminationStatus); swift package ends every failed plugin "
                    + "with 1: to gate on the status itself (2 a finding, 64 a usage error), run \(executable.path)")
            exit(process.terminationStatus)
        case .uncaughtSignal: exit(128 + process.terminationStatus)
        @unknown default: exit(1)
        }
    }

    /// Builds `product` in the requested configuration and returns its artifact of `kind`.
    private func build(
        _ product: String, kind: PackageManager.BuildResult.BuiltArtifact.Kind,
        parameters: PackageManager.BuildParameters
    ) throws -> URL {
        let configuration = parameters.configuration == .release ? "release" : "debug"
        // On stderr as "[MemHarnessPlugin] building ...": a first release build takes minutes and prints nothing else.
        Diagnostics.progress("building \(product) (\(configuration))")
        let result = try packageManager.build(.product(product), parameters: parameters)
        guard result.succeeded else {
            print(result.logText)
            Diagnostics.error("could not build \(product) (\(configuration)); the build log is above")
            exit(PluginExit.harnessFailure)
        }
        guard let artifact = result.builtArtifacts.first(where: { $0.kind == kind }) else {
            Diagnostics.error("building \(product) produced no \(kind) artifact")
            exit(PluginExit.harnessFailure)
        }
        return artifact.url
    }
}

/// The plugin's exit codes, the harness's own (see the README's exit codes).
enum PluginExit {
    /// The harness could not be built.
    static let harnessFailure: Int32 = 1
    /// Bad plugin arguments or no harness executable: nothing was built or run.
    static let usage: Int32 = 64
}
