// cordis-bench: benchmarks with a baseline measured in the same run. `--json` for machine output.
import Cordis
import Foundation

// A reader of the report that goes away (`cordis-bench all | head`) never kills the run with SIGPIPE.
_ = signal(SIGPIPE, SIG_IGN)
let arguments = Array(CommandLine.arguments.dropFirst())
let json = arguments.contains("--json")
let commands = arguments.filter { !$0.hasPrefix("--") }
let usage = """
    usage: cordis-bench all [--quick] [--json] [--rounds N] [--only GROUP,...] [--iterations N]
           cordis-bench core [--quick] [--json] | loader [--json] | codec [--json]
           cordis-bench wire [--iterations N] [--json] | cluster [--iterations N] [--json] | node [--quick] [--json]
           cordis-bench scale [--nodes N,N,...] [--json] | soak [--minutes M] [--rate N] [--json]
           cordis-bench metrics [--rounds N] [--json]
           cordis-bench fairness [--links N] [--follows N] [--toggles N] [--non-readers N] [--json]
           cordis-bench testkit [--rounds N] [--json]
    """

/// The flags of the commands whose arguments are read here (`all` and `wire` read their own), and which of
/// them take a number: anything else is a usage error, so a mistyped flag never runs a long benchmark
/// with its defaults.
let flagsOfCommand: [String: Set<String>] = [
    "core": ["--quick", "--json"], "loader": ["--json"], "codec": ["--json"],
    "cluster": ["--iterations", "--json"], "node": ["--quick", "--json"],
    "scale": ["--nodes", "--json"], "soak": ["--minutes", "--rate", "--json"],
    "metrics": ["--rounds", "--json"], "testkit": ["--rounds", "--json"],
    "fairness": ["--links", "--follows", "--toggles", "--non-readers", "--json"],
]
let numericFlags: Set<String> = [
    "--iterations", "--nodes", "--minutes", "--rate", "--rounds", "--links", "--follows", "--toggles", "--non-readers",
]

if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
if let command = arguments.first, let flags = flagsOfCommand[command] {
    var index = 1
    while index < arguments.count {
        let flag = arguments[index]
        guard flags.contains(flag) else {
            FileHandle.standardError.write(Data("cordis-bench \(command): unknown argument \(flag)\n\(usage)\n".utf8))
            exit(64)
        }
        if numericFlags.contains(flag) {
            let value = index + 1 < arguments.count ? arguments[index + 1] : ""
            let numbers = value.split(separator: ",", omittingEmptySubsequences: false)
            guard !numbers.isEmpty, numbers.allSatisfy({ Double($0) != nil }) else {
                FileHandle.standardError.write(Data("cordis-bench \(command): \(flag) needs a number, not '\(value)'\n".utf8))
                exit(64)
            }
            index += 1
        }
        index += 1
    }
}

/// Prints a report as aligned text or JSON.
func report(_ name: String, _ rows: [[String: Double]], ratios: [String: Double]) {
    if json {
        let object: [String: Any] = ["benchmark": name, "rows": rows, "ratios": ratios]
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]) {
            print(String(decoding: data, as: UTF8.self))
        }
        return
    }
    print("== \(name)")
    for row in rows {
        print(row.sorted { $0.key < $1.key }.map { "\($0.key)=\(format($0.value))" }.joined(separator: "  "))
    }
    for (key, value) in ratios.sorted(by: { $0.key < $1.key }) { print("\(key): \(format(value))") }
}

func format(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e12 ? String(Int(value)) : String(format: "%.6g", value)
}

