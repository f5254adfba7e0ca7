import Cordis
import CordisWire

/// What one `/metrics` scrape reads from a node, taken at one moment on `CordisActor`, and its
/// rendering in the Prometheus text exposition format (0.0.4). The node gathers it
/// (`Node.metricsText()`); the families and their help texts are written here.
@CordisActor
struct NodeScrape {
    /// The node's name, incarnation and version labels.
    var name: String
    var incarnation: String
    /// Fibers by state, the root fiber left out.
    var fibers: [FiberState: Int]
    /// Entries of the plugin tree, and how many have an error.
    var entries: Int
    var entriesWithError: Int
    /// The health of every member this node knows, itself included.
    var health: [MemberHealth]
    /// Links open to members, and to consoles.
    var links: Int
    var consoleLinks: Int
    /// Calls and withdrawals counted by the node.
    var metrics: NodeMetrics
    /// Messages sent and received, by kind.
    var traffic: TrafficCounter.Counts
    /// The etcd lease's state in etcd mode (`registering`, `held`, `degraded`, `expired`), nil otherwise.
    var leaseState: String?
    /// The process's memory and descriptors.
    var process: ProcessFigures

    /// The scrape in the text exposition format: every family, with its help text.
    var text: String {
        var text = MetricsText()
        text.family("cordis_node_info", "gauge", "Always 1; the node's name, incarnation and version as labels.")
        text.sample("cordis_node_info", [("node", name), ("incarnation", incarnation), ("version", CordisVersion.current)], 1)

        text.family("cordis_fibers", "gauge", "Fibers of this node by state, proxies of remote providers included.")
        for state in FiberState.allCases { text.sample("cordis_fibers", [("state", state.rawValue)], fibers[state] ?? 0) }

        text.gauge("cordis_entries", "Entries of this node's plugin tree.", entries)
        text.gauge("cordis_entries_with_error", "Entries whose plugin is unknown, whose config was refused, or whose fiber failed.", entriesWithError)

        text.family("cordis_members", "gauge", "Members this node knows, itself included, by health: up, suspected (silent past half the heartbeat timeout), down (nobody heard it leave), stopped (it said goodbye), left (forgotten), or degraded (this node, in etcd mode).")
        for state in MemberHealth.allCases {
            text.sample("cordis_members", [("health", state.rawValue)], health.filter { $0 == state }.count)
        }

        text.gauge("cordis_links", "Links open to other members (one per member in use).", links)
        text.gauge("cordis_console_links", "Links open to consoles.", consoleLinks)

        text.family("cordis_calls_total", "counter", "Remote calls served by this node's providers and made by its proxies, by outcome (ok or the call error code).")
        for direction in NodeMetrics.directions {
            for (outcome, count) in (metrics.calls[direction] ?? [:]).sorted(by: { $0.key < $1.key }) {
                text.sample("cordis_calls_total", [("direction", direction), ("outcome", outcome)], count)
            }
        }
        text.family("cordis_call_duration_seconds", "histogram", "How long remote calls took, from arrival to answer (served) or from sending to the answer (made).")
        for direction in NodeMetrics.directions {
            (metrics.callDurations[direction] ?? MetricsHistogram(bounds: NodeMetrics.callBuckets))
                .write("cordis_call_duration_seconds", [("direction", direction)], into: &text)
        }

        text.family("cordis_withdrawals_total", "counter", "Orderly withdrawals of this node's exported providers, by outcome: acknowledged (or links lost) or timeout.")
        for (outcome, count) in metrics.withdrawals.sorted(by: { $0.key < $1.key }) {
            text.sample("cordis_withdrawals_total", [("outcome", outcome)], count)
        }
        text.gauge("cordis_withdrawals_in_progress", "Withdrawals waiting for remote consumers to let go.", metrics.withdrawing.count)
        text.family("cordis_withdrawal_duration_seconds", "histogram", "How long withdrawals took, from the notice to the release of the provider's teardown.")
        metrics.withdrawalDuration.write("cordis_withdrawal_duration_seconds", [], into: &text)

        text.family("cordis_messages_total", "counter", "Messages sent and received on every link (and with etcd) since the node started, by kind.")
        for (direction, table) in [("sent", traffic.sent), ("received", traffic.received)] {
            for kind in TrafficCounter.Kind.allCases {
                text.sample("cordis_messages_total", [("direction", direction), ("kind", kind.rawValue)], table[kind] ?? 0)
            }
        }

        if let leaseState {
            text.family("cordis_etcd_lease_state", "gauge", "1 for the state of this node's etcd lease: registering, held, degraded (unanswered keepalives) or expired (exports withdrawn).")
            for candidate in ["registering", "held", "degraded", "expired"] {
                text.sample("cordis_etcd_lease_state", [("state", candidate)], candidate == leaseState ? 1 : 0)
            }
        }

        if let resident = process.residentBytes {
            text.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", resident)
        }
        if let open = process.openDescriptors {
            text.gauge("process_open_fds", "Number of open file descriptors.", open)
        }
        if let limit = process.descriptorLimit {
            text.gauge("process_max_fds", "Maximum number of open file descriptors.", limit)
        }
        return text.text
    }
}
