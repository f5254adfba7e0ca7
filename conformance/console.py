#!/usr/bin/env python3
"""A Cordis console in Python, from docs/wire-protocol.md alone: reads status and drives a change.

    console.py ADDR [--secret-file FILE] [--protocol V] status            print every node's status as JSON
    console.py ADDR [--secret-file FILE] [--protocol V] check NODE:ENTRY  the conformance run (below)

`--protocol V` says another version in the hello than this client's 1.5 (`1.3`: the node answers with
the codes an older console reads).

`check` connects as a console, reads `status` (cluster-wide), `members` and `catalog`, follows the
event stream, disables and re-enables ENTRY on NODE (relayed when NODE is another member), sees both
changes as events, and checks the link-level rules: heartbeats; an unknown message type is answered
with an `error` and the link stays up; an unknown command and a bad request are answered with their
codes; a framing error is an `error` even in the handshake, a malformed hello a `reject`, a malformed
message after the handshake an `error` without id and the close; with `--silence S`, a link silent for
S seconds (more than the node's heartbeat timeout) is closed with a `goodbye`; with `--counter` (NODE
runs the built-in counter), calls through the control API and their error codes.
Every check prints one `ok:` line; the first that fails prints `FAIL:` and exits 1.
"""

import argparse
import json
import sys
import time

import cordis_wire as wire


def fail(text):
    print("FAIL: " + text, flush=True)
    sys.exit(1)


def check(condition, text):
    if not condition:
        fail(text)
    print("ok: " + text, flush=True)


def spelled(code, older):
    """The spelling a node uses for `code` towards this console once it has read its version: `code`
    for protocol 1.5 and later, `older` (camelCase) for 1.4 and earlier."""
    return code if wire.speaks_kebab_codes() else older


def expect_keys(value, keys, what):
    check(isinstance(value, dict) and set(keys) <= set(value), "%s has %s" % (what, ", ".join(sorted(keys))))


