"""status_proxy.py UPSTREAM PORT LOG - an HTTP proxy for the REST tests that passes every
request to UPSTREAM (http://host:port) and appends one line per request to LOG:
METHOD PATH STATUS inm=<the If-None-Match header or None>. It binds 127.0.0.1:PORT (0: a
free port, written to LOG.port)."""
import http.server, sys, urllib.error, urllib.request
up = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do(self):
        n = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(n) if n else None
        req = urllib.request.Request(up + self.path, data=body, method=self.command)
        for k, v in self.headers.items():
            if k.lower() not in ('host', 'content-length'): req.add_header(k, v)
        try:
            r = urllib.request.urlopen(req); code = r.status; data = r.read(); hdrs = r.headers
        except urllib.error.HTTPError as e:
            code = e.code; data = e.read(); hdrs = e.headers
        with open(sys.argv[3], 'a') as f: f.write("%s %s %s inm=%s\n" % (self.command, self.path, code, self.headers.get('If-None-Match')))
        self.send_response(code)
        for k, v in hdrs.items():
            if k.lower() not in ('transfer-encoding', 'connection', 'content-length', 'date', 'server'): self.send_header(k, v)
        self.send_header('Content-Length', str(len(data))); self.end_headers(); self.wfile.write(data)
    do_GET = do_POST = do_DELETE = do_HEAD = do
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[2])), H)
with open(sys.argv[3] + '.port', 'w') as f:
    f.write(str(srv.server_address[1]))
srv.serve_forever()
