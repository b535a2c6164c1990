#!/usr/bin/env python3
"""Drives the web console in Debian's headless chromium (chromium-driver, python3-selenium).

Run by Tests/IntegrationTests/ConsoleTests.swift against an httpdnsd whose operations listener
serves the console and whose DNS servers are on loopback. In one browser session: a wrong token
is refused, sign-in, an account created (after the server refused a bad value, its message
shown), "try it" in the v1 and RFC 8484 formats, the lookup seen in the query log (live), the
cache flushed, the charts drawn with the latency figures; a rule put in the policy (after a
refused document), a save with a stale ETag refused (the policy changed through the API
meanwhile) and the policy reloaded, a name explained, "try it" answered by the rule; client
keys, the account edited and deleted, a phone-sized window; then no error in the page's log
beyond the refusals the run asked for. With --screenshots DIR it also saves PNGs of the main
pages (docs/console.md). Every wait polls the page; none sleeps.
Prints one line a step; exits non-zero on the first failure.
"""
import argparse
import json
import os
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait


def by_testid(name):
    return (By.CSS_SELECTOR, f'[data-testid="{name}"]')


class Console:
    def __init__(self, args):
        options = webdriver.ChromeOptions()
        options.binary_location = args.chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1000,760", "--no-first-run", "--disable-extensions"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(args.chromedriver), options=options)
        # A page re-renders a view after each answer: an element found just before may be gone.
        self.wait = WebDriverWait(self.driver, 15, poll_frequency=0.1,
                                  ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))
        self.base = args.url.rstrip("/")
        self.screenshots = args.screenshots

    def find(self, testid):
        return self.wait.until(lambda d: d.find_element(*by_testid(testid)))

    def text_of(self, testid, contains):
        self.wait.until(lambda d: contains in d.find_element(*by_testid(testid)).text,
                        f"{testid} never showed {contains!r}")
        return self.driver.find_element(*by_testid(testid)).text

    def value_of(self, testid, contains):
        self.wait.until(lambda d: contains in d.find_element(*by_testid(testid)).get_attribute("value"),
                        f"{testid} never held {contains!r}")
        return self.driver.find_element(*by_testid(testid)).get_attribute("value")

    def type(self, testid, text):
        element = self.find(testid)
        element.clear()
        element.send_keys(text)

    def set_value(self, testid, text):
        # A textarea's whole content at once (send_keys would type it slowly).
        element = self.find(testid)
        self.driver.execute_script("arguments[0].value = arguments[1];", element, text)

    def click(self, testid):
        self.wait.until(lambda d: d.find_element(*by_testid(testid)).click() or True, f"could not click {testid}")

    def shot(self, name):
        if self.screenshots:
            time.sleep(0.2)  # let the last paint settle; only for the pictures
            self.driver.save_screenshot(os.path.join(self.screenshots, f"console-{name}.png"))


def step(message):
    print(f"ok: {message}", flush=True)