@CordisActor
func runCore(quick: Bool) async throws {
    let rows = try await CoreBenchmark.run(quick: quick)
    var ratios: [String: Double] = [:]
    if let ten = rows.first(where: { $0.consumers == 10_000 }), let hundred = rows.first(where: { $0.consumers == 100_000 }) {
        let growth = CoreBenchmark.Growth(from: ten, to: hundred)
        ratios["load t(100k)/t(10k)"] = growth.load
        ratios["withdraw t(100k)/t(10k)"] = growth.withdraw
        ratios["reprovide t(100k)/t(10k)"] = growth.reprovide
    }
    // 10,000 fibers each holding a pending timeout, unloaded, against 10,000 plain consumers' withdrawal.
    let timeouts = try await CoreBenchmark.timeoutUnload(consumers: 10_000, rounds: quick ? 1 : 9)
    ratios["withdraw 10k with pending timeouts / without"] = timeouts.timeouts / timeouts.plain
    ratios["withdraw 10k with pending timeouts s"] = timeouts.timeouts
    ratios["withdraw 10k without timeouts s"] = timeouts.plain
    // One fallback provider among 4,000 of a service against one among 400 (1 when flat).
    let fewFallbacks = try await CoreBenchmark.fallbackProviders(count: 400, rounds: quick ? 1 : 5)
    let manyFallbacks = try await CoreBenchmark.fallbackProviders(count: 4_000, rounds: quick ? 1 : 5)
    ratios["fallback provider among 4k / among 400"] = manyFallbacks / fewFallbacks
    ratios["fallback provider among 4k us"] = manyFallbacks * 1e6
    report("core", rows.map {
        ["consumers": Double($0.consumers), "load_s": $0.load, "withdraw_s": $0.withdraw,
         "reprovide_s": $0.reprovide, "heap_bytes_per_fiber": $0.bytesPerFiber]
    }, ratios: ratios)
}

switch commands.first {
case "all":
    exit(await AllBenchmark.main(arguments: Array(arguments.drop { $0 != "all" }.dropFirst())))
case "core":
    try await runCore(quick: arguments.contains("--quick"))
case "loader":
    let figures = await runLoaderBenchmark(entries: 10_000)
    report("loader", [Dictionary(figures, uniquingKeysWith: { first, _ in first })], ratios: [:])
case "cluster":
    let iterations = arguments.firstIndex(of: "--iterations").flatMap { index in
        index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
    } ?? 5_000
    let figures = try await ClusterBenchmark.run(iterations: iterations, toggles: 20)
    report("cluster", figures.rows, ratios: figures.notes)
case "metrics":
    let rounds = arguments.firstIndex(of: "--rounds").flatMap { index in
        index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
    } ?? 5
    let figures = try await MetricsScrapeBenchmark.run(rounds: max(1, rounds), seconds: 3)
    report("metrics", figures.rows, ratios: figures.ratios)
case "testkit":
    let rounds = arguments.firstIndex(of: "--rounds").flatMap { index in
        index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
    } ?? 9
    let figures = try await TestKitStartBenchmark.run(rounds: max(1, min(rounds, 1_000)))
    report("testkit", figures.rows, ratios: figures.ratios)
case "fairness":
    func value(_ flag: String) -> Int? {
        arguments.firstIndex(of: flag).flatMap { index in index + 1 < arguments.count ? Int(arguments[index + 1]) : nil }
    }
    var settings = FairnessBenchmark.Settings()
    settings.links = value("--links") ?? settings.links
    settings.follows = value("--follows") ?? settings.follows
    settings.toggles = value("--toggles") ?? settings.toggles
    settings.nonReaders = value("--non-readers") ?? settings.nonReaders
    let figures = try await FairnessBenchmark.run(settings)
    report("fairness", figures.rows, ratios: figures.ratios)
case "node":
    let figures = try await NodeStartBenchmark.run(quick: arguments.contains("--quick"))
    report("node", figures.rows, ratios: figures.ratios)
case "scale":
    let sizes = arguments.firstIndex(of: "--nodes").flatMap { index in
        arguments[index + 1].split(separator: ",").compactMap { Int($0) }.filter { (2...256).contains($0) }
    } ?? [4, 16, 64]
    let figures = try await ScaleBenchmark.run(sizes: sizes)
    report("scale", figures.rows, ratios: figures.ratios)
case "codec":
    report("codec", [runWireCodecBenchmark()], ratios: [:])
case "wire":
    exit(await WireLatencyBench.main(arguments: Array(arguments.drop { $0 != "wire" }.dropFirst())))
case "soak":
    exit(await SoakBenchmark.main(arguments: arguments, json: json))
case "wire-echo-server":
    exit(await WireLatencyBench.echoServerMain(arguments: Array(arguments.drop { $0 != "wire-echo-server" }.dropFirst())))
default:
    FileHandle.standardError.write(Data("\(usage)\n".utf8))
    exit(64)
}
