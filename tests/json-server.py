#!/usr/bin/python3
"""json-server.py PORT ANSWERS: a stand-in for a node's benchd on
127.0.0.1:PORT.  ANSWERS is a JSON file mapping a request path to the
answer to GET it, [STATUS, BODY] (BODY sent as JSON); the path "*" answers
any other.  Runs until killed."""
import http.server
import json
import sys

port, answers = int(sys.argv[1]), json.load(open(sys.argv[2]))


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        status, body = answers.get(self.path, answers.get("*", [404, {"error": "no such path"}]))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
