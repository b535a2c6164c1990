#!/usr/bin/env python3
"""httpdnsd benchmark: builds, starts everything on loopback, measures, stops everything,
prints a table with ratios and writes bench/RESULTS.md.

Run it with `make bench` (which installs what is missing first); `--help` prints this text.
The code is the package `bench/harness/` (one module per section, the report writer apart).
Environment overrides for quick runs (the defaults are a full run's):

  BENCH_DURATION=10      seconds per measurement
  BENCH_REPS=3           repetitions (medians are reported)
  BENCH_CONNECTIONS=64   wrk connections
  BENCH_WRK_THREADS=2    wrk threads
  BENCH_NAMES=10000      warmed names for the hit measurements
  BENCH_SCALE=1000000    cached entries for section 6 (BENCH_SCALE_MID=100000 is the first stop)
  BENCH_SLOW_MS=500      added upstream delay in section 5
  BENCH_SLOW_INFLIGHT=200  misses kept in flight in section 5
  BENCH_SECTIONS=1,2,...,16  which sections to run (1-3 run with any of 5-13, in one loop; 4, 14 (plain DNS
                         against unbound), 15 (DoT against unbound's DoT) and 16 (hits with 1000 rules and a
                         domain list against none) alone run without them); a run of some sections only writes
                         its report to bench/out/RESULTS.md (bench/RESULTS.md records whole runs)
  BENCH_REDIS_NAMES=2000 fresh names per miss measurement of section 13 (Redis)
  BENCH_MISS_PRELOAD=40000  never-asked names preloaded in each repetition of section 4 (0: none)
  BENCH_HTTPDNSD_BIN=... use this binary instead of building
  BENCH_SCRATCH=.build-bench  scratch path of the release build
  BENCH_WORK=/tmp/httpdnsd-bench-PID  working directory (configs, logs, databases)
  BENCH_RESULTS=bench/RESULTS.md      where the report goes (default: see BENCH_SECTIONS)
  BENCH_KEEP_WORK=1      keep the working directory afterwards
  BENCH_HISTOGRAMS=0     every httpdnsd with metricsHistograms false (request durations not recorded),
                         to compare the hit sections with and without them
  BENCH_PROFILE=FILE     after the hit loop, one more hit run under `perf record -g` into FILE
                         (not counted in the figures; read it with `perf report -i FILE`)

Nothing here talks to anything but 127.0.0.1: unbound refuses every name outside bench.test,
httpdnsd's fallback to the system resolver is off.
"""

import sys

if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__.strip())
        sys.exit(0)
    # Imported only now: the settings are read from the environment at import, and `--help`
    # must work whatever the environment holds.
    from harness.driver import main

    main()
