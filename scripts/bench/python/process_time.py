"""Runs one command and reports its wall-clock and CPU seconds (from wait4's rusage), exit code and output.

For scripts/bench/validator.ts's whole-process comparison: Node cannot read a child's CPU time, and
on a busy machine CPU seconds say more than wall-clock ones. Prints one JSON line.

Usage: python process_time.py COMMAND [ARG...]
"""

import json
import os
import subprocess
import sys
import tempfile
import time


def main() -> None:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        wall = time.perf_counter()
        child = subprocess.Popen(sys.argv[1:], stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - wall
        out.seek(0)
        err.seek(0)
        print(json.dumps({
            "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime,
            "exit_code": os.waitstatus_to_exitcode(status),
            "stdout": out.read().decode("utf-8", "replace"),
            "stderr": err.read().decode("utf-8", "replace"),
        }))


if __name__ == "__main__":
    main()
