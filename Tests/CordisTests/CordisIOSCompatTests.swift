import CordisProcessTesting
import Foundation
import Testing

/// The compatibility program (`Examples/CordisIOSCompat`, the `cordis-ios-compat` executable) is a
/// cordis-ios app using cordis-ios's public API; it must build here, run, and observe what cordis-ios
/// documents, scenario by scenario.
@Suite("A cordis-ios program")
struct CordisIOSCompatTests {
    @Test("the compatibility program runs every scenario and observes what cordis-ios documents")
    func compatibilityProgramObservesCordisIOSBehaviour() async throws {
        let program = NodeProcess.productsDirectory.appendingPathComponent("cordis-ios-compat")
        let run = try await ChildProcess.run(program, [], deadline: .seconds(60))
        #expect(run.termination?.status == 0, "\(run.output)")
        let lines = run.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let expected = Self.expected + [""]
        for (index, pair) in zip(lines, expected).enumerated() where pair.0 != pair.1 {
            Issue.record("line \(index + 1): \(pair.0.debugDescription), expected \(pair.1.debugDescription)")
            break
        }
        #expect(lines.count == expected.count, "\(run.output)")
    }

    static let expected: [String] = [
        "== services, check, intercepts, events, validate",
        "weather setup",
        "Today: 21 F",
        "panel shown",
        "panel active",
        "service named weather",
        "panel hidden",
        "offline: panel pending",
        "Today: 21 F",
        "panel shown",
        "forecast heard: 35",
        "forecast 35: hot",
        "forecast heard: 10",
        "forecast 10: none",
        "refused: plugin \"WeatherPanel\": invalid config: title must not be empty",
        "== realms and contexts",
        "isolated realm: true, root realm: true",
        "extend: parent is root true, root true, isRoot true false",
        "isolate's parent: true",
        "inject closure sees 21; its root is root true, parent true",
        "== function plugins",
        "hi at 21",
        "hey at 21",
        "fibers named greeting, greeting: active, active",
        "effects of greeting: [\"anonymous\"], missing []",
        "refused: plugin \"greeting\": invalid config: title must not be empty",
        "hey gone",
        "hello at 21",
        "hello gone",
        "hi gone",
        "PluginType: Idle active, uid set true",
        "disposed: uid nil",
        "assertActive after dispose: fiber 7 (Idle) is disposed",
        "== logger exporters",
        "exported [info] logging: exporter on",
        "exported [info] root: while loaded",
        "error log: title must not be empty",
        "exported [error] root: title must not be empty",
        "[warn] root: printed by PrintExporter",
        "[warn] forecast: a named logger",
        "== Loader over a store of [Entry]",
        "store saved [\"tomorrow\"]",
        "Tomorrow: 21 C",
        "panel shown",
        "store saved [\"tomorrow\", \"hello\"]",
        "ahoy at 21",
        "entries: [\"tomorrow\", \"hello\"], fibers active active",
        "store saved [\"tomorrow\", \"hello\"]",
        "ahoy gone",
        "ahoy there at 21",
        "refused: entry \"hello\": plugin \"greeting\": invalid config: title must not be empty",
        "store saved [\"tomorrow (disabled)\", \"hello\"]",
        "panel hidden",
        "tomorrow: disabled, fiber none",
        "store saved [\"tomorrow (disabled)\"]",
        "ahoy there gone",
        "stored: [\"tomorrow\"]",
        "solo in a realm of its own: pending, missing [\"weather\"]",
        "in memory: [\"solo\"]",
        "== effects and events",
        "forecast heard: 1",
        "once: 1",
        "forecast heard: 2",
        "async effect ran",
        "async effect reverted",
        "scoped effect ran",
        "scoped effect reverted",
        "== errors, aborts, adopted effects",
        "refused as invalid config true: plugin \"Thermostat\": invalid config:",
        "  - must not be negative (at low)",
        "  - high is below low",
        "parallel, one failing: 1 error: AggregateError: one failed",
        "parallel, two failing: 2 errors: AggregateError: first failed; second failed",
        "missing inject true: cannot get property \"unprovided\" without inject",
        "inactive effect true: cannot create effect on inactive context",
        "aborted effect ready, disposed false",
        "aborting effect reverted",
        "adopted listener heard ring",
        "effects of listening: [\"ctx.on(\\\"alarm\\\")\"]",
        "== scoped events, waterfalls, core events",
        "loud heard scoped",
        "loud heard unscoped",
        "quiet heard unscoped",
        "weather's realm heard storm",
        "waterfall: 105",
        "next twice true: next() called multiple times",
        "plugin Idle pending",
        "Idle pending -> loading",
        "Idle loading -> active",
        "Idle active -> unloading",
        "Idle unloading -> disposed",
        "plugin Idle disposed",
        "service unprovided provided",
        "service unprovided gone",
        "== catalog resolve",
        "resolved: Idle, greeting, nothing is nil",
        "started from resolve: Idle active",
        "injection with a config: 21 K",
        "kelvin injects [\"weather\"], missing []",
        "guarded at 21",
        "update to rude vetoed",
        "guarded gone",
        "polite at 21",
        "polite gone",
        "== withdrawal",
        "panel hidden",
        "weather stopped",
        "weather disposed",
    ]
}
