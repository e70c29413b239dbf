"""json_http.py - the pieces of the tests' stand-in HTTP servers (identity providers,
REST catalogs): a handler answering JSON, and a loopback server on a free port.

    sys.path.insert(0, LIB_DIR); from json_http import JsonHandler, serve
"""
import json
from http.server import BaseHTTPRequestHandler, HTTPServer


class JsonHandler(BaseHTTPRequestHandler):
    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))


def serve(handler, port_file):
    """Serve handler on 127.0.0.1 and a free port, written to port_file; never returns."""
    srv = HTTPServer(("127.0.0.1", 0), handler)
    with open(port_file, "w") as f:
        f.write(str(srv.server_port))
    srv.serve_forever()
