// swift-tools-version:6.0
//
// Cordis builds with nothing but the Swift toolchain: the macro target compiles against the
// SwiftSyntax modules that ship in the toolchain (`usr/lib/swift/host`). Set
// `CORDIS_SWIFT_HOST_LIBS=/path/to/usr/lib/swift/host` to point at an unusual install, or
// `CORDIS_SWIFT_SYNTAX_PACKAGE=1` on a machine that can fetch packages to build the macros
// against the swift-syntax package instead (then Cordis can also be a versioned dependency).

import CompilerPluginSupport
import Foundation
import PackageDescription

let environment = ProcessInfo.processInfo.environment
let useSwiftSyntaxPackage = environment["CORDIS_SWIFT_SYNTAX_PACKAGE"] == "1"

/// The toolchain's `usr/lib/swift/host` folder: the override, else found from the PackageDescription
/// library this manifest runs with, else from the `swift` on `PATH`.
func toolchainHostLibraries() -> String {
    if let override = environment["CORDIS_SWIFT_HOST_LIBS"], !override.isEmpty { return override }
    let fileManager = FileManager.default
    if let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) {
        for line in maps.split(separator: "\n") where line.hasSuffix("libPackageDescription.so") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            // .../usr/lib/swift/pm/ManifestAPI/libPackageDescription.so -> .../usr/lib/swift/host
            let library = URL(fileURLWithPath: String(line[slash...]))
            let host = library.deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("host").path
            if fileManager.fileExists(atPath: host + "/SwiftSyntax.swiftmodule") { return host }
        }
    }
    for directory in (environment["PATH"] ?? "").split(separator: ":") {
        let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("swift")
        guard fileManager.fileExists(atPath: candidate.path) else { continue }
        let resolved = candidate.resolvingSymlinksInPath()
        let host = resolved.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("lib/swift/host").path
        if fileManager.fileExists(atPath: host + "/SwiftSyntax.swiftmodule") { return host }
    }
    return "/usr/lib/swift/host"
}

let macroTarget: Target
let macroTestDependencies: [Target.Dependency]
let macroTestSettings: [SwiftSetting]
let macroTestLinker: [LinkerSetting]
var packageDependencies: [Package.Dependency] = []

