"""The Cordis wire protocol in Python 3 (standard library only), written from docs/wire-protocol.md.

A small, readable second implementation: frames, the handshake (unauthenticated and HMAC-SHA256),
sealed frames, heartbeats. `console.py` and `provider.py` use it against real `cordis-node` processes,
so the specification and the node cannot drift apart.
"""

import hashlib
import hmac
import json
import os
import re
import select
import socket
import time

PROTOCOL_VERSION = "1.5"
MAX_HANDSHAKE_FRAME = 64 * 1024
MAX_FRAME = 4 * 1024 * 1024


def code_name(text):
    """A code in the spelling of protocol 1.5 (`bad-length`), whichever spelling it came in: a node
    writes the camelCase of 1.4 and earlier (`badLength`, `badMAC`) to an older peer, and before it has
    read the peer's version."""
    if not isinstance(text, str):
        return text
    words = re.findall(r"[a-z0-9]+|[A-Z]{2,}[0-9]*(?![a-z])|[A-Z][a-z0-9]*", text)
    return "-".join(word.lower() for word in words) if words else text


def speaks_kebab_codes():
    """True when this side's version is 1.5 or later: a node spells its codes with `-` for it."""
    major, minor = (int(part) for part in PROTOCOL_VERSION.split("."))
    return (major, minor) >= (1, 5)


class ProtocolError(Exception):
    """The peer broke a rule of the protocol, refused the handshake, or closed the link. `code` is in
    the spelling of protocol 1.5, whichever spelling the peer used."""

    def __init__(self, code, message):
        code = code_name(code)
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


def compact(message):
    """A message as compact UTF-8 JSON; `type` must be the first key of the dict."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def lp(text):
    data = text.encode()
    return len(data).to_bytes(2, "big") + data


def ls(items):
    return len(items).to_bytes(2, "big") + b"".join(lp(item) for item in items)


def identity_bytes(identity):
    """id(x): name, role, incarnation, version, addresses, capabilities, as the peer sent them."""
    return (b"".join(lp(identity[key]) for key in ("name", "role", "incarnation", "version"))
            + ls(identity["addresses"]) + ls(identity["capabilities"]))


def mac(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()


def read_secret(path):
    """A secret file: its text with surrounding white space trimmed, at least 32 bytes."""
    with open(path, "rb") as handle:
        secret = handle.read().strip(b" \t\n\v\f\r")
    if len(secret) < 32:
        raise ValueError("the secret in %s is shorter than 32 bytes" % path)
    return secret


SEAL_PREFIX = re.compile(rb'^\{"seq":(0|[1-9][0-9]*),"mac":"([0-9a-f]{64})",')
IDENTITY_KEYS = ("version", "role", "name", "incarnation", "addresses", "capabilities")


class Link:
    """One established link: send and receive messages, answering the peer's pings."""

    def __init__(self, sock, peer, send_key=None, receive_key=None):
        self.sock = sock
        self.peer = peer
        self.send_key = send_key
        self.receive_key = receive_key
        self.send_seq = 0
        self.receive_seq = 0
        self.buffer = b""
        self.pings_answered = 0
        self.closed = False

    # Framing

    def _write_payload(self, payload):
        self.sock.sendall(len(payload).to_bytes(4, "big") + payload)

    def _read_payload(self, deadline, limit):
        while True:
            if len(self.buffer) >= 4:
                length = int.from_bytes(self.buffer[:4], "big")
                if length == 0 or length > limit:
                    raise ProtocolError("bad-length" if length == 0 else "oversize", "frame length %d" % length)
                if len(self.buffer) >= 4 + length:
                    payload = self.buffer[4:4 + length]
                    self.buffer = self.buffer[4 + length:]
                    return payload
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self.sock], [], [], remaining)
            if not ready:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                self.closed = True
                raise ProtocolError("closed", "the peer closed the link")
            self.buffer += chunk

    # Messages

    def send(self, message):
        body = compact(message)
        if self.send_key is None:
            self._write_payload(body)
            return
        zeroed = b'{"seq":%d,"mac":"%s",' % (self.send_seq, b"0" * 64) + body[1:]
        tag = mac(self.send_key, zeroed).hex().encode()
        self._write_payload(zeroed.replace(b"0" * 64, tag, 1))
        self.send_seq += 1

    def _open(self, payload):
        if self.receive_key is None:
            return payload
        match = SEAL_PREFIX.match(payload)
        if not match:
            # A framing error is answered unsealed before the peer closes: report it.
            try:
                notice = json.loads(payload)
                if notice.get("type") == "error":
                    raise ProtocolError(notice.get("code"), notice.get("message"))
            except ValueError:
                pass
            raise ProtocolError("bad-mac", "a sealed frame lacks its prefix")
        start, end = match.span(2)
        zeroed = payload[:start] + b"0" * 64 + payload[end:]
        if not hmac.compare_digest(mac(self.receive_key, zeroed).hex().encode(), match.group(2)):
            raise ProtocolError("bad-mac", "frame MAC does not verify")
        if int(match.group(1)) != self.receive_seq:
            raise ProtocolError("replay", "seq %s, expected %d" % (match.group(1).decode(), self.receive_seq))
        self.receive_seq += 1
        return b"{" + payload[match.end():]

    def receive(self, timeout=10.0, answer_pings=True):
        """The next message other than a ping (pings are answered with a pong), or None on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            payload = self._read_payload(deadline, MAX_FRAME)
            if payload is None:
                return None
            message = json.loads(self._open(payload))
            if answer_pings and message.get("type") == "ping":
                self.send({"type": "pong", "id": message["id"]})
                self.pings_answered += 1
                continue
            if message.get("type") == "goodbye":
                self.closed = True
            return message

    def wait_for(self, predicate, timeout=10.0, on_other=None):
        """Receives until `predicate(message)` holds; other messages go to `on_other` (or are dropped)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProtocolError("timeout", "the awaited message did not come within %.1f s" % timeout)
            message = self.receive(timeout=remaining)
            if message is None:
                continue
            if predicate(message):
                return message
            if on_other is not None:
                on_other(message)

    def close(self, reason=None, **extra):
        if not self.closed:
            message = {"type": "goodbye", "reason": reason}
            message.update(extra)
            try:
                self.send(message)
            except OSError:
                pass
        self.closed = True
        self.sock.close()


