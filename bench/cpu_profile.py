"""Run ``python -m memlet`` under cProfile timed by process CPU time, not wall time, and write the stats.

    python bench/cpu_profile.py <stats file> server --port 8283

A wall-clock profile on a busy machine charges a function for the time the process waits after a socket write
while Postgres (or another process) runs; CPU time charges it only for its own work. ``harness.bench_server``
uses this when MEMLET_BENCH_PROFILE names a stats file.
"""

import cProfile
import runpy
import sys
import time


def main() -> None:
    out, *args = sys.argv[1:]
    sys.argv = ["memlet", *args]
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    try:
        runpy.run_module("memlet", run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
    finally:
        profiler.disable()
        profiler.dump_stats(out)


if __name__ == "__main__":
    main()
