#!/usr/bin/env python3
"""Probes a running `cordis-console web` over HTTPS with hostile and ordinary requests (standard library only).

Arguments: the console's URL (https, or http for the probes that do not need TLS) with its token. Prints one JSON object: what each probe got back (the
status, or "closed" when the console closed the connection without an HTTP answer). WebConsoleHTTPSTests
checks it.
"""
import json
import socket
import ssl
import sys
import urllib.parse

url = urllib.parse.urlsplit(sys.argv[1])
secure = url.scheme == "https"
host, port = url.hostname, url.port
token = urllib.parse.parse_qs(url.query)["token"][0]
context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE


def exchange(raw, tls=secure):
    """Sends raw bytes on a new connection; returns (status or 'closed', head text)."""
    plain = socket.create_connection((host, port), timeout=15)
    sock = context.wrap_socket(plain, server_hostname=host) if tls else plain
    try:
        sock.sendall(raw)
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, ssl.SSLError, socket.timeout):
        pass
    finally:
        sock.close()
    if not data.startswith(b"HTTP/1.1 "):
        return "closed", ""
    head, _, body = data.partition(b"\r\n\r\n")
    head = head.decode("latin-1")
    exchange.body = body.decode("utf-8", "replace")
    return int(head.split(" ")[1]), head


def request(method, target, headers=(), body=b""):
    lines = ["%s %s HTTP/1.1" % (method, target), "Host: %s:%d" % (host, port)] + list(headers)
    if body:
        lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


cookie = "Cookie: cordis_console=" + token
own = "Origin: %s://%s:%d" % (url.scheme, host, port)
results = {}
status, head = exchange(request("GET", "/?token=" + token))
results["tokenURL"] = status
results["cookieHeader"] = next((line for line in head.split("\r\n") if line.startswith("Set-Cookie:")), "")
results["noToken"] = exchange(request("GET", "/cluster"))[0]
results["withCookie"] = exchange(request("GET", "/cluster", [cookie]))[0]
results["foreignOrigin"] = exchange(request("POST", "/api/action", [cookie, "Origin: https://evil.example", "Content-Type: application/json"], b"{}"))[0]
results["badJSON"] = exchange(request("POST", "/api/action", [cookie, own, "Content-Type: application/json"], b"{nope"))[0]
results["unknownEntry"] = exchange(request("POST", "/api/action", [cookie, own, "Content-Type: application/json"],
                                           b'{"command":"enable","node":"a","args":{"entry":"nope"}}'))[0]
results["enableClock"] = exchange(request("POST", "/api/action", [cookie, own, "Content-Type: application/json"],
                                          b'{"command":"enable","node":"a","args":{"entry":"clock"}}'))[0]
results["enableClockAnswer"] = exchange.body
results["oversizedHead"] = exchange(request("GET", "/cluster", [cookie, "X-Fill: " + "a" * 9000]))[0]
results["garbage"] = exchange(b"\x00\x01\x02 not http\r\n\r\n")[0]
if secure:
    results["plainHTTP"] = exchange(request("GET", "/cluster", [cookie]), tls=False)[0]
print(json.dumps(results))