def run_check(link, reference, counter=False):
    node, _, entry = reference.partition(":")
    requests = wire.Requests(link)
    peer = link.peer
    check(peer["role"] == "node" and peer["version"].startswith("1."), "the node speaks protocol 1.x as a node")
    check("remote-services" in peer["capabilities"], "the node names the remote-services capability")

    status = requests.request("status", {"cluster": True})
    check("result" in status, "status answers a result")
    nodes = [item for page in status["pages"] for item in page["nodes"]]
    check(len(nodes) >= 1 and nodes[0]["name"] == peer["name"], "status lists the node reached first")
    for item in nodes:
        expect_keys(item, {"name", "addresses", "incarnation", "version", "reachable", "entries", "fibers"},
                    "node %s" % item["name"])
        for fiber in item["fibers"]:
            expect_keys(fiber, {"fiber", "entry", "plugin", "state", "provides", "injects", "missing", "error"},
                        "fiber %s:#%s" % (item["name"], fiber["fiber"]))
    check(any(item["name"] == node for item in nodes), "status lists %s" % node)

    members = requests.request("members")
    listed = members["result"]["members"]
    check(listed[0]["self"] is True and listed[0]["name"] == peer["name"], "members lists the node reached first")
    for member in listed:
        expect_keys(member, {"name", "addresses", "incarnation", "self", "reachable"}, "member %s" % member["name"])

    catalog = requests.request("catalog", node=node)
    check(isinstance(catalog["result"], list) and all("name" in p for p in catalog["result"]),
          "catalog is an array of plugins")

    follow = requests.request("subscribe", {"follow": True, "history": False})
    subscription = requests.next_id
    check(follow["result"] == {"events": []}, "subscribe without history answers no events")

    disabled = requests.request("disable", {"entry": entry}, node=node)
    check(disabled.get("result") == {"entry": entry, "state": None, "disabled": True, "error": None},
          "disable answers the entry with state null")

    def entry_event(change):
        def matches(message):
            return (message.get("type") == "event" and message.get("id") == subscription
                    and message.get("node") == node and message.get("kind") == "entry"
                    and message["detail"].get("entry") == entry and message["detail"].get("change") == change)
        return matches

    def seen(change):
        if any(entry_event(change)(event) for event in requests.events):
            return True
        link.wait_for(entry_event(change), timeout=10, on_other=requests._other)
        return True

    check(seen("disabled"), "the disable comes back as an entry event of the subscription")
    enabled = requests.request("enable", {"entry": entry}, node=node)
    result = enabled.get("result", {})
    check(result.get("entry") == entry and result.get("disabled") is False, "enable answers the entry")
    check(seen("enabled"), "the enable comes back as an entry event")

    unsubscribed = requests.request("unsubscribe", {"id": subscription})
    check(unsubscribed.get("result") == {"unsubscribed": True}, "unsubscribe answers unsubscribed: true")

    unknown = requests.request("no-such-command")
    check(unknown.get("code") == "unknown-command" and "message" in unknown, "an unknown command is unknown-command")
    bad = requests.request("enable", {})
    check(bad.get("code") == "bad-request", "a request without its argument is bad-request")
    missing = requests.request("enable", {"entry": "no-such-entry"})
    check(missing.get("code") == "rejected", "an unknown entry is rejected")
    stranger = requests.request("status", node="no-such-member")
    check(stranger.get("code") == "unknown-member", "a request for an unknown member is unknown-member")

    forget_self = requests.request("forget", {"member": peer["name"]})
    check(forget_self.get("code") == "rejected", "forget of the node reached is rejected")
    if node != peer["name"]:
        forget_linked = requests.request("forget", {"member": node})
        check(forget_linked.get("code") == "rejected", "forget of a linked member is rejected")

    if counter:
        value = requests.request("call", {"service": "counter", "method": "value"}, node=node)
        check(isinstance(value.get("result"), int), "call counter.value on %s answers an integer" % node)
        added = requests.request("call", {"service": "counter", "method": "add", "args": {"_0": 2}}, node=node)
        check(added.get("result") == value["result"] + 2, "call counter.add(2) answers the new value")
        requests.request("call", {"service": "counter", "method": "add", "args": {"_0": -2}}, node=node)
        wrong = requests.request("call", {"service": "counter", "method": "add", "args": {"_0": "two"}}, node=node)
        check(wrong.get("code") == "invalid-arguments", "an argument of the wrong type is invalid-arguments")
        unknown_method = requests.request("call", {"service": "counter", "method": "reset"}, node=node)
        check(unknown_method.get("code") == "unknown-method", "an unknown method is unknown-method")
        no_service = requests.request("call", {"service": "no-such-service", "method": "x"}, node=node)
        check(no_service.get("code") == "rejected", "a service that is not remote-capable is rejected")

    link.send({"type": "conformance-probe", "id": 1})
    reply = link.wait_for(lambda m: m.get("type") == "error", timeout=10, on_other=requests._other)
    code = spelled("unknown-type", "unknownType")
    check(reply.get("code") == code and reply.get("id") is None,
          "an unknown message type is answered with an error of code %s, without id" % code)
    link.send({"type": "ping", "id": 4242})
    pong = link.receive(timeout=10, answer_pings=True)
    while pong is not None and not (pong.get("type") == "pong" and pong.get("id") == 4242):
        pong = link.receive(timeout=10, answer_pings=True)
    check(pong is not None, "the link stays up after the unknown type: our ping is answered")
    deadline = time.monotonic() + 10
    while link.pings_answered == 0 and time.monotonic() < deadline:
        message = link.receive(timeout=deadline - time.monotonic())
        if message is not None:
            requests._other(message)
    check(link.pings_answered > 0, "the node pings the console's link; %d pings answered with a pong" % link.pings_answered)


