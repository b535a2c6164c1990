#!/usr/bin/env python3
"""Checks deploy/monitoring against a real scrape of httpdnsd (used by IntegrationTests/MonitoringTests).

  monitoring_check.py --scrape FILE [--ops 127.0.0.1:PORT]

- compose.yaml: the four services, ports published on 127.0.0.1 only, every mounted file present,
  Prometheus scraping httpdnsd's ops listener;
- Grafana provisioning and the dashboard JSON: structure, and every metric name in a panel's
  PromQL exposed by the scrape (histograms by their _bucket/_sum/_count);
- alerts.yml: the same name check; `promtool check config` (loads the rules), `promtool test rules`,
  `promtool check metrics` on the scrape;
- with --ops: Debian's prometheus, on 127.0.0.1 only, scrapes that loopback address with the
  deploy configuration (target rewritten) until the target is up and the rules are loaded.
Prints what it checked; exits 1 with the problems otherwise.
"""
import argparse, json, os, re, shutil, socket, subprocess, sys, tempfile, time, urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MON = os.path.join(ROOT, "deploy", "monitoring")
# Metrics other components add (named here by agreement, not yet in every build's scrape).
PENDING = {"httpdns_store_healthy"}
# Prometheus' own series, not the service's.
PROMETHEUS_OWN = {"up"}

problems = []


def problem(text):
    problems.append(text)


def exposed_names(scrape):
    names, histograms = set(), set()
    for line in scrape.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            names.add(name)
            if kind == "histogram":
                histograms.add(name)
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, 1)[0])
    for name in histograms:
        names.update({name + "_bucket", name + "_sum", name + "_count"})
    return names


def metric_names(expr):
    # Label matchers and strings hold no metric names.
    bare = re.sub(r"\{[^}]*\}", "", re.sub(r'"[^"]*"', '""', expr))
    return set(re.findall(r"\b(?:httpdns|process)_[a-z0-9_]+\b", bare)) | ({"up"} & set(re.findall(r"\bup\b", bare)))


def check_names(where, expr, exposed):
    for name in metric_names(expr):
        if name not in exposed and name not in PENDING and name not in PROMETHEUS_OWN:
            problem(f"{where}: {name} is not in the scrape")
    if not metric_names(expr):
        problem(f"{where}: no httpdnsd metric in {expr!r}")


def check_compose():
    compose = yaml.safe_load(open(os.path.join(MON, "compose.yaml")))
    services = compose.get("services", {})
    for name in ["httpdnsd", "unbound", "prometheus", "grafana"]:
        if name not in services:
            problem(f"compose.yaml: no service {name}")
    for name, service in services.items():
        if not (service.get("image") or service.get("build")):
            problem(f"compose.yaml: {name} has neither image nor build")
        for port in service.get("ports", []):
            if not str(port).startswith("127.0.0.1:"):
                problem(f"compose.yaml: {name} publishes {port} beyond loopback")
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                if not os.path.exists(os.path.join(MON, source)):
                    problem(f"compose.yaml: {name} mounts missing {source}")
            elif source not in (compose.get("volumes") or {}):
                problem(f"compose.yaml: {name} mounts undeclared volume {source}")
        for dependency in service.get("depends_on", []):
            if dependency not in services:
                problem(f"compose.yaml: {name} depends on unknown {dependency}")
    build = services.get("httpdnsd", {}).get("build", {})
    if build and not os.path.exists(os.path.join(MON, build["context"], build.get("dockerfile", "Dockerfile"))):
        problem("compose.yaml: httpdnsd's Dockerfile is missing")
    env = services.get("httpdnsd", {}).get("environment", {})
    ops_port = env.get("HTTPDNS_OPS_LISTEN", "").rsplit(":", 1)[-1]
    prometheus = yaml.safe_load(open(os.path.join(MON, "prometheus.yml")))
    targets = [t for job in prometheus["scrape_configs"] for c in job.get("static_configs", []) for t in c["targets"]]
    if targets != [f"httpdnsd:{ops_port}"]:
        problem(f"prometheus.yml scrapes {targets}, not httpdnsd's ops listener :{ops_port}")
    return prometheus


