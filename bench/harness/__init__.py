"""The benchmark behind `make bench` (`bench/run.py` is its entry point).

One module per concern, so that a section can be read without the others:

- `settings`: the `BENCH_*` variables and the constants every section shares;
- `processes`, `clients`, `procstat`, `load`, `servers`: the children (started and always
  stopped), the small HTTP/DNS clients, what /proc says about a process, wrk and dnsperf runs
  and their medians, and the servers (unbound, dnss, the slow upstream, httpdnsd, the build);
- one module per section: `hits` ((1)-(3), (8), (10)-(12)), `signed` (9), `misses` (4),
  `slow` (5), `scale` (6), `tls` (7), `redis_tier` (13), `plain_dns` (14, and the dnsperf runner
  and alternation (15) shares), `dot` (15), `policy` (16);
- `driver`: the order in which they run (one hit loop, repetition by repetition);
- `report`, `report_method`, and the parts of their own sections (`report_misses`,
  `report_plaindns` for (14) and (15), `report_policy`): RESULTS.md from the figures the run gathered.

Nothing here talks to anything but 127.0.0.1.
"""
