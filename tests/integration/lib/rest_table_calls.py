"""rest_table_calls.py - one table of a REST catalog, called from a test's Python part:
GET loads it, POST commits a body; failures are collected and printed as they happen.

    sys.path.insert(0, LIB_DIR); from rest_table_calls import TableCalls
    t = TableCalls("rest_commit_values", base + "/v1/namespaces/shop/tables/r")
    st, body = t.call()                  # load: (status, JSON answer)
    st, body = t.call({"requirements": [], "updates": [...]})   # commit
    t.fail("what went wrong")
    sys.exit(t.exit_code())
"""
import json
import sys
import urllib.error
import urllib.request


class TableCalls:
    def __init__(self, test, url):
        self.test = test
        self.url = url
        self.fails = []

    def fail(self, msg):
        self.fails.append(msg)
        print("%s: FAIL: %s" % (self.test, msg), file=sys.stderr, flush=True)

    def call(self, body=None):
        req = urllib.request.Request(self.url,
                                     data=json.dumps(body).encode() if body else None,
                                     method="POST" if body else "GET",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)

    def exit_code(self):
        return 1 if self.fails else 0
