# tests/tools/ch_standin.py - a stand-in on a ClickHouse store's port for
# tests/t67-fleet-trust.sh: a proxy to the real server that misbehaves
# once in a chosen way, or a server that is no ClickHouse at all.
# argv: MODE LISTEN_HOST PORT_FILE UPSTREAM_PORT STAT_FILE
#   lose         the first samples INSERT reaches the store, its answer
#                is lost (the connection closed)
#   dup          the first samples INSERT reaches the store twice
#   pass         a plain proxy (on an IPv6 address, say)
#   ok200        no ClickHouse: "Ok." and 200 to everything
#   hang-insert  an INSERT is never answered
#   hang-select  the retry check (SELECT count() FROM ...windows) never is
#   huge         the retry check is answered with 256 MiB
import http.client, http.server, os, socket, sys, threading, time

mode, host, port_file, upstream, stat_file = sys.argv[1:6]
done = threading.Event()		# the one misbehaviour happened


def note(line):
    with open(stat_file, "a") as f:
        f.write(line + "\n")


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def forward(self, body):
        c = http.client.HTTPConnection("127.0.0.1", int(upstream), timeout=60)
        hdr = {k: v for k, v in self.headers.items()
               if k.lower() in ("content-type", "authorization")}
        c.request("POST", self.path, body=body, headers=hdr)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r, data

    def answer(self, r, data):
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower().startswith("x-clickhouse") or k.lower() == "content-type":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(n)
        samples = "INSERT%20INTO%20stackfold.samples" in self.path
        insert = "INSERT%20INTO" in self.path
        is_count = body.startswith(b"SELECT count() FROM stackfold.windows")
        if mode == "ok200":
            note("request")
            self.send_response(200)
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"Ok.\n")
            return
        if mode == "lose" and samples and not done.is_set():
            done.set()
            self.forward(body)
            note("lost the answer of " + self.path[:60])
            self.close_connection = True
            return
        if mode == "dup" and samples and not done.is_set():
            done.set()
            self.forward(body)
            note("sent twice " + self.path[:60])
        if (mode == "hang-insert" and insert) or (mode == "hang-select" and is_count):
            note("hanging")
            time.sleep(3600)
            return
        if mode == "huge" and is_count:
            self.send_response(200)
            self.send_header("X-ClickHouse-Server-Display-Name", "squatter")
            self.send_header("Content-Length", str(256 << 20))
            self.end_headers()
            sent = 0
            try:
                chunk = b"1" * (1 << 20)
                while sent < (256 << 20):
                    self.wfile.write(chunk)
                    sent += len(chunk)
            except OSError:
                pass
            note("huge answer: %d bytes sent" % sent)
            self.close_connection = True
            return
        self.answer(*self.forward(body))


class S(http.server.ThreadingHTTPServer):
    daemon_threads = True
    address_family = socket.AF_INET6 if ":" in host else socket.AF_INET


s = S((host, 0), H)
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % s.server_address[1])

os.rename(port_file + ".tmp", port_file)
s.serve_forever()
