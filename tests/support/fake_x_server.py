#!/usr/bin/env python3
"""A socket where an X server would listen that speaks no X: it takes each connection and
closes it (issue 80, defect 26: a display that answers its socket but refuses the connection).
    fake_x_server.py N [SECONDS=30]   listens on the abstract socket of display :N."""
import socket
import sys
import time

number = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 30
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0/tmp/.X11-unix/X" + number)  # Linux's abstract namespace, where libxcb looks first
s.listen(16)
s.settimeout(0.5)
end = time.time() + seconds
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    c.close()
