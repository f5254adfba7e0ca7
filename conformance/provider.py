#!/usr/bin/env python3
"""A Cordis provider in Python, from docs/wire-protocol.md alone: a node-role peer that provides the
built-in `counter` service to Swift consumers, then withdraws it and leaves the cluster.

    provider.py ADDR [--secret-file FILE] [--name NAME] [--expect N]

It links to the node at ADDR as a member (role `node`, no addresses of its own), announces `counter`
(interface `CounterAPI`, its version derived from the method signatures), serves `add` and `value`
until the counter reaches N (default 1: the consumer's `add(1)`), withdraws it, keeps serving while
the node's consumers unload (their disposers may still call), waits for the `withdrawAck`, and
leaves with `goodbye` and `leaving: true`. On the way it checks that a second life under its name is
refused with `name-taken`, and that an announcement of another interface version makes no proxy (the
consumer's `status` says why in `waiting`). It exits 0 when the counter is back at 0.
"""

import argparse
import sys
import time

import cordis_wire as wire

COUNTER_SIGNATURES = ["add(_:Int)->Int", "value()->Int"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("address")
    parser.add_argument("--secret-file")
    parser.add_argument("--name", default="py-provider")
    parser.add_argument("--expect", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30)
    options = parser.parse_args()
    secret = wire.read_secret(options.secret_file) if options.secret_file else None
    link = wire.connect(options.address, "node", options.name, secret=secret, capabilities=["remote-services"])
    print("ok: linked to %s as a member" % link.peer["name"], flush=True)
    members = link.wait_for(lambda m: m.get("type") == "members", timeout=options.timeout)
    print("ok: the node told its members: %s" % ", ".join(m["name"] for m in members["members"]), flush=True)

    # A second life under the same name, while this one is linked, is refused at the handshake.
    try:
        wire.connect(options.address, "node", options.name, secret=secret).close()
        print("FAIL: a second link under the live name %s was accepted" % options.name, flush=True)
        return 1
    except wire.ProtocolError as error:
        if error.code != "name-taken":
            print("FAIL: a second life of %s was refused with %s, not name-taken" % (options.name, error.code), flush=True)
            return 1
    print("ok: a second life under the same name is refused with name-taken", flush=True)

    # An announcement of another interface version makes no proxy: the consumer stays pending, and status
    # says why in its fiber's `waiting` map. Its withdrawal is acknowledged at once.
    stale = {"type": "announce", "service": "counter", "realm": None, "interface": "CounterAPI",
             "interfaceVersion": wire.interface_version(["add(_:Int)->Int"]), "node": options.name,
             "fiber": 1, "life": 1}
    link.send(stale)
    console = wire.connect(options.address, "console", options.name + "-console", secret=secret)
    requests = wire.Requests(console)
    deadline = time.monotonic() + options.timeout
    waiting = None
    while waiting is None and time.monotonic() < deadline:
        served = link.receive(timeout=0.05)
        if served is not None and served.get("type") == "call":
            print("FAIL: the node called a provider of another interface version", flush=True)
            return 1
        status = requests.request("status")
        for fiber in status["pages"][0]["nodes"][0]["fibers"]:
            if "counter" in fiber.get("waiting", {}):
                waiting = fiber["waiting"]["counter"]
    console.close("done")
    if waiting is None or stale["interfaceVersion"] not in waiting:
        print("FAIL: no consumer waits for counter with the mismatch as its reason (%r)" % waiting, flush=True)
        return 1
    print("ok: another interface version makes no proxy; status says why: %s" % waiting, flush=True)
    withdraw = {"type": "withdraw", "service": "counter", "realm": None, "node": options.name, "fiber": 1, "life": 1}
    link.send(withdraw)
    link.wait_for(lambda m: m.get("type") == "withdrawAck" and m.get("life") == 1, timeout=options.timeout)
    print("ok: the withdrawal of a provider without a proxy is acknowledged at once", flush=True)

    provider = {"service": "counter", "realm": None, "node": options.name, "fiber": 1, "life": 2}
    announce = {"type": "announce", "service": "counter", "realm": None, "interface": "CounterAPI",
                "interfaceVersion": wire.interface_version(COUNTER_SIGNATURES), "node": options.name,
                "fiber": 1, "life": 2}
    link.send(announce)
    state = {"value": 0, "calls": 0}

    def serve(message):
        if message.get("type") != "call":
            return
        state["calls"] += 1
        if message["service"] != "counter":
            reply = {"type": "error", "id": message["id"], "code": "unknown-service", "message": "no such service"}
        elif message["method"] == "add" and isinstance(message["args"].get("_0"), int):
            state["value"] += message["args"]["_0"]
            reply = {"type": "result", "id": message["id"], "value": state["value"]}
        elif message["method"] == "value":
            reply = {"type": "result", "id": message["id"], "value": state["value"]}
        else:
            reply = {"type": "error", "id": message["id"], "code": "unknown-method",
                     "message": "counter has no method %s" % message["method"]}
        link.send(reply)

    def counter_reached(message):
        serve(message)
        return state["value"] == options.expect

    link.wait_for(counter_reached, timeout=options.timeout)
    print("ok: a Swift consumer called counter.add; the counter is at %d" % state["value"], flush=True)

    withdraw = {"type": "withdraw"}
    withdraw.update(provider)
    link.send(withdraw)

    def acknowledged(message):
        if message.get("type") == "withdrawAck":
            return all(message.get(key) == value for key, value in provider.items())
        serve(message)
        return False

    link.wait_for(acknowledged, timeout=options.timeout)
    print("ok: the node acknowledged the withdrawal after %d calls" % state["calls"], flush=True)
    if state["value"] != 0:
        print("FAIL: the counter is at %d after the withdrawal, not 0" % state["value"], flush=True)
        return 1
    print("ok: the consumer's disposer ran before the acknowledgement: the counter is back at 0", flush=True)
    link.close("conformance provider done", leaving=True)
    print("conformance: provider checks passed", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, wire.ProtocolError) as error:
        print("FAIL: %s" % error, flush=True)
        sys.exit(1)
