"""End-to-end throughput of ``kubesched serve`` and durability after SIGKILL: the same as
``kubesched bench --serve`` (see :mod:`kubesched.cli.servebench`), kept under benchmarks/
beside the other benchmark entry points.

Run: ``.venv/bin/python benchmarks/serve_bench.py [--nodes 1000 --pods 5000 --clients 16]``.
"""

import sys

from kubesched.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["bench", "--serve", *sys.argv[1:]]))
