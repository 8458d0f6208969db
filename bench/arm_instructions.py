#!/usr/bin/env python3
"""Instructions per routed frame of an ARM build of mavswitchd, counted under qemu-user.

callgrind does not run on an emulated ARM binary and perf counts nothing inside qemu, so the
count comes from qemu itself: one instruction a translation block (-singlestep) with every block
executed logged (-d nochain,exec) into a pipe this script counts lines from. The router gets a
UDP vehicle sending a telemetry mix and two UDP ground stations; the figure is the instructions
the whole process (every thread, libc included; not the kernel's side of its system calls) ran
while N frames went through, less what it runs idle in as long, over N.

  bench/arm_instructions.py BUILD_DIR [--frames 300] [--batch 1]
--batch 1 (each frame its own wake-up, as a vehicle's telemetry arrives at tens of messages a
second) counts the system-call round around each frame; --batch 10 shares it among ten.
BUILD_DIR: build-arm64 or build-armhf (scripts/cross.sh builds them).
"""
import argparse
import os
import pathlib
import random
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time


def crc_x25(data, crc=0xFFFF):
    for b in data:
        tmp = b ^ (crc & 0xFF)
        tmp = (tmp ^ (tmp << 4)) & 0xFF
        crc = ((crc >> 8) ^ (tmp << 8) ^ (tmp << 3) ^ (tmp >> 4)) & 0xFFFF
    return crc


# (id, payload length, CRC extra) from common.xml: what a vehicle streams most.
MIX = [(0, 9, 50), (1, 31, 124), (30, 28, 39), (33, 28, 104), (74, 20, 20), (24, 30, 24)]


def frames_in(datagram):
    """MAVLink 2 frames in a datagram: the router packs several into one (UDP coalescing)."""
    count, at = 0, 0
    while at + 12 <= len(datagram) and datagram[at] == 0xFD:
        at += 12 + datagram[at + 1] + (13 if datagram[at + 2] & 1 else 0)
        count += 1
    return count


def frame(seq, sysid, compid, msgid, payload, extra):
    header = struct.pack("<BBBBBBB", len(payload), 0, 0, seq & 0xFF, sysid, compid, msgid & 0xFF) + bytes(
        [(msgid >> 8) & 0xFF, (msgid >> 16) & 0xFF])
    crc = crc_x25(header + payload)
    crc = crc_x25(bytes([extra]), crc)
    return b"\xfd" + header + payload + struct.pack("<H", crc)


class LineCounter(threading.Thread):
    """Counts the lines qemu writes into a pipe: one a guest instruction."""

    def __init__(self, fifo):
        super().__init__(daemon=True)
        self.fifo = fifo
        self.count = 0

    def run(self):
        with open(self.fifo, "rb", buffering=0) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    return
                self.count += chunk.count(b"\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--batch", type=int, default=1, help="frames sent together (1: each its own wake-up)")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    daemon = build / "src/daemon/mavswitchd"
    machine = subprocess.run(["readelf", "-h", str(daemon)], capture_output=True, text=True).stdout
    qemu, prefix = ("qemu-aarch64-static", "/usr/aarch64-linux-gnu") if "AArch64" in machine else (
        "qemu-arm-static", "/usr/arm-linux-gnueabihf")

    work = tempfile.mkdtemp()
    fifo = os.path.join(work, "trace")
    os.mkfifo(fifo)
    counter = LineCounter(fifo)
    counter.start()
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    router = subprocess.Popen(
        [qemu, "-L", prefix, "-singlestep", "-d", "nochain,exec", "-D", fifo, str(daemon), "-t", "0", "--http", "0",
         f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        stations = []
        for i in range(2):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.setblocking(False)
            stations.append(s)
        vehicle = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        to = ("127.0.0.1", port)
        gcs_heartbeat = lambda i: frame(0, 255 - i, 190, 0, bytes([0, 0, 0, 0, 6, 8, 0, 0, 3]), 50)

        def drain():
            got = 0
            for s in stations:
                while True:
                    try:
                        got += frames_in(s.recv(65536))
                    except BlockingIOError:
                        break
            return got

        # Up: the ground stations' HEARTBEATs answered by the vehicle's first one.
        deadline = time.time() + 120
        received = 0
        while time.time() < deadline and received < 2:
            for i, s in enumerate(stations):
                s.sendto(gcs_heartbeat(i), to)
            vehicle.sendto(frame(0, 1, 1, 0, bytes([0, 0, 0, 0, 2, 3, 81, 4, 3]), 50), to)
            time.sleep(0.5)
            received += drain()
        if received < 2:
            sys.exit("the router did not route under qemu within 120 s")
        time.sleep(1)
        drain()

        rng = random.Random(1)
        frames = []
        for n in range(args.frames):
            msgid, length, extra = MIX[n % len(MIX)]
            payload = bytes(rng.randrange(1, 256) for _ in range(length))
            frames.append(frame(n, 1, 1, msgid, payload, extra))

        # Idle for a while: what the router runs with nothing to route (its timers), a second.
        c0, t_idle = counter.count, time.time()
        time.sleep(5)
        idle_rate = (counter.count - c0) / (time.time() - t_idle)

        # Closed loop, so that nothing is lost to a full socket buffer while the emulated router is
        # slow: a batch of frames, then its copies awaited at both ground stations.
        c1 = counter.count
        t0 = time.time()
        delivered = 0
        batch = args.batch
        for start in range(0, len(frames), batch):
            for f in frames[start:start + batch]:
                vehicle.sendto(f, to)
            due = 2 * min(start + batch, len(frames))
            deadline = time.time() + 60
            while delivered < due and time.time() < deadline:
                time.sleep(0.01)
                delivered += drain()
            if delivered < due:
                sys.exit(f"only {delivered} of {due} copies came through in time")
        busy = counter.count - c1
        elapsed = time.time() - t0
        per_frame = (busy - idle_rate * elapsed) / args.frames
        arch = "aarch64" if "aarch64" in qemu else "arm"
        print(f"{arch}: {args.frames} frames in batches of {batch} to 2 ground stations ({delivered} copies delivered): "
              f"{per_frame:.0f} instructions per frame in the router's process (idle: {idle_rate:.0f} a second)")
    finally:
        router.terminate()
        try:
            router.wait(timeout=30)
        except subprocess.TimeoutExpired:
            router.kill()


if __name__ == "__main__":
    main()
