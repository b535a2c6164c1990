"""The load: wrk runs (through `bench/lua`'s scripts, which print the summary line parsed here),
the lists they cycle through, and the medians of a section's repetitions."""

import json
import os
import re
import statistics
import subprocess
import tempfile

from .settings import CONNECTIONS, DURATION, LUA_DIR, WRK_THREADS, log


def wrk(port, script, env_extra, connections=CONNECTIONS, duration=DURATION, timeout_s=None, label="", scheme="http"):
    """One wrk run of `bench/lua/SCRIPT` against 127.0.0.1:`port`, to its end; returns its summary
    (see `parse_wrk`). `env_extra` is the script's settings (`BENCH_LIST`, `BENCH_PREFIX`, ...)."""
    argv = ["wrk", "-t", str(WRK_THREADS), "-c", str(connections), "-d", f"{duration}s", "--latency",
            "-s", os.path.join(LUA_DIR, script)]
    if timeout_s:
        argv += ["--timeout", f"{timeout_s}s"]
    argv.append(f"{scheme}://127.0.0.1:{port}")
    with tempfile.TemporaryDirectory(prefix="wrk-barrier-") as barrier:
        env = dict(os.environ, BENCH_LUA_DIR=LUA_DIR, BENCH_WRK_THREADS=str(WRK_THREADS), BENCH_BARRIER=barrier,
                   **env_extra)
        result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=duration + 300)
    return parse_wrk(result, label)


def parse_wrk(result, label):
    """The `BENCHJSON` summary line of a finished wrk, with requests/s, non-2xx answers and socket
    errors added; raises when there is none."""
    for line in result.stdout.splitlines():
        if line.startswith("BENCHJSON "):
            data = json.loads(line[len("BENCHJSON "):])
            data["rps"] = data["requests"] / (data["duration_us"] / 1e6)
            non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", result.stdout)
            data["non2xx"] = int(non2xx.group(1)) if non2xx else 0
            data["errors"] = sum(data[k] for k in ("err_connect", "err_read", "err_write", "err_timeout"))
            log(f"  wrk {label}: {data['rps']:.0f} req/s, p50 {data['p50_us'] / 1000:.2f} ms, "
                f"p99 {data['p99_us'] / 1000:.2f} ms, non-2xx {data['non2xx']}, socket errors {data['errors']}")
            return data
    raise RuntimeError(f"wrk {label} gave no summary (exit {result.returncode}):\n{result.stdout}\n{result.stderr}")


def start_wrk_background(port, script, env_extra, connections, duration, timeout_s, out_path):
    """A wrk run left running (output into `out_path`, for `parse_wrk` later): the load another
    measurement runs beside."""
    argv = ["wrk", "-t", str(WRK_THREADS), "-c", str(connections), "-d", f"{duration}s", "--latency",
            "--timeout", f"{timeout_s}s", "-s", os.path.join(LUA_DIR, script), f"http://127.0.0.1:{port}"]
    # The barrier directory (see bench/lua/common.lua) lives as long as the run's work directory.
    barrier = tempfile.mkdtemp(prefix="wrk-barrier-", dir=os.path.dirname(out_path))
    env = dict(os.environ, BENCH_LUA_DIR=LUA_DIR, BENCH_WRK_THREADS=str(WRK_THREADS), BENCH_BARRIER=barrier,
               **env_extra)
    out = open(out_path, "w")
    process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
    out.close()
    return process


def median(runs, key):
    """The median of `key` over the runs."""
    return statistics.median(run[key] for run in runs)


def summarize(runs):
    """A section's figures from its repetitions: medians of requests/s and latency, each
    repetition's rate, and the non-2xx answers and socket errors summed; None without runs."""
    if not runs:
        return None
    return {
        "rps": median(runs, "rps"), "p50_ms": median(runs, "p50_us") / 1000, "p99_ms": median(runs, "p99_us") / 1000,
        "reps": [round(run["rps"]) for run in runs], "non2xx": sum(run["non2xx"] for run in runs),
        "errors": sum(run["errors"] for run in runs),
    }


def write_list(path, items):
    """Writes one item a line (a list for `cycle.lua`, dnsperf's input); returns `path`."""
    with open(path, "w") as f:
        for item in items:
            f.write(item)
            f.write("\n")
    return path
