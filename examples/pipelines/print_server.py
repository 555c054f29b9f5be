"""A tiny HTTP endpoint for the orders-to-http example: prints every line it is POSTed.

Run with:  python3 examples/pipelines/print_server.py 9000
"""
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Print(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        for line in body.decode("utf-8", "replace").splitlines():
            print(line, flush=True)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 9000), Print).serve_forever()
