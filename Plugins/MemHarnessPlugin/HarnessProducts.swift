import PackagePlugin

/// The package's executable products that are memory harnesses: those that depend on MemHarness.
struct HarnessProducts {
    /// The library product a harness executable depends on (and its target, inside memharness itself).
    static let memHarness = "MemHarness"

    let packageName: String
    let products: [any Product]
    let executables: [ExecutableProduct]
    /// Names of the executable products that depend on MemHarness, in the manifest's order.
    let harnesses: [String]

    init(of package: Package) {
        packageName = package.displayName
        products = package.products
        executables = package.products(ofType: ExecutableProduct.self)
        harnesses = executables.filter { Self.dependsOnMemHarness($0.mainTarget) }.map(\.name)
    }

    /// The harness to build: `requested` when it is one, else the package's only one.
    func select(_ requested: String?) throws(PluginUsageError) -> String {
        if let requested {
            guard products.contains(where: { $0.name == requested }) else {
                throw .unknownProduct(requested, harnesses: harnesses)
            }
            guard executables.contains(where: { $0.name == requested }) else {
                throw .notExecutable(requested, harnesses: harnesses)
            }
            guard harnesses.contains(requested) else { throw .notAHarness(requested, harnesses: harnesses) }
            return requested
        }
        switch harnesses.count {
        case 0: throw .noHarness(package: packageName, executables: executables.map(\.name))
        case 1: return harnesses[0]
        default: throw .severalHarnesses(harnesses)
        }
    }

    /// Whether `target` or anything it depends on uses MemHarness (as a product, or as a target in memharness itself).
    static func dependsOnMemHarness(_ target: any Target) -> Bool {
        ([target] + target.recursiveTargetDependencies).contains { candidate in
            candidate.name == memHarness
                || candidate.dependencies.contains { dependency in
                    if case .product(let product) = dependency { return product.name == memHarness }
                    return false
                }
        }
    }
}