def api(args, method, path, body=None, headers=None):
    """A request of the admin (its token) straight to the API, beside the browser."""
    request = urllib.request.Request(args.url.rstrip("/") + path, method=method, data=body,
                                     headers={"Authorization": f"Bearer {args.token}", **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("ETag"), json.loads(response.read() or b"null")


def canvas_colours(console, testid, colours):
    """Polls until the canvas `testid` has more than 4 pixels of each (r, g, b); their counts."""
    return console.wait.until(lambda d: d.execute_script("""
        const canvas = document.querySelector(`[data-testid="${arguments[0]}"]`);
        if (!canvas || canvas.width === 0) return false;
        const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        const counts = arguments[1].map(() => 0);
        for (let i = 0; i < data.length; i += 4) {
          arguments[1].forEach(([r, g, b], k) => {
            if (Math.abs(data[i] - r) < 8 && Math.abs(data[i + 1] - g) < 8 && Math.abs(data[i + 2] - b) < 8) counts[k]++;
          });
        }
        return counts.every((n) => n > 4) ? counts : false;""", testid, colours), f"{testid} lacks a colour of {colours}")


def run(console, args):
    sign_in_and_create(console, args)
    try_it_and_query_log(console, args)
    cache_and_statistics(console, args)
    policy_and_explain(console, args)
    rule_answers_try_it(console, args)
    keys_and_settings(console, args)
    phone_delete_and_sign_out(console, args)


def sign_in_and_create(console, args):
    d = console.driver
    d.get(console.base + "/console/")
    console.type("login-token", "not-the-token")
    console.click("login-submit")
    console.text_of("login-error", "Unauthorized")
    step("a wrong token is refused with the server's message")
    console.shot("login")

    console.type("login-token", args.token + Keys.ENTER)
    console.text_of("account-list", "default")
    step("signed in with the keyboard (Enter); the account list shows default")

    console.click("account-new")
    console.type("account-id", "shop")
    console.set_value("account-config", '{"maxCacheTTL": 0}')
    console.click("account-save")
    console.text_of("account-error", "maxCacheTTL: must be between")
    step("a bad value is refused with the server's validation message")
    config = {"upstreams": [args.upstream], "localDNSServers": [args.localdns], "queryLog": {"enabled": True}}
    console.set_value("account-config", json.dumps(config, indent=2))
    console.click("account-save")
    console.wait.until(lambda _: d.current_url.endswith("#/account/shop/tryit"))
    step("account shop created")


def try_it_and_query_log(console, args):
    d = console.driver
    console.type("tryit-host", args.host)
    console.click("tryit-submit")
    result = console.text_of("tryit-result", "HTTP 200")
    assert args.address in result and "source: upstream" in result, result
    console.click("tryit-submit")
    console.wait.until(lambda _: "source: cache" in d.find_element(*by_testid("tryit-result")).text)
    Select(console.find("tryit-format")).select_by_value("rfc8484")
    console.click("tryit-submit")
    result = console.text_of("tryit-result", "rcode: NOERROR")
    assert args.address in result and "HTTP 200" in result, result
    step("try it answered from the upstream, then from the cache, then over RFC 8484")
    Select(console.find("tryit-format")).select_by_value("v1")
    console.click("tryit-submit")
    console.text_of("tryit-result", "source: cache")
    console.shot("tryit")

    console.click("tab-querylog")
    console.click("querylog-live")
    # The log is written by its own thread: the live table polls until the four lookups are in.
    console.wait.until(lambda _: len(d.find_elements(By.CSS_SELECTOR, '[data-testid="querylog-table"] tbody tr')) >= 4,
                       "the lookups never all reached the query log table")
    rows = [row.text for row in d.find_elements(By.CSS_SELECTOR, '[data-testid="querylog-table"] tbody tr')]
    assert all(args.host in row for row in rows), rows
    assert any(" rfc8484 " in row for row in rows) and any(" upstream " in row for row in rows), rows
    assert sum(" cache " in row for row in rows) >= 2, rows
    step(f"the query log shows the lookups ({len(rows)} rows, live)")
    console.shot("querylog")


def cache_and_statistics(console, args):
    d = console.driver
    console.click("tab-cache")
    console.text_of("cache-table", args.host)
    console.shot("cache")
    console.click("cache-flush")
    console.click("cache-flush-confirm")
    console.text_of("cache-status", "Flushed")
    console.wait.until(lambda _: not d.find_elements(By.CSS_SELECTOR, '[data-testid="cache-table"] tbody tr'))
    step("the cache was flushed and its table is empty")

    console.click("tab-stats")
    console.text_of("stats-tiles", "Cache answers")
    caption = console.text_of("stats-caption", "lookups in the last hour")
    assert "0 lookups" not in caption, caption
    # The last hour's bars (#1f5fbf) and hit ratio (#157347), drawn from GET /stats/recent.
    drawn = canvas_colours(console, "stats-chart", [[31, 95, 191], [21, 115, 71]])
    assert drawn[0] > 50, drawn
    step(f"the chart is drawn: {caption.split(';')[-1].strip()} ({drawn[0]} bar pixels)")
    d.execute_script("arguments[0].scrollIntoView()", console.find("stats-chart"))
    console.shot("stats")
    # The try-it lookups of this minute, timed: their percentiles in the caption and the chart
    # (p50 #1f5fbf, p99 #b42318).
    latency = console.text_of("latency-caption", "p99")
    assert " ms" in latency and "requests" in latency and "No request timed" not in latency, latency
    canvas_colours(console, "latency-chart", [[31, 95, 191], [180, 35, 24]])
    step(f"the latency of the lookups is shown: {latency.split(' p50 (blue)')[0]}")
    d.execute_script("arguments[0].scrollIntoView()", console.find("latency-chart"))
    console.shot("latency")


def policy_and_explain(console, args):
    d = console.driver
    console.click("tab-policy")
    console.value_of("policy-document", "{}")
    first_tag = console.text_of("policy-etag", '"')
    bad = {"rules": [{"name": "canary", "hosts": [args.host], "answer": {}}]}
    console.set_value("policy-document", json.dumps(bad, indent=2))
    console.click("policy-save")
    console.text_of("policy-status", "InvalidParameter")
    step(f"a bad policy is refused with the server's message: {console.find('policy-status').text}")
    rule = {"name": "canary", "hosts": [args.host], "when": {"params": {"appver": "2.*"}},
            "answer": {"ipv4": [args.rule_address], "ttl": 60}, "extra": "canary"}
    console.set_value("policy-document", json.dumps({"rules": [rule]}, indent=2))
    console.click("policy-save")
    console.text_of("policy-status", "Saved")
    console.value_of("policy-document", args.rule_address)
    console.wait.until(lambda _: d.find_element(*by_testid("policy-etag")).text not in ("", first_tag), "the ETag is the old one")
    step("a rule was put in the policy; the new ETag is shown")

    # Someone else changes the policy meanwhile: the page's copy is stale.
    tag, document = api(args, "GET", "/v1/shop/policy")
    document["hostOverrides"] = [{"hosts": [args.host], "ttl": 30}]
    api(args, "PUT", "/v1/shop/policy", json.dumps(document).encode(), {"If-Match": tag})
    mine = {"rules": [dict(rule, answer={"ipv4": [args.rule_address], "ttl": 120})]}
    console.set_value("policy-document", json.dumps(mine, indent=2))
    console.click("policy-save")
    console.text_of("policy-status", "412")
    assert '"ttl": 120' in console.find("policy-document").get_attribute("value"), "the refused text was not kept"
    console.click("policy-reload")
    console.value_of("policy-document", '"hostOverrides"')
    step("a save with a stale ETag is refused (412) and Reload shows the other change")

    console.type("explain-host", args.host)
    console.set_value("explain-params", "appver=1.0")
    console.click("explain-submit")
    result = console.text_of("explain-result", "matches none")
    assert "upstream" in result and "canary" in result, result
    console.set_value("explain-params", "appver=2.1")
    console.click("explain-submit")
    result = console.text_of("explain-result", args.rule_address)
    assert "matched" in result and "rule canary" in result and '"ttl":30' in result, result
    step("explain: appver=1.0 fails the rule's condition, appver=2.1 is answered by it")
    d.execute_script("arguments[0].scrollIntoView()", console.find("explain-result"))
    console.shot("policy")


def rule_answers_try_it(console, args):
    d = console.driver
    console.click("tab-tryit")
    console.type("tryit-host", args.host)
    console.set_value("tryit-params", "appver=2.1")
    console.click("tryit-submit")
    result = console.text_of("tryit-result", "source: rule")
    assert "extra: canary" in result and args.rule_address in result and "sdns-appver=2.1" in result, result
    Select(console.find("tryit-format")).select_by_value("emas")
    console.click("tryit-submit")
    console.wait.until(lambda _: "/shop/d?" in d.find_element(*by_testid("tryit-result")).text, "no EMAS answer")
    result = console.text_of("tryit-result", "extra: canary")
    assert args.rule_address in result, result
    step("try it with sdns-appver=2.1: source rule and its extra (v1), the rule's answer over EMAS")


def keys_and_settings(console, args):
    d = console.driver
    console.click("tab-settings")
    console.value_of("account-config", '"maxCacheTTL": 3600')
    console.type("key-id", "app1")
    console.click("key-add")
    secret = console.text_of("key-secret", "").strip()
    console.text_of("key-list", "app1")
    assert len(secret) == 43, secret
    console.click("key-rotate-app1")
    console.wait.until(lambda _: d.find_element(*by_testid("key-secret")).text not in ("", secret), "no new secret")
    rotated = d.find_element(*by_testid("key-secret")).text
    config = console.find("account-config").get_attribute("value")
    assert secret not in config and rotated not in config, "a secret is in the configuration shown"
    step("a client key added and rotated, each secret shown once")
    console.shot("keys")
    console.click("key-remove-app1")
    console.wait.until(lambda _: "app1" not in d.find_element(*by_testid("key-list")).text, "the key was not removed")
    edited = json.loads(console.find("account-config").get_attribute("value"))
    edited["maxCacheTTL"] = 600
    console.set_value("account-config", json.dumps(edited, indent=2))
    console.click("account-save")
    console.text_of("account-notice", "Saved")
    console.value_of("account-config", '"maxCacheTTL": 600')
    step("the key removed; the account edited")


def phone_delete_and_sign_out(console, args):
    d = console.driver
    d.get(console.base + "/console/#/accounts")
    console.text_of("account-list", "shop")
    step("a reloaded page keeps the session")
    console.shot("accounts")

    d.set_window_size(390, 760)
    console.click("nav-accounts")
    console.text_of("account-list", "shop")
    width = d.execute_script("return document.documentElement.scrollWidth")
    assert width <= 400, f"the page is {width} px wide on a 390 px screen"
    console.shot("phone")
    # Every page of an account too, the widest (the policy's document and explain table) included.
    for tab, testid in (("stats", "latency-caption"), ("cache", "cache-flush"), ("querylog", "querylog-table"),
                        ("tryit", "tryit-host"), ("policy", "policy-document"), ("settings", "key-add")):
        d.get(f"{console.base}/console/#/account/shop/{tab}")
        console.find(testid)
        width = d.execute_script("return document.documentElement.scrollWidth")
        assert width <= 400, f"the {tab} page is {width} px wide on a 390 px screen"
    step("readable on a phone-sized screen (no horizontal scroll of any page)")

    console.click("nav-accounts")
    console.text_of("account-list", "shop")

    console.click("account-delete-shop")
    console.click("confirm-delete")
    console.wait.until(lambda _: "shop" not in d.find_element(*by_testid("account-list")).text, "shop was not deleted")
    step("account shop deleted after a confirmation")

    console.click("logout")
    console.find("login-token")
    step("signed out")

    # Refusals this run caused on purpose: the wrong token, the bad account value, the bad
    # policy and the stale save.
    expected = ("/console/login - Failed to load resource: the server responded with a status of 401",
                "/v1/accounts/shop - Failed to load resource: the server responded with a status of 400",
                "/v1/shop/policy - Failed to load resource: the server responded with a status of 400",
                "/v1/shop/policy - Failed to load resource: the server responded with a status of 412")
    errors = [e for e in d.get_log("browser")
              if e["level"] == "SEVERE" and not any(marker in e["message"] for marker in expected)]
    assert not errors, f"the page logged errors: {errors}"
    step("no error in the page's log")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="the listener, e.g. http://127.0.0.1:9090")
    parser.add_argument("--token", required=True)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--localdns", required=True)
    parser.add_argument("--host", default="www.example.test")
    parser.add_argument("--address", default="127.0.0.11")
    parser.add_argument("--rule-address", default="192.0.2.77")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--screenshots")
    args = parser.parse_args()
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    console = Console(args)
    try:
        run(console, args)
    except Exception as error:  # noqa: BLE001 - the report is the point
        print(f"FAILED: {type(error).__name__}: {error}", flush=True)
        print(f"url: {console.driver.current_url}", flush=True)
        for entry in console.driver.get_log("browser"):
            print(f"browser log: {entry}", flush=True)
        return 1
    finally:
        console.driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
