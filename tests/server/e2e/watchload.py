"""Many idle watches against a real ``kubesched serve``: used by the watch-limit test and,
run as a script, to measure the server's memory per idle watch::

    python tests/server/e2e/watchload.py --watches 2000

starts a server (API only), reads its RSS, opens the watches (raw HTTP/1.1 sockets, one
per watch, as informers hold them), checks that every one got 200 and that ordinary
requests still succeed, reads the RSS again and prints the difference per watch.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_harness import API_ONLY, Server  # noqa: E402


class Watches:
    """Open watch connections; ``statuses`` holds each one's HTTP status."""

    def __init__(self) -> None:
        self.writers: list[asyncio.StreamWriter] = []
        self.statuses: list[int] = []

    async def open(self, host: str, port: int, n: int, path: str, parallel: int = 100) -> None:
        gate = asyncio.Semaphore(parallel)

        async def one(i: int) -> None:
            async with gate:
                reader, writer = await asyncio.open_connection(host, port)
                writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\n\r\n".encode())
                await writer.drain()
                line = await asyncio.wait_for(reader.readline(), 60)
                self.writers.append(writer)
                self.statuses.append(int(line.split()[1]) if line.startswith(b"HTTP/1.1 ") else 0)

        await asyncio.gather(*(one(i) for i in range(n)))

    async def close(self) -> None:
        for w in self.writers:
            w.close()
        self.writers.clear()


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle_rss(pid: int, seconds: float = 2.0) -> int:
    time.sleep(seconds)
    return rss_bytes(pid)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--watches", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "data", *API_ONLY).start()
        try:
            assert server.proc is not None
            host, port = server.url.split("//")[1].rsplit(":", 1)
            watches = Watches()

            async def warm_up() -> None:  # the thread pool and its store connections, at full size
                await watches.open(host, int(port), 300, "/api/v1/pods?watch=true&resourceVersion=0")
                await watches.close()

            asyncio.run(warm_up())
            watches.statuses.clear()
            before = settle_rss(server.proc.pid)

            async def run() -> tuple[int, int, float]:
                t = time.monotonic()
                await watches.open(host, int(port), args.watches, "/api/v1/pods?watch=true&resourceVersion=0")
                opened = time.monotonic() - t
                ok = 0
                for _ in range(20):
                    code, _body = await asyncio.to_thread(server.request, "GET", "/api/v1/namespaces/default/pods")
                    ok += code == 200
                after = await asyncio.to_thread(settle_rss, server.proc.pid)  # type: ignore[union-attr]
                cpu0 = cpu_seconds(server.proc.pid)  # type: ignore[union-attr]
                await asyncio.sleep(10)
                idle_cpu[0] = cpu_seconds(server.proc.pid) - cpu0  # type: ignore[union-attr]
                await watches.close()
                return ok, after, opened

            idle_cpu = [0.0]
            ok, after, opened = asyncio.run(run())
            got200 = sum(1 for s in watches.statuses if s == 200)
            print(f"watches: {args.watches} opened in {opened:.1f}s, {got200} answered 200; "
                  f"ordinary requests meanwhile: {ok}/20 succeeded")
            print(f"RSS before {before / 2**20:.1f} MiB, with the watches open {after / 2**20:.1f} MiB: "
                  f"{(after - before) / args.watches / 1024:.1f} KiB per idle watch; "
                  f"server CPU over 10 s with them idle: {idle_cpu[0]:.2f} s")
        finally:
            server.stop_if_running()
    return 0


if __name__ == "__main__":
    sys.exit(main())
