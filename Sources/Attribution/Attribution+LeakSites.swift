import HarnessModel
import Symbols

extension Attribution {
    /// The places surviving tracked objects were tracked from: each group's stack symbolized with the
    /// record's modules and folded like allocation stacks (the tracking machinery removed from the leaf end).
    public static func leakSites(
        _ survivors: [SurvivorStack], modules: [LoadedModule], symbolizer: Symbolizer,
        folder: StackFolder = StackFolder()
    ) -> (sites: [LeakSite], diagnostics: [SymbolDiagnostic]) {
        guard !survivors.isEmpty else { return ([], []) }
        let (frames, diagnostics) = symbolizer.symbolize(
            returnAddresses: survivors.flatMap(\.returnAddresses), modules: ModuleMap(modules))
        let sites = survivors.map { survivor in
            let innermostFirst = survivor.returnAddresses.flatMap { address in
                frames[address] ?? [SymbolizedFrame(function: "0x" + String(address, radix: 16), module: "[unknown]")]
            }
            return LeakSite(
                typeName: survivor.typeName, count: survivor.count,
                frames: folder.fold(Array(innermostFirst.reversed())))
        }
        return (sites, diagnostics)
    }
}
