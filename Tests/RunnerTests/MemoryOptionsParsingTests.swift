import HarnessModel
import Runner
import Testing

/// `MemoryOptions` from the command line's spelling: sizes, shares, `none` and device names.
struct MemoryOptionsParsingTests {
    @Test func nothingGivenKeepsTheScenarioFilesLevels() throws {
        let options = try MemoryOptions(limit: nil, warning: nil, device: nil)
        #expect(options == MemoryOptions())
        #expect(options.limit == .fromScenario && options.warning == .fromScenario && options.device == nil)
    }

    @Test func readsSizesSharesAndNone() throws {
        let options = try MemoryOptions(limit: "300MiB", warning: "80%", footprint: .resident, device: nil)
        #expect(options.limit == .value(300 << 20))
        #expect(options.warning == .value(.fractionOfLimit(0.8)))
        #expect(options.footprint == .resident)
        #expect(try MemoryOptions(limit: "1.5GiB", warning: "240MiB", device: nil).warning == .value(.bytes(240 << 20)))
        let off = try MemoryOptions(limit: "none", warning: "none", device: nil)
        #expect(off.limit == .off && off.warning == .off)
        #expect(try MemoryOptions(limit: "1MiB", warning: nil, device: nil).limit == .value(1 << 20))
    }

    @Test func readsADeviceByNameInAnyCase() throws {
        let options = try MemoryOptions(limit: nil, warning: nil, device: "IPhone-6")
        #expect(options.device == DeviceProfile.named("iphone-6"))
        #expect(options.device != nil)
    }

    @Test(
        arguments: [
            (
                "300XB", nil, nil,
                "--memory-limit '300XB': expected a size of at least 1MiB, e.g. 300MiB, 1.5GiB, or none"
            ),
            ("512KiB", nil, nil, "--memory-limit '512KiB': expected a size of at least 1MiB"),
            (
                nil, "180%", nil,
                "--memory-warning '180%': expected a share of the limit (1%...100%, e.g. 80%) or a size with its unit"
            ),
            (nil, "soon", nil, "--memory-warning 'soon'"),
            (
                nil, "0.8", nil,
                "--memory-warning '0.8' has no unit, so it could be a share of the limit or a number of bytes; "
                    + "write a percentage such as 80% (1%...100%) or a size such as 200MiB"
            ),
            (nil, nil, "iphone-6s", "--device 'iphone-6s': unknown device; expected one of: iphone-4s, ipad-mini,"),
            (nil, nil, "iphon-7", "(did you mean 'iphone-7'?)"),
        ] as [(String?, String?, String?, String)])
    func aBadValueIsRefusedNamingItAndTheValidOnes(limit: String?, warning: String?, device: String?, message: String) {
        #expect {
            try MemoryOptions(limit: limit, warning: warning, device: device)
        } throws: { error in
            guard let error = error as? RunError, case .options(let problems) = error else { return false }
            return problems.count == 1 && error.description.contains(message) && error.isUsageError
        }
    }
}
