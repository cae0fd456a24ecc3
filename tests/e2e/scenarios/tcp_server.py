"""A tiny TCP server for the isolation scenario.

Usage: tcp_server.py PORT_FILE LOG_FILE [PORT]
Listens on 127.0.0.1 (PORT, or a free port when 0 or absent), writes the
port to PORT_FILE once listening, and answers each connection: it reads the
request until EOF and replies "pong <time_ns> <random hex>" (a reply no
replay can guess), appending one line per connection to LOG_FILE. Exits by
itself after 120 s so a failed test never leaves it behind.
"""
import os
import socket
import sys
import time

port_file, log_file = sys.argv[1], sys.argv[2]
port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
deadline = time.monotonic() + 120

server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(8)
open(log_file, "a").close()
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % server.getsockname()[1])
os.rename(port_file + ".tmp", port_file)

while time.monotonic() < deadline:
    server.settimeout(max(0.1, deadline - time.monotonic()))
    try:
        conn, peer = server.accept()
    except socket.timeout:
        break
    with conn:
        conn.settimeout(10)
        request = b""
        try:
            while True:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                request += chunk
            conn.sendall(b"pong %d %s\n" % (time.time_ns(), os.urandom(8).hex().encode()))
        except OSError as e:
            request += (" [%s]" % e).encode()
    with open(log_file, "a") as log:
        log.write("connection from %s:%d request %r\n" % (peer[0], peer[1], request))