if useSwiftSyntaxPackage {
    packageDependencies.append(.package(url: "https://github.com/swiftlang/swift-syntax.git", "600.0.0"..<"700.0.0"))
    macroTarget = .macro(
        name: "CordisMacros",
        dependencies: [
            .product(name: "SwiftSyntax", package: "swift-syntax"),
            .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
            .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
            .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            .product(name: "SwiftCompilerPluginMessageHandling", package: "swift-syntax"),
            .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
        ],
        swiftSettings: [.define("CORDIS_SWIFT_SYNTAX_PACKAGE")]
    )
    macroTestDependencies = [
        "CordisMacros",
        .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
        .product(name: "SwiftParser", package: "swift-syntax"),
    ]
    macroTestSettings = []
    macroTestLinker = []
} else {
    let host = toolchainHostLibraries()
    macroTarget = .macro(
        name: "CordisMacros",
        swiftSettings: [.unsafeFlags(["-I", host])],
        linkerSettings: [.unsafeFlags(["-L", host, "-Xlinker", "-rpath", "-Xlinker", host])]
    )
    macroTestDependencies = ["CordisMacros"]
    macroTestSettings = [.unsafeFlags(["-I", host])]
    macroTestLinker = [.unsafeFlags(["-L", host, "-Xlinker", "-rpath", "-Xlinker", host])]
}

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Cordis",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Cordis", targets: ["Cordis"]),
        .library(name: "CordisWire", targets: ["CordisWire"]),
        .library(name: "CordisNode", targets: ["CordisNode"]),
        .executable(name: "cordis-node", targets: ["cordis-node"]),
        .executable(name: "cordis-bench", targets: ["cordis-bench"]),
        .executable(name: "cordis-console", targets: ["cordis-console"]),
        // Clusters of real node processes for a user's own tests (docs/testing.md).
        .library(name: "CordisTestKit", targets: ["CordisTestKit"]),
    ],
    dependencies: packageDependencies,
    targets: [
        macroTarget,
        .target(name: "CordisJSON", swiftSettings: strict),
        .target(name: "CordisCalls", swiftSettings: strict),
        .target(name: "CordisFiles", swiftSettings: strict),
        .target(name: "Cordis", dependencies: ["CordisMacros", "CordisJSON", "CordisCalls", "CordisFiles"], swiftSettings: strict),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CCordisShim", cSettings: [.define("_GNU_SOURCE")]),
        .target(name: "CordisWire", dependencies: ["CordisJSON", "CordisCalls", "COpenSSL", "CCordisShim", "CordisFiles"], swiftSettings: strict),
        .target(name: "CordisSigning", dependencies: ["COpenSSL", "CordisJSON", "CordisFiles"], swiftSettings: strict),
        .target(name: "CordisControl", dependencies: ["CordisJSON", "CordisWire"], swiftSettings: strict),
        .target(name: "CordisDiscovery", dependencies: ["CordisJSON", "CordisWire"], swiftSettings: strict),
        .target(name: "CordisNode", dependencies: ["Cordis", "CordisJSON", "CordisWire", "CordisControl", "CordisDiscovery", "CordisFiles", "CordisSigning"], swiftSettings: strict),
        .executableTarget(name: "cordis-node", dependencies: ["CordisNode"], swiftSettings: strict),
        .target(name: "CordisConsole", dependencies: ["CordisControl", "CordisWire", "CordisJSON", "CordisSigning", "CordisDiscovery", "CordisFiles"], swiftSettings: strict),
        .executableTarget(name: "cordis-console", dependencies: ["CordisConsole"], swiftSettings: strict),
        .executableTarget(name: "cordis-bench", dependencies: ["Cordis", "CordisWire", "CordisNode", "CordisControl", "CCordisShim", "CordisTestKit"], swiftSettings: strict),
        .executableTarget(name: "custom-node", dependencies: ["Cordis", "CordisNode"], path: "Examples/CustomNode", swiftSettings: strict),
        .executableTarget(name: "cordis-example", dependencies: ["Cordis"], path: "Examples/Greeter", swiftSettings: strict),
        // A cordis-ios program using its public API as an app would; CordisIOSCompatTests runs it.
        .executableTarget(name: "cordis-ios-compat", dependencies: ["Cordis"], path: "Examples/CordisIOSCompat", swiftSettings: strict),
        // cordis-ios's demo (three plugins and a Loader over a file) written against this package; DemoTests runs it.
        .executableTarget(name: "cordis-ios-demo", dependencies: ["Cordis"], path: "Examples/CordisIOSDemo", swiftSettings: strict),
        .testTarget(name: "CordisJSONTests", dependencies: ["CordisJSON", "CordisProcessTesting"], swiftSettings: strict),
        .testTarget(name: "CordisTests", dependencies: ["Cordis", "CordisProcessTesting", "cordis-ios-compat"], swiftSettings: strict),
        .testTarget(
            name: "CordisMacrosTests", dependencies: macroTestDependencies,
            swiftSettings: strict + macroTestSettings, linkerSettings: macroTestLinker),
        .testTarget(name: "CordisWireTests", dependencies: ["CordisWire", "CordisProcessTesting"], swiftSettings: strict),
        // Start, drive, fault and stop clusters of real node processes from tests (Swift Testing or XCTest).
        .target(name: "CordisTestKit", dependencies: ["Cordis", "CordisJSON", "CordisWire", "CordisControl", "CCordisShim"], swiftSettings: strict),
        // A test process using the kit that CordisTestKitTests kills with SIGKILL (its nodes must die with it).
        .executableTarget(name: "cordis-testkit-probe", dependencies: ["CordisTestKit"], path: "Tests/TestKitProbe", swiftSettings: strict),
        // The kit itself, against real nodes.
        .testTarget(
            name: "CordisTestKitTests", dependencies: ["CordisTestKit", "CordisNode", "cordis-node", "cordis-testkit-probe"],
            swiftSettings: strict),
        // What the project's own suites add to the kit: Swift Testing issues, etcd, seeded randomness.
        .target(name: "CordisProcessTesting", dependencies: ["CordisTestKit"], path: "Tests/ProcessSupport", swiftSettings: strict),
        // `cordis-node` with test hooks the production binary does not have (claimed interface versions).
        .executableTarget(name: "cordis-test-node", dependencies: ["CordisNode"], path: "Tests/TestNode", swiftSettings: strict),
        .testTarget(
            name: "CordisNodeTests", dependencies: ["CordisNode", "CordisConsole", "CordisProcessTesting", "cordis-test-node"],
            swiftSettings: strict),
        .testTarget(name: "CordisDiscoveryTests", dependencies: ["CordisDiscovery", "CordisWire", "CordisJSON", "CordisProcessTesting"], swiftSettings: strict),
        .testTarget(name: "CordisConsoleTests", dependencies: ["CordisConsole", "CordisControl", "CordisWire", "CordisProcessTesting"], swiftSettings: strict),
        // The wire protocol's specification checked against the implementation: schemas, vectors, docs, and
        // the Python conformance client against real nodes.
        .testTarget(
            name: "CordisSpecTests",
            dependencies: ["Cordis", "CordisJSON", "CordisWire", "CordisControl", "CordisNode", "CordisConsole", "CordisProcessTesting"],
            swiftSettings: strict),
        // cordis-ios's own unit tests, case by case, against this package's public API.
        .testTarget(name: "CordisIOSTests", dependencies: ["Cordis", "CordisProcessTesting", "cordis-ios-demo"], swiftSettings: strict),
        .testTarget(name: "CordisSigningTests", dependencies: ["CordisSigning", "CordisJSON"], swiftSettings: strict),
    ]
)
