#!/usr/bin/env python3
"""Follows a running `cordis-console web`'s live stream (standard library only).

Argument: the console's http URL with its token. Takes the token's cookie, opens /events and prints
each server-sent event as one line, `NAME DATA`, as it comes (flushed), until the stream ends.
"""
import http.client
import sys
import urllib.parse

url = urllib.parse.urlsplit(sys.argv[1])
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=300)
connection.request("GET", "/?" + url.query)
answer = connection.getresponse()
answer.read()
cookie = (answer.getheader("Set-Cookie") or "").split(";")[0]
if answer.status != 302 or not cookie:
    print("no cookie: status", answer.status, flush=True)
    sys.exit(1)
connection.request("GET", "/events", headers={"Cookie": cookie, "Accept": "text/event-stream"})
answer = connection.getresponse()
print("stream", answer.status, flush=True)
name = "message"
for raw in answer:
    line = raw.decode("utf-8", "replace").rstrip("\r\n")
    if line.startswith("event:"):
        name = line[len("event:"):].strip()
    elif line.startswith("data:"):
        print(name, line[len("data:"):].strip(), flush=True)
    elif not line:
        name = "message"
