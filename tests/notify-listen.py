#!/usr/bin/python3
"""notify-listen.py SOCKET LOG: receives sd_notify datagrams on SOCKET (a Unix
datagram socket it creates) and appends each one to LOG, one message per
line with newlines inside it shown as '|'.  Runs until killed."""
import os
import socket
import sys

path, log = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(log, "a", buffering=1) as f:
    f.write("listening\n")
    while True:
        msg = s.recv(4096).decode("utf-8", "replace")
        f.write(msg.replace("\n", "|") + "\n")
