#!/usr/bin/python3
"""hold_bodies: what half-sent HTTP bodies make bloomgated hold (issue 15).

    hold_bodies.py HTTP_PORT PID [CONNECTIONS [MIB]]

Opens CONNECTIONS (40) connections to 127.0.0.1:HTTP_PORT, each sending the
head of a POST with Content-Length: 8388000 and then MIB (6) MiB of its body,
and keeps them open; then prints how many were refused (503, max_buffered)
and the daemon's VmRSS from /proc/PID/status. Prints figures, asserts nothing.
"""
import socket
import sys
import time

port, pid = int(sys.argv[1]), sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 40
mib = int(sys.argv[4]) if len(sys.argv) > 4 else 6
head = b"POST /v1/filters/f/add HTTP/1.1\r\nHost: x\r\nContent-Length: 8388000\r\n\r\n"
socks, refused = [], 0
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(20)
    s.sendall(head)
    try:
        s.sendall(b"x" * (mib << 20))
    except OSError:
        pass  # refused and closed while sending
    socks.append(s)
time.sleep(2)
for s in socks:
    s.setblocking(False)
    try:
        if b" 503 " in s.recv(100):
            refused += 1
    except OSError:
        pass
with open(f"/proc/{pid}/status") as f:
    rss = next(line.split()[1] for line in f if line.startswith("VmRSS"))
print(f"connections {n}, body sent {mib} MiB each, refused {refused}, daemon VmRSS {rss} kB")
