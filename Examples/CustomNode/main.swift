// A node binary with its own plugin catalog: the built-in plugins plus a `weather` service shared
// across the cluster and a `forecast` plugin that uses it, wherever it is provided.
//
//   swift run custom-node --name n1 --entries n1.json --listen unix:/tmp/n1.sock
import Cordis
import CordisNode
import Foundation

/// A remote-capable interface: callable from any node of the cluster.
@Remote
public protocol WeatherAPI: Sendable {
    /// The temperature in a city, in °C.
    func temperature(in city: String) async throws -> Double
}

/// The key consumers inject.
public enum WeatherKey: RemoteServiceKey {
    public typealias Value = any WeatherAPI
    public typealias Interface = WeatherAPIRemote
    public static let name = "weather"
}

/// The local implementation.
@CordisActor
final class Weather: WeatherAPI {
    func temperature(in city: String) async throws -> Double { Double(city.count) + 10 }
}

@CordisActor
func catalog(node: String) -> PluginCatalog {
    var catalog = BuiltinCatalog.plugins(node: node)
    catalog.register(
        FunctionPlugin<NoConfig>(name: "weather", provides: [WeatherKey.self]) { ctx, _, _ in
            try ctx.provide(WeatherKey.self, Weather())
        }, as: "weather")
    catalog.register(
        FunctionPlugin<NoConfig>(name: "forecast", inject: [WeatherKey.self]) { ctx, _, _ in
            let weather = try ctx[WeatherKey.self]
            let lisbon = try await weather.temperature(in: "Lisbon")
            ctx.logger("forecast").info("Lisbon: \(lisbon) °C")
        }, as: "forecast")
    return catalog
}

var services = BuiltinCatalog.remoteServices
services.register(WeatherKey.self)
let shared = services
exit(await NodeRunner.main(
    arguments: Array(CommandLine.arguments.dropFirst()), catalog: { catalog(node: $0) }, remoteServices: shared))