def dial(address, timeout=10.0):
    """A connected socket to `unix:/path` or `tcp:HOST:PORT` (`tcp:[IPv6]:PORT`)."""
    if address.startswith("unix:"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(address[len("unix:"):])
    elif address.startswith("tcp:"):
        host, _, port = address[len("tcp:"):].rpartition(":")
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    else:
        raise ValueError("not an address: %s" % address)
    sock.settimeout(None)
    return sock


def connect(address, role, name, secret=None, addresses=(), capabilities=(), timeout=10.0):
    """Dials `address` and runs the handshake as the initiator; returns the established `Link`.

    Raises ProtocolError when the node refuses (`reject`, or an `error` for a framing problem).
    """
    sock = dial(address, timeout)
    nonce = os.urandom(32)
    me = {"version": PROTOCOL_VERSION, "role": role, "name": name,
          "incarnation": "%s-%s" % (name, os.urandom(8).hex()),
          "addresses": list(addresses), "capabilities": list(capabilities)}
    hello = {"type": "hello"}
    hello.update(me)
    hello.update({"nonce": nonce.hex(), "auth": "none" if secret is None else "hmac-sha256"})
    link = Link(sock, peer=None)
    link.send(hello)
    deadline = time.monotonic() + timeout

    def next_handshake_message():
        payload = link._read_payload(deadline, MAX_HANDSHAKE_FRAME)
        if payload is None:
            raise ProtocolError("timeout", "no handshake answer within %.1f s" % timeout)
        message = json.loads(payload)
        if message.get("type") in ("reject", "error"):
            raise ProtocolError(message.get("code"), message.get("reason") or message.get("message"))
        return message

    first = next_handshake_message()
    if secret is None:
        if first.get("type") != "welcome" or "proof" in first:
            raise ProtocolError("unexpected-message", "expected an unauthenticated welcome, got %r" % first)
        link.peer = {key: first[key] for key in IDENTITY_KEYS}
        return link
    if first.get("type") != "challenge":
        raise ProtocolError("unexpected-message", "expected a challenge, got %r" % first.get("type"))
    responder_nonce = bytes.fromhex(first["nonce"])
    t_i = nonce + responder_nonce + identity_bytes(me)
    link.send({"type": "proof", "proof": mac(secret, b"cordis/1.2 initiator proof\x00" + t_i).hex()})
    welcome = next_handshake_message()
    if welcome.get("type") != "welcome" or "proof" not in welcome:
        raise ProtocolError("unexpected-message", "expected a welcome with a proof, got %r" % welcome)
    peer = {key: welcome[key] for key in IDENTITY_KEYS}
    t = t_i + identity_bytes(peer)
    expected = mac(secret, b"cordis/1.2 responder proof\x00" + t).hex()
    if not hmac.compare_digest(expected, welcome["proof"]):
        raise ProtocolError("bad-mac", "the node's proof does not verify")
    master = mac(secret, b"cordis/1.2 session\x00" + t)
    link.send_key = mac(master, b"cordis/1 frames initiator to responder")
    link.receive_key = mac(master, b"cordis/1 frames responder to initiator")
    link.peer = peer
    return link


def interface_version(signatures):
    """The version of a remote interface: FNV-1a 64 of its normalised signatures joined by `;`."""
    value = 0xcbf29ce484222325
    for byte in ";".join(signatures).encode():
        value ^= byte
        value = (value * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % value


class Requests:
    """Control requests over a link: ids, paging (`more`), and the events that arrive meanwhile."""

    def __init__(self, link):
        self.link = link
        self.next_id = 0
        self.events = []

    def request(self, command, args=None, node=None, timeout=10.0):
        """Sends a request and returns its response (pages of a result joined into a list of pages)."""
        self.next_id += 1
        request_id = self.next_id
        message = {"type": "request", "id": request_id, "command": command, "node": node, "args": args or {},
                   "timeout": timeout}
        self.link.send(message)
        pages = []
        while True:
            response = self.link.wait_for(
                lambda m: m.get("type") == "response" and m.get("id") == request_id,
                timeout=timeout + 2, on_other=self._other)
            if "result" not in response:
                return response
            pages.append(response["result"])
            if not response.get("more", False):
                response["pages"] = pages
                return response

    def _other(self, message):
        if message.get("type") == "event":
            self.events.append(message)
