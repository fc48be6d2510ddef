#!/usr/bin/python3
"""A small HTTP/1.1 file server for the download tests, on loopback.

    range-server.py DIR --port-file FILE [--log FILE] [--rate BYTES_PER_S]
                    [--drop-after BYTES --drop-times N] [--no-ranges] [--fail-status CODE --fail-times N]

Serves the files of DIR with HEAD and GET, single byte ranges (206 with
Content-Range, 416 outside the file) and keep-alive, as a web server or
an S3 bucket does.  For the tests it also: logs each answer ("GET NAME
START END SENT STATUS", SENT the body bytes that left before the answer
ended), sends at most RATE bytes a second per connection, closes the
connection after DROP-AFTER body bytes on its first N answers, answers
the first N requests with an error status, or ignores ranges as some
servers do (200 and the whole file).  Binds port 0 and writes the port it
got to FILE.
"""
import argparse
import http.server
import os
import re
import socketserver
import sys
import threading
import time

lock = threading.Lock()
counters = {"drop": 0, "fail": 0}


def take(kind, limit):
    with lock:
        if counters[kind] < limit:
            counters[kind] += 1
            return True
        return False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "range-server/1"

    def log_message(self, fmt, *args):
        pass

    def log_answer(self, name, start, end, sent, status):
        if self.server.opts.log:
            with lock, open(self.server.opts.log, "a") as f:
                f.write("%s %s %d %d %d %d\n" % (self.command, name, start, end, sent, status))

    def do_HEAD(self):
        self.answer(head=True)

    def do_GET(self):
        self.answer(head=False)

    def answer(self, head):
        o = self.server.opts
        name = self.path.split("?")[0].lstrip("/")
        path = os.path.join(o.dir, name)
        if "/" in name or name.startswith(".") or not os.path.isfile(path):
            self.send_error(404)
            return
        if o.fail_times and take("fail", o.fail_times):
            self.send_response(o.fail_status)
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.log_answer(name, 0, 0, 0, o.fail_status)
            return
        size = os.path.getsize(path)
        start, end, status = 0, size, 200
        rng = self.headers.get("Range")
        if rng and not o.no_ranges:
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
            if not m or (m.group(1) == "" and m.group(2) == ""):
                self.send_error(400)
                return
            if m.group(1) == "":
                start, end = max(0, size - int(m.group(2))), size
            else:
                start = int(m.group(1))
                end = min(size, int(m.group(2)) + 1) if m.group(2) else size
            if start >= size or start >= end:
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                self.log_answer(name, start, end, 0, 416)
                return
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "none" if o.no_ranges else "bytes")
        self.send_header("Content-Length", str(end - start))
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end - 1, size))
        self.end_headers()
        if head:
            self.log_answer(name, start, end, 0, status)
            return
        limit = end - start
        drop = o.drop_after is not None and take("drop", o.drop_times)
        if drop:
            limit = min(limit, o.drop_after)
        sent = 0
        try:
            with open(path, "rb") as f:
                if not o.rate:
                    while sent < limit:
                        n = os.sendfile(self.connection.fileno(), f.fileno(), start + sent, min(limit - sent, 1 << 22))
                        if n <= 0:
                            break
                        sent += n
                else:
                    f.seek(start)
                    t0 = time.monotonic()
                    while sent < limit:
                        piece = f.read(min(limit - sent, 65536))
                        if not piece:
                            break
                        self.wfile.write(piece)
                        sent += len(piece)
                        ahead = sent / o.rate - (time.monotonic() - t0)
                        if ahead > 0:
                            time.sleep(ahead)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.log_answer(name, start, end, sent, status)
        if drop:
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # a client the test killed or that hung up: not the server's error
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--rate", type=float, default=0)
    ap.add_argument("--drop-after", type=int)
    ap.add_argument("--drop-times", type=int, default=1)
    ap.add_argument("--fail-status", type=int, default=503)
    ap.add_argument("--fail-times", type=int, default=0)
    ap.add_argument("--no-ranges", action="store_true")
    o = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.opts = o
    tmp = o.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.replace(tmp, o.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
