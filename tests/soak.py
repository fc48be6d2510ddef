#!/usr/bin/python3
"""soak.py: a benchd under abuse, for tests/t0435-daemon-soak.t.

    soak.py HOST PORT SECONDS TOKEN_FILE DATASET

Keeps CONNECTIONS connections busy for SECONDS: most of them send good
requests (inventory, metrics, binding, health, the dataset list and one
dataset's status) and check every answer (status 200, a body of the length
announced, JSON where JSON is promised); the others abuse the daemon:
malformed and oversized requests (each must get its 4xx, or the connection
closed), clients that send a byte a second, clients that close in the middle
of an answer.  The clients use the source addresses 127.0.0.2 and up, a few
connections each, so that benchd's per-address limit is not what is tested.

Prints one JSON object: counts per kind, failures (the first few, with why).
"""
import asyncio
import json
import random
import socket
import struct
import sys
import time

CONNECTIONS = 64
GOOD, SLOW, DROP, BAD = 44, 8, 6, 6        # 64 in all
PER_ADDRESS = 8


class Failure(Exception):
    pass


async def read_response(reader):
    """Status, headers, body of one HTTP/1.1 answer (Content-Length framed)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    body = await reader.readexactly(n)
    return status, headers, body


class Soak:
    def __init__(self, host, port, seconds, token, dataset):
        self.host, self.port, self.seconds = host, port, seconds
        self.token, self.dataset = token, dataset
        self.counts = {}
        self.failures = []
        self.end = time.monotonic() + seconds

    def count(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def fail(self, what):
        self.count("failed")
        if len(self.failures) < 20:
            self.failures.append(what)

    async def connect(self, src):
        return await asyncio.open_connection(self.host, self.port, local_addr=(src, 0))

    async def good(self, src, rng):
        paths = ["/v1/inventory", "/metrics", "/v1/binding?ranks=1", "/v1/health", "/v1/datasets",
                 "/v1/datasets/" + self.dataset, "/v1/topology"]
        while time.monotonic() < self.end:
            path = rng.choice(paths)
            keep = rng.random() < 0.5
            try:
                reader, writer = await self.connect(src)
            except OSError as e:
                self.fail("connect for %s: %s" % (path, e))
                await asyncio.sleep(0.1)
                continue
            try:
                for _ in range(rng.randint(2, 5) if keep else 1):
                    if time.monotonic() >= self.end:
                        break
                    writer.write(("GET %s HTTP/1.1\r\nHost: soak\r\n%s\r\n" %
                                  (path, "" if keep else "Connection: close\r\n")).encode())
                    await writer.drain()
                    status, headers, body = await asyncio.wait_for(read_response(reader), 30)
                    if status != 200:
                        raise Failure("%s: status %d: %s" % (path, status, body[:200]))
                    if path != "/metrics":
                        json.loads(body.decode("utf-8"))
                    elif not body.startswith(b"# HELP"):
                        raise Failure("/metrics: not Prometheus text")
                    self.count("good")
                    path = rng.choice(paths)
            except (Failure, OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError) as e:
                self.fail("%s: %s: %s" % (path, type(e).__name__, e))
            finally:
                writer.close()

    async def slow(self, src, rng):
        """A byte a second: benchd cuts it off at request_timeout."""
        req = b"GET /v1/health HTTP/1.1\r\nHost: soak\r\nX-Slow: " + b"s" * 200
        while time.monotonic() < self.end:
            try:
                reader, writer = await self.connect(src)
                for i in range(len(req)):
                    if time.monotonic() >= self.end:
                        break
                    writer.write(req[i:i + 1])
                    await writer.drain()
                    await asyncio.sleep(1)
                    if reader.at_eof():
                        break
                writer.close()
                self.count("slow")
            except OSError:
                self.count("slow")      # cut off: what should happen
            await asyncio.sleep(rng.random() * 0.2)

    async def drop(self, src, rng):
        """Asks for a large answer, reads a little of it, resets the connection."""
        while time.monotonic() < self.end:
            try:
                reader, writer = await self.connect(src)
                writer.write(b"GET %s HTTP/1.1\r\nHost: soak\r\n\r\n" %
                             rng.choice([b"/metrics", b"/v1/inventory", b"/v1/topology"]))
                await writer.drain()
                await reader.read(rng.randint(1, 200))
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.close()
                self.count("dropped")
            except OSError as e:
                self.fail("drop: %s" % e)
            await asyncio.sleep(0.01)

    def bad_request(self, rng):
        """A request and the statuses that are right for it (None: closed)."""
        big = "x" * 40000
        many = "&".join("k%d=1" % i for i in range(1000))
        tok = "Authorization: Bearer %s\r\n" % self.token
        choices = [
            (b"GARBAGE\r\n\r\n", {None}),
            (bytes(rng.randrange(256) for _ in range(64)) + b"\r\n\r\n", {None, 400, 505}),
            (("GET /v1/health?%s HTTP/1.1\r\nHost: s\r\n\r\n" % many).encode(), {414}),
            (("GET /v1/health?x=%s HTTP/1.1\r\nHost: s\r\n\r\n" % big).encode(), {414, None}),
            (("GET /v1/health HTTP/1.1\r\nHost: s\r\nX-Big: %s\r\n\r\n" % big[:17000]).encode(), {431}),
            (b"GET /v1/../../etc/passwd HTTP/1.1\r\nHost: s\r\n\r\n", {400}),
            (b"GET /v1/nope\xff HTTP/1.1\r\nHost: s\r\n\r\n", {404}),
            (b"DELETE /v1/inventory HTTP/1.1\r\nHost: s\r\n\r\n", {405}),
            (b"POST /v1/inventory/refresh HTTP/1.1\r\nHost: s\r\nContent-Length: 0\r\n\r\n", {401}),
            (("POST /v1/datasets/soak/stage HTTP/1.1\r\nHost: s\r\n%sContent-Length: 9\r\n\r\n{\"bad\": 1"
              % tok).encode(), {400}),
            (("POST /v1/datasets/soak/stage HTTP/1.1\r\nHost: s\r\n%sContent-Length: 200000\r\n\r\n" % tok).encode()
             + b"{" * 1000, {413}),
            (b"POST /v1/inventory/refresh HTTP/1.1\r\nHost: s\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
             {400}),
        ]
        return rng.choice(choices)

    async def bad(self, src, rng):
        while time.monotonic() < self.end:
            req, want = self.bad_request(rng)
            try:
                reader, writer = await self.connect(src)
                writer.write(req)
                await writer.drain()
                try:
                    status, _, _ = await asyncio.wait_for(read_response(reader), 15)
                except (asyncio.IncompleteReadError, ConnectionResetError):
                    status = None
                if status not in want:
                    self.fail("bad request %r: status %s, expected %s" % (req[:60], status, want))
                else:
                    self.count("refused")
                writer.close()
            except OSError as e:
                self.fail("bad request %r: %s" % (req[:60], e))
            except asyncio.TimeoutError:
                self.fail("bad request %r: no answer in 15 s" % req[:60])
            await asyncio.sleep(0.01)

    async def run(self):
        tasks = []
        kinds = [self.good] * GOOD + [self.slow] * SLOW + [self.drop] * DROP + [self.bad] * BAD
        for i, kind in enumerate(kinds):
            src = "127.0.0.%d" % (2 + i // PER_ADDRESS)
            tasks.append(kind(src, random.Random(i)))
        await asyncio.gather(*tasks)


def main():
    host, port, seconds, token_file, dataset = sys.argv[1:6]
    token = open(token_file).read().strip()
    s = Soak(host, int(port), float(seconds), token, dataset)
    asyncio.run(s.run())
    print(json.dumps({"counts": s.counts, "failures": s.failures}))


if __name__ == "__main__":
    main()
