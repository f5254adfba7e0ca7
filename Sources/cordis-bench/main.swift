// cordis-bench: benchmarks with a baseline measured in the same run. `--json` for machine output.
import Cordis
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let json = arguments.contains("--json")
let commands = arguments.filter { !$0.hasPrefix("--") }
let usage = "usage: cordis-bench all [--quick] [--json] [--rounds N] [--only GROUP,...] | core [--quick] [--json] | loader [--json] | wire [--iterations N] [--json] | codec [--json] | cluster [--iterations N] [--json] | node [--quick] [--json]"

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
    let sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]
    let rows = try await CoreBenchmark.run(sizes: sizes)
    var ratios: [String: Double] = [:]
    if let ten = rows.first(where: { $0.consumers == 10_000 }), let hundred = rows.first(where: { $0.consumers == 100_000 }) {
        ratios["load t(100k)/t(10k)"] = hundred.load / ten.load
        ratios["withdraw t(100k)/t(10k)"] = hundred.withdraw / ten.withdraw
        ratios["reprovide t(100k)/t(10k)"] = hundred.reprovide / ten.reprovide
    }
    report("core", rows.map {
        ["consumers": Double($0.consumers), "load_s": $0.load, "withdraw_s": $0.withdraw,
         "reprovide_s": $0.reprovide, "rss_bytes_per_fiber": $0.bytesPerFiber]
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
case "node":
    let figures = try await NodeStartBenchmark.run(quick: arguments.contains("--quick"))
    report("node", figures.rows, ratios: figures.ratios)
case "scale": let figures = try await ScaleBenchmark.run(sizes: arguments.firstIndex(of: "--nodes").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1].split(separator: ",").compactMap { Int($0) }.filter { (2...256).contains($0) } : nil } ?? [4, 16, 64]); report("scale", figures.rows, ratios: figures.ratios)
case "codec":
    report("codec", [runWireCodecBenchmark()], ratios: [:])
case "wire":
    exit(await WireLatencyBench.main(arguments: Array(arguments.drop { $0 != "wire" }.dropFirst())))
case "soak": exit(await SoakBenchmark.main(arguments: arguments, json: json))
case "wire-echo-server":
    exit(await WireLatencyBench.echoServerMain(arguments: Array(arguments.drop { $0 != "wire-echo-server" }.dropFirst())))
default:
    FileHandle.standardError.write(Data("\(usage)\n".utf8))
    exit(64)
}