def run_link_rules(address, secret, silence):
    """The link-level rules of the specification's section 12, each on a link of its own."""
    # A framing error is answered with an error (not a reject), even during the handshake.
    raw = wire.Link(wire.dial(address), peer=None)
    raw.sock.sendall(b"\x00\x00\x00\x00")
    answer = json.loads(raw._read_payload(time.monotonic() + 10, wire.MAX_HANDSHAKE_FRAME))
    check(answer.get("type") == "error" and answer.get("code") == "badLength" and "id" not in answer,
          "a zero-length frame in the handshake is answered with an error of code badLength "
          "(camelCase: the node has not read this side's version)")
    check(closes(raw), "and the link closes")
    # A hello that is not JSON is refused with a reject naming the JSON problem.
    raw = wire.Link(wire.dial(address), peer=None)
    raw._write_payload(b'{"type":"hello",')
    answer = json.loads(raw._read_payload(time.monotonic() + 10, wire.MAX_HANDSHAKE_FRAME))
    check(answer.get("type") == "reject" and answer.get("code") == "malformedJSON",
          "a hello that is not JSON is refused with a reject of code malformedJSON")
    check(closes(raw), "and the link closes")
    # A hello with a version written with a leading zero is refused.
    raw = wire.Link(wire.dial(address), peer=None)
    raw.send({"type": "hello", "version": "01.3", "role": "console", "name": "py-console", "incarnation": "x",
              "addresses": [], "capabilities": [], "nonce": "00" * 32, "auth": "none" if secret is None else "hmac-sha256"})
    answer = json.loads(raw._read_payload(time.monotonic() + 10, wire.MAX_HANDSHAKE_FRAME))
    check(answer.get("type") == "reject" and answer.get("code") == "invalidField",
          "a version written 01.3 is refused with invalidField")
    # After the handshake, a frame that does not decode is fatal: an error without id, then the close.
    link = wire.connect(address, "console", "py-console", secret=secret)
    link.send({"type": "cancel", "id": "not an integer"})
    answer = link.wait_for(lambda m: m.get("type") == "error", timeout=10)
    code = spelled("invalid-field", "invalidField")
    check(answer.get("code") == code and answer.get("id") is None,
          "after the handshake a malformed message is answered with an error of code %s, without id" % code)
    check(closes(link), "and the link closes")
    if silence:
        # A link that sends nothing is closed once the heartbeat timeout passed.
        link = wire.connect(address, "console", "py-console", secret=secret)
        time.sleep(silence)
        goodbye = link.receive(timeout=10, answer_pings=False)
        while goodbye is not None and goodbye.get("type") == "ping":
            goodbye = link.receive(timeout=10, answer_pings=False)
        check(goodbye is not None and goodbye.get("type") == "goodbye"
              and "no heartbeat" in (goodbye.get("reason") or ""),
              "a console silent for %.1f s is closed with goodbye: %s" % (silence, goodbye and goodbye.get("reason")))
        check(closes(link), "and the link closes")


def closes(link):
    """Whether the peer closes the link within 10 s (anything it still sends is read and dropped)."""
    try:
        while link.receive(timeout=10, answer_pings=False) is not None:
            pass
        return False
    except wire.ProtocolError as error:
        return error.code == "closed"
    except OSError:
        return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("address")
    parser.add_argument("--secret-file")
    parser.add_argument("command", choices=["status", "check"])
    parser.add_argument("reference", nargs="?")
    parser.add_argument("--counter", action="store_true",
                        help="NODE runs the built-in counter: also check calls through the control API")
    parser.add_argument("--silence", type=float, default=0,
                        help="also check that a link silent for this many seconds is closed (more than the node's heartbeat timeout)")
    parser.add_argument("--protocol", default=wire.PROTOCOL_VERSION,
                        help="the protocol version to say in the hello (default %(default)s)")
    options = parser.parse_args()
    wire.PROTOCOL_VERSION = options.protocol
    secret = wire.read_secret(options.secret_file) if options.secret_file else None
    try:
        link = wire.connect(options.address, "console", "py-console", secret=secret)
    except (OSError, wire.ProtocolError) as error:
        print("error: %s" % error, file=sys.stderr)
        return 69
    try:
        if options.command == "status":
            response = wire.Requests(link).request("status", {"cluster": True})
            if "result" not in response:
                print("error: %s" % response.get("message"), file=sys.stderr)
                return 1
            print(json.dumps({"nodes": [n for page in response["pages"] for n in page["nodes"]]}, indent=2))
        else:
            if not options.reference or ":" not in options.reference:
                parser.error("check needs NODE:ENTRY")
            run_check(link, options.reference, counter=options.counter)
            run_link_rules(options.address, secret, options.silence)
            print("conformance: console checks passed", flush=True)
    except wire.ProtocolError as error:
        fail(str(error))
    finally:
        link.close("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
