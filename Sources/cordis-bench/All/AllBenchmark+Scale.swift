import Cordis

/// The `scale` group of `cordis-bench all`: `ScaleBenchmark` at a few sizes in both modes, each figure a
/// key named after its mode and size (`scale_mesh_settle_ms_n16`, `scale_etcd_idle_msgs_per_node_s_n16`…).
/// `--quick` runs 4 nodes only, with a shorter idle window. etcd mode is skipped (its keys absent) when
/// etcd is not installed.
extension AllBenchmark {
    static func scale(_ settings: Settings, into samples: inout Samples) async throws {
        let sizes = settings.quick ? [4] : [4, 16]
        let window: Duration = settings.quick ? .seconds(2) : .seconds(5)
        for mode in ScaleBenchmark.Mode.allCases {
            if mode == .etcd && !ScaleBenchmark.etcdInstalled { continue }
            for size in sizes {
                let row = try await ScaleBenchmark.measure(mode: mode, nodes: size, idleWindow: window)
                let prefix = "scale_\(mode.rawValue)_"
                let suffix = "_n\(size)"
                for (key, name, factor) in Self.scaleKeys {
                    if let value = row[key] { samples.add(prefix + name + suffix, value * factor) }
                }
            }
        }
    }

    /// The row's figures kept, their names in `all` and the factor to the unit of the name.
    static let scaleKeys: [(String, String, Double)] = [
        ("settle_s", "settle_ms", 1000),
        ("links_per_node", "links_per_node", 1),
        ("idle_msgs_per_node_per_s", "idle_msgs_per_node_s", 1),
        ("idle_msgs_median_node_per_s", "idle_msgs_median_node_s", 1),
        ("idle_msgs_busiest_node_per_s", "idle_msgs_busiest_node_s", 1),
        ("idle_heartbeats_per_node_per_s", "idle_heartbeats_per_node_s", 1),
        ("idle_membership_per_node_per_s", "idle_membership_per_node_s", 1),
        ("idle_etcd_per_node_per_s", "idle_etcd_per_node_s", 1),
        ("idle_cpu_percent", "idle_cpu_percent", 1),
        ("withdraw_to_pending_s", "withdraw_to_pending_ms", 1000),
        ("status_s", "status_ms", 1000),
    ]
}