def check_grafana(exposed):
    datasource = yaml.safe_load(open(os.path.join(MON, "grafana/provisioning/datasources/prometheus.yml")))["datasources"][0]
    provider = yaml.safe_load(open(os.path.join(MON, "grafana/provisioning/dashboards/httpdnsd.yml")))["providers"][0]
    if provider["options"]["path"] != "/var/lib/grafana/dashboards":
        problem("dashboard provider path is not where compose.yaml mounts the dashboards")
    dashboard = json.load(open(os.path.join(MON, "grafana/dashboards/httpdnsd.json")))
    for key in ["uid", "title", "panels", "schemaVersion"]:
        if key not in dashboard:
            problem(f"dashboard: no {key}")
    ids = [p.get("id") for p in dashboard["panels"]]
    if len(set(ids)) != len(ids):
        problem("dashboard: panel ids repeat")
    count = 0
    for panel in dashboard["panels"]:
        where = f"panel {panel.get('title')!r}"
        grid = panel.get("gridPos", {})
        if not all(isinstance(grid.get(k), int) for k in "hwxy") or grid["x"] + grid["w"] > 24:
            problem(f"{where}: bad gridPos {grid}")
        if panel.get("datasource", {}).get("uid") != datasource["uid"]:
            problem(f"{where}: datasource is not the provisioned {datasource['uid']}")
        refs = [t.get("refId") for t in panel.get("targets", [])]
        if not refs or len(set(refs)) != len(refs):
            problem(f"{where}: targets missing or refIds repeat")
        for target in panel.get("targets", []):
            check_names(where, target["expr"], exposed)
            count += 1
    for variable in dashboard.get("templating", {}).get("list", []):
        check_names(f"variable {variable['name']}", variable["definition"], exposed)
    print(f"dashboard: {len(ids)} panels, {count} queries, every metric name in the scrape")


def check_alerts(exposed):
    rules = yaml.safe_load(open(os.path.join(MON, "alerts.yml")))
    count = 0
    for group in rules["groups"]:
        for rule in group["rules"]:
            check_names(f"alert {rule['alert']}", rule["expr"], exposed)
            count += 1
    print(f"alerts: {count} rules, every metric name in the scrape (pending elsewhere: {', '.join(sorted(PENDING))})")


def run(command, stdin=None):
    result = subprocess.run(command, input=stdin, capture_output=True, text=True, cwd=MON, timeout=120)
    if result.returncode != 0:
        problem(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    else:
        print(f"{' '.join(command)}: ok")
    return result


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def run_prometheus(config, ops):
    host, _ = ops.rsplit(":", 1)
    if host != "127.0.0.1":
        problem(f"--ops {ops} is not on loopback")
        return
    binary = shutil.which("prometheus")
    if not binary:
        problem("prometheus is not installed (Debian package prometheus)")
        return
    work = tempfile.mkdtemp(prefix="prometheus-check-")
    config = json.loads(json.dumps(config))
    config["global"]["scrape_interval"] = "1s"
    config["global"]["evaluation_interval"] = "1s"
    config["rule_files"] = [os.path.join(MON, name) for name in config["rule_files"]]
    for job in config["scrape_configs"]:
        for static in job["static_configs"]:
            static["targets"] = [ops]
    path = os.path.join(work, "prometheus.yml")
    with open(path, "w") as file:
        yaml.safe_dump(config, file)
    port = free_port()
    log = open(os.path.join(work, "log"), "w")
    process = subprocess.Popen(
        [binary, f"--config.file={path}", f"--storage.tsdb.path={work}/data", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        deadline = time.time() + 90
        up = None
        while time.time() < deadline and process.poll() is None:
            try:
                targets = get_json(f"{base}/targets")["data"]["activeTargets"]
                up = [t for t in targets if t["health"] == "up"]
                if up:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        if not up:
            problem(f"prometheus never saw {ops} up: {open(os.path.join(work, 'log')).read()[-2000:]}")
            return
        series = []
        while time.time() < deadline and not series:
            series = get_json(f"{base}/query?query=httpdns_build_info")["data"]["result"]
            time.sleep(0.5)
        rules = [r for g in get_json(f"{base}/rules")["data"]["groups"] for r in g["rules"]]
        if not series:
            problem("prometheus scraped no httpdns_build_info")
        if any(r.get("health") == "err" for r in rules) or not rules:
            problem(f"prometheus rules not healthy: {rules}")
        print(f"prometheus {binary}: scraped {ops} (up), httpdns_build_info {series[0]['metric'].get('version') if series else '?'}, {len(rules)} rules loaded")
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scrape", required=True)
    parser.add_argument("--ops")
    args = parser.parse_args()
    scrape = open(args.scrape).read()
    exposed = exposed_names(scrape)
    config = check_compose()
    check_grafana(exposed)
    check_alerts(exposed)
    run(["promtool", "check", "config", "prometheus.yml"])
    run(["promtool", "test", "rules", "alerts.test.yml"])
    result = run(["promtool", "check", "metrics"], stdin=scrape)
    if result.returncode == 0 and (result.stdout.strip() or result.stderr.strip()):
        problem(f"promtool check metrics warns: {result.stdout}{result.stderr}")
    if args.ops:
        run_prometheus(config, args.ops)
    if problems:
        print("PROBLEMS:\n" + "\n".join(problems))
        sys.exit(1)
    print("monitoring: ok")


if __name__ == "__main__":
    main()
