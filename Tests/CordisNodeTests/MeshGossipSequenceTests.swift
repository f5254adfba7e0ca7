@testable import CordisNode
import CordisProcessTesting
import CordisWire
import Testing

/// `MeshGossip` under seeded random sequences of link events, member lists, departures and forgets: its
/// invariants hold after every step, and its dial directives describe exactly the diallers it keeps. A
/// failure names the seed and the step, so the sequence can be replayed.
@Suite("The mesh's discovery under random sequences of events")
struct MeshGossipSequenceTests {
    static let names = ["a", "b", "c", "d", "e"]

    static func addresses(of name: String, _ generation: Int) -> [String] {
        ["unix:/tmp/\(name)-\(generation).sock", "tcp:127.0.0.1:\(7000 + generation)"]
    }

    /// One event as the node would report it: links and departures are of other members (a node never
    /// links to itself); a member list may name anyone, this node included.
    static func event(_ random: inout SeededGenerator) -> DiscoveryEvent {
        let name = names[Int.random(in: 1..<names.count, using: &random)]
        let generation = Int.random(in: 0..<3, using: &random)
        let incarnation = "\(name)\(generation)"
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return .linked(member: name, incarnation: incarnation, addresses: addresses(of: name, generation))
        case 1: return .unlinked(member: name, incarnation: incarnation, inOrder: Bool.random(using: &random))
        case 2:
            let count = Int.random(in: 0..<4, using: &random)
            return .peerListed((0..<count).map { _ in
                let listed = names[Int.random(in: 0..<names.count, using: &random)]
                let listedGeneration = Int.random(in: 0..<3, using: &random)
                return Member(name: listed, addresses: addresses(of: listed, listedGeneration), incarnation: "\(listed)\(listedGeneration)")
            })
        case 3: return .forgotten(name: name)
        case 4: return .departed(member: name)
        case 5: return .started
        case 6:
            // A dial reached a member: at one of its own addresses, at another's, or at a seed.
            let dialled = names[Int.random(in: 0..<names.count, using: &random)]
            let candidates = addresses(of: dialled, Int.random(in: 0..<3, using: &random)) + ["unix:/tmp/seed.sock"]
            return .dialled(address: candidates[Int.random(in: 0..<candidates.count, using: &random)], member: name)
        default: return .linkWithdrew(member: name, life: generation)
        }
    }

    @Test("after every step: bounded, never itself, linked members known, diallers only for seeds and known members, and the directives track the diallers exactly")
    func invariantsHold() {
        let own = ["unix:/tmp/a-0.sock"]
        let seeds = ["unix:/tmp/seed.sock", "unix:/tmp/b-0.sock"]
        for seed in UInt64(0)..<300 {
            var random = SeededGenerator(seed: seed)
            var view = MeshGossip(name: "a", ownAddresses: own, seeds: seeds)
            var diallers: Set<String> = []
            var failed = false
            for step in 0..<80 where !failed {
                let event = Self.event(&random)
                let before = view
                var problems: [String] = []
                let directives = view.receive(event)
                let context = "seed \(seed), step \(step), \(event)"
                for directive in directives {
                    switch directive {
                    case .dial(let address):
                        if diallers.contains(address) { problems.append("\(context): \(address) dialled twice") }
                        diallers.insert(address)
                    case .stopDialling(let address):
                        if diallers.remove(address) == nil { problems.append("\(context): \(address) stopped but never dialled") }
                    case .dropProxies(let member, _):
                        if member == "a" { problems.append("\(context): its own proxies dropped") }
                    case .sendMembers(let member):
                        if !view.linked.contains(member) { problems.append("\(context): members sent to unlinked \(member)") }
                    case .offer, .retract, .memberGone, .redial, .restoreOwnKey, .ignoredUnknownKeys:
                        problems.append("\(context): an etcd directive \(directive)")
                    }
                }
                if diallers != view.dialling { problems.append("\(context): directives say \(diallers), the view \(view.dialling)") }
                if view.known["a"] != nil { problems.append("\(context): knows itself") }
                if view.known.count > MeshGossip.maxMembers { problems.append("\(context): \(view.known.count) members") }
                if let wide = view.known.values.first(where: { $0.addresses.count > MeshGossip.maxAddresses }) {
                    problems.append("\(context): \(wide.name) keeps \(wide.addresses.count) addresses")
                }
                if !view.linked.isSubset(of: Set(view.known.keys)) {
                    problems.append("\(context): linked \(view.linked) not all known \(view.known.keys.sorted())")
                }
                if !view.dialling.isDisjoint(with: own) { problems.append("\(context): dials its own address") }
                if !view.dialling.isDisjoint(with: view.forgottenAddresses) {
                    problems.append("\(context): dials forgotten \(view.dialling.intersection(view.forgottenAddresses))")
                }
                if !Set(view.reached.keys).isSubset(of: view.dialling) {
                    problems.append("\(context): owners kept for addresses not dialled \(Set(view.reached.keys).subtracting(view.dialling))")
                }
                for address in view.dialling where !seeds.contains(address) && view.owner(of: address) == nil {
                    problems.append("\(context): dials \(address), which no seed and no known member has")
                }
                if !problems.isEmpty {
                    failed = true
                    Issue.record("\(problems.joined(separator: "; ")); the view before: \(before)")
                }
            }
        }
    }
}
