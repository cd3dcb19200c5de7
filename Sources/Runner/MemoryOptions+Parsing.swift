import HarnessModel
import Measurement
import Scenarios

extension DeviceProfile {
    /// The built-in profiles' names, in order, for messages and help: `iphone-4s, ipad-mini, ...`.
    public static var names: String { builtIn.map(\.name).joined(separator: ", ") }
}

extension MemoryOptions {
    /// The options as the command line spells them (`--memory-limit`, `--memory-warning`, `--footprint`,
    /// `--device`); nil keeps the scenario files' value. Throws `RunError.options` naming the bad value and
    /// the valid ones.
    ///
    /// - `limit`: a size of at least 1 MiB (`300MiB`, `1.5GiB`), or `none`.
    /// - `warning`: a share of the limit (`80%`, 1%...100%), a size (`240MiB`), or `none`.
    /// - `device`: a built-in profile (`DeviceProfile.builtIn`), matched without regard to case.
    public init(
        limit: String?, warning: String?, footprint: FootprintMeasure = .allocated, device: String?
    ) throws(RunError) {
        self.init(footprint: footprint)
        if let limit {
            if limit == "none" {
                self.limit = .off
            } else if let bytes = Units.parseBytes(limit), bytes >= 1 << 20 {
                self.limit = .value(bytes)
            } else {
                throw .options([
                    "--memory-limit '\(limit)': expected a size of at least 1MiB, e.g. 300MiB, 1.5GiB, or none"
                ])
            }
        }
        if let warning {
            if warning == "none" {
                self.warning = .off
            } else if MemoryLevel.isBareNumber(warning) {
                throw .options(["--memory-warning \(MemoryLevelSyntax.bareNumberProblem(warning)), or none"])
            } else if let level = MemoryLevel.parse(warning) {
                self.warning = .value(level)
            } else {
                throw .options(["--memory-warning '\(warning)': expected \(MemoryLevelSyntax.accepted), or none"])
            }
        }
        if let device {
            guard let profile = DeviceProfile.named(device) else {
                throw .options([
                    "--device '\(device)': unknown device; expected one of: " + DeviceProfile.names
                        + suggestion(device, DeviceProfile.builtIn.map(\.name))
                ])
            }
            self.device = profile
        }
    }
}
