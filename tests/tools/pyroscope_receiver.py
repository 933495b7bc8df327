#!/usr/bin/env python3
"""A stand-in for Grafana Pyroscope's ingest endpoint, for tests only.

Checks each request against the documented shape of POST /ingest
(query: name=APP{k=v,...}, from and until UNIX seconds, sampleRate,
spyName, format=folded; body: folded lines "frame;frame COUNT") and
answers 200, or 400 with the reason.  One JSON line per request goes to
LOG.  The first FAIL requests get 503 (a server that is away).  BIG > 0:
every answer is BIG bytes long (a server that answers without end).

usage: pyroscope_receiver.py PORTFILE LOG [FAIL [BIG]]
"""
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

PORTFILE, LOG = sys.argv[1], sys.argv[2]
FAIL = int(sys.argv[3]) if len(sys.argv) > 3 else 0
BIG = int(sys.argv[4]) if len(sys.argv) > 4 else 0
NAME = re.compile(r'^[A-Za-z0-9_.-]+\{([A-Za-z0-9_]+=[A-Za-z0-9_.-]*)(,[A-Za-z0-9_]+=[A-Za-z0-9_.-]*)*\}$')
LINE = re.compile(rb'^[^\n]+ [0-9]+$')
seen = 0


def check(path, qs, body):
    if path != '/ingest':
        return 'path is not /ingest'
    one = {k: v[0] for k, v in qs.items() if len(v) == 1}
    if len(one) != len(qs):
        return 'a parameter given twice'
    for k in ('name', 'from', 'until'):
        if k not in one:
            return 'no ' + k
    if not NAME.match(one['name']):
        return 'bad name ' + one['name']
    if not (one['from'].isdigit() and one['until'].isdigit()
            and int(one['from']) < int(one['until'])):
        return 'bad from/until'
    if not one.get('sampleRate', '100').isdigit():
        return 'bad sampleRate'
    if one.get('format', 'folded') != 'folded':
        return 'format is not folded'
    if not one.get('spyName'):
        return 'no spyName'
    lines = body.split(b'\n')
    if lines[-1] != b'':
        return 'body does not end in a newline'
    for ln in lines[:-1]:
        if not LINE.match(ln):
            return 'bad folded line %r' % ln[:80]
    return None


class H(BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        seen += 1
        n = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(n)
        u = urlsplit(self.path)
        qs = parse_qs(u.query, keep_blank_values=True)
        rec = {'n': seen, 'query': {k: v[0] for k, v in qs.items()}}
        if seen <= FAIL:
            code, why = 503, 'failing on purpose'
        else:
            why = check(u.path, qs, body)
            code = 400 if why else 200
        rec['status'] = code
        rec['why'] = why
        rec['total'] = sum(int(ln.rsplit(b' ', 1)[1]) for ln in body.split(b'\n') if ln and code == 200)
        with open(LOG, 'a') as f:
            f.write(json.dumps(rec) + '\n')
        self.send_response(code)
        self.end_headers()
        self.wfile.write(b'x' * BIG if BIG else (why or 'ok').encode())

    def log_message(self, *a):
        pass


srv = HTTPServer(('127.0.0.1', 0), H)
with open(PORTFILE + '.tmp', 'w') as f:
    f.write(str(srv.server_address[1]))
import os  # noqa: E402
os.rename(PORTFILE + '.tmp', PORTFILE)
srv.serve_forever()
