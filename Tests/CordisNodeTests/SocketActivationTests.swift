import CordisNode
import Testing

@Suite("SocketActivation")
struct SocketActivationTests {
    @Test("Passed sockets start at descriptor 3 with their names")
    func passedSocketsStartAtThreeWithNames() throws {
        let sockets = try SocketActivation.sockets(
            environment: ["LISTEN_PID": "100", "LISTEN_FDS": "3", "LISTEN_FDNAMES": "control:peers:"],
            processID: 100)
        #expect(
            sockets == [
                ActivatedSocket(fd: 3, name: "control"), ActivatedSocket(fd: 4, name: "peers"),
                ActivatedSocket(fd: 5, name: nil),
            ])
    }

    @Test("Without LISTEN_FDNAMES the sockets have no names")
    func withoutNamesSocketsAreUnnamed() throws {
        let sockets = try SocketActivation.sockets(environment: ["LISTEN_PID": "7", "LISTEN_FDS": "2"], processID: 7)
        #expect(sockets == [ActivatedSocket(fd: 3, name: nil), ActivatedSocket(fd: 4, name: nil)])
    }

    @Test("Sockets meant for another process are ignored")
    func socketsForAnotherProcessAreIgnored() throws {
        let sockets = try SocketActivation.sockets(
            environment: ["LISTEN_PID": "100", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "control"], processID: 101)
        #expect(sockets.isEmpty)
    }

    @Test(
        "Without LISTEN_PID or LISTEN_FDS the process was not activated",
        arguments: [[:], ["LISTEN_FDS": "2"], ["LISTEN_PID": "100"], ["LISTEN_FDNAMES": "a"]] as [[String: String]])
    func withoutVariablesNothingIsPassed(environment: [String: String]) throws {
        #expect(try SocketActivation.sockets(environment: environment, processID: 100).isEmpty)
    }

    @Test(
        "Malformed variables are refused",
        arguments: [
            ["LISTEN_PID": "me", "LISTEN_FDS": "1"],
            ["LISTEN_PID": "-100", "LISTEN_FDS": "1"],
            ["LISTEN_PID": "100", "LISTEN_FDS": "0"],
            ["LISTEN_PID": "100", "LISTEN_FDS": "two"],
            ["LISTEN_PID": "100", "LISTEN_FDS": "-1"],
            ["LISTEN_PID": "100", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "only-one"],
            ["LISTEN_PID": "100", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "a:b"],
        ] as [[String: String]])
    func malformedVariablesAreRefused(environment: [String: String]) {
        #expect {
            try SocketActivation.sockets(environment: environment, processID: 100)
        } throws: { error in
            (error as? SystemdError)?.code == .invalidActivation
        }
    }
}
