// httpdnsd console: the pages of one account (try it, cache, query log, statistics), the chart
// and the router. Uses the helpers of console.js.
"use strict";

// ---- try it ----

function base64url(bytes) {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// An RFC 8484 question: id 0 (RFC 8484 section 4.1), recursion desired.
function dnsQuestion(name, type) {
  const bytes = [0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
  for (const label of name.replace(/\.$/, "").split(".")) {
    const encoded = new TextEncoder().encode(label);
    bytes.push(encoded.length, ...encoded);
  }
  bytes.push(0, type >> 8, type & 255, 0, 1);
  return Uint8Array.from(bytes);
}

function readName(bytes, offset) {
  const labels = [];
  let end = -1;
  for (let hops = 0; hops < 64; hops++) {
    const length = bytes[offset];
    if ((length & 0xc0) === 0xc0) {
      if (end < 0) end = offset + 2;
      offset = ((length & 0x3f) << 8) | bytes[offset + 1];
      continue;
    }
    if (length === 0) return { name: labels.join(".") + ".", next: end < 0 ? offset + 1 : end };
    labels.push(new TextDecoder().decode(bytes.slice(offset + 1, offset + 1 + length)));
    offset += 1 + length;
  }
  throw new Error("name compression loop");
}

const rcodes = ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"];

// The answer section of a DNS message, for display.
function dnsAnswer(bytes) {
  const view = new DataView(bytes.buffer);
  const rcode = bytes[3] & 15;
  let offset = readName(bytes, 12).next + 4;
  const answers = [];
  for (let index = 0; index < view.getUint16(6); index++) {
    const name = readName(bytes, offset);
    offset = name.next;
    const type = view.getUint16(offset), ttl = view.getUint32(offset + 4), length = view.getUint16(offset + 8);
    const data = bytes.slice(offset + 10, offset + 10 + length);
    let text;
    if (type === 1) text = Array.from(data).join(".");
    else if (type === 28) text = Array.from({ length: 8 }, (_, i) => ((data[2 * i] << 8) | data[2 * i + 1]).toString(16)).join(":");
    else if (type === 5) text = readName(bytes, offset + 10).name;
    else text = `(${length} bytes)`;
    answers.push({ name: name.name, type: { 1: "A", 28: "AAAA", 5: "CNAME" }[type] || type, ttl, data: text });
    offset += 10 + length;
  }
  return { rcode: rcodes[rcode] || rcode, answers };
}

function tryItRequest(id, format, host, type, client) {
  const q = (name, value) => (value ? `&${name}=${enc(value)}` : "");
  const single = type === "AAAA" ? "AAAA" : "A";
  switch (format) {
    case "emas": return `/${enc(id)}/d?host=${enc(host)}` + q("query", { A: "4", AAAA: "6", both: "4,6" }[type]) + q("ip", client);
    case "json": return `/resolve?name=${enc(host)}&type=${single}&uid=${enc(id)}` + q("edns_client_subnet", client);
    case "rfc8484": return `/v1/${enc(id)}/dns-query?dns=${base64url(dnsQuestion(host, single === "A" ? 1 : 28))}` + q("client_ip", client);
    default: return `/v1/${enc(id)}/resolve?host=${enc(host)}&type=${type}` + q("client_ip", client);
  }
}

function tryItView(id, container) {
  const host = h("input", { required: true, autocomplete: "off", testid: "tryit-host", placeholder: "www.example.com" });
  const type = select("tryit-type", "tryit-type", ["A", "AAAA", "both", "auto"], "A");
  const client = h("input", { autocomplete: "off", testid: "tryit-client", placeholder: "optional, e.g. 192.0.2.1" });
  const format = select("tryit-format", "tryit-format", ["v1", "emas", "json", "rfc8484"], "v1");
  const result = h("pre", { class: "result", testid: "tryit-result", "aria-live": "polite" });
  const form = h("form", {},
    h("div", { class: "row" }, field("Host", "tryit-host", host), field("Type", "tryit-type", type),
      field("Client address", "tryit-client", client), field("Wire format", "tryit-format", format)),
    h("div", { class: "actions" }, h("button", { type: "submit", testid: "tryit-submit", text: "Resolve" })));
  container.append(h("section", { class: "card" }, h("h2", { text: "Try it" }),
    h("p", { class: "muted", text: "Asks this account as a client would (json and rfc8484 ask A unless AAAA is chosen)." }),
    form, result));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    result.textContent = "…";
    const path = tryItRequest(id, format.value, host.value.trim(), type.value, client.value.trim());
    const started = performance.now();
    const headers = { "X-CSRF-Token": session.csrf || "" };
    if (format.value === "rfc8484") headers.Accept = "application/dns-message";
    const response = await fetch(path, { headers, credentials: "same-origin", cache: "no-store" });
    const elapsed = Math.round(performance.now() - started);
    const lines = [`GET ${path}`, `HTTP ${response.status} in ${elapsed} ms`];
    let body;
    if ((response.headers.get("Content-Type") || "").startsWith("application/dns-message")) {
      body = dnsAnswer(new Uint8Array(await response.arrayBuffer()));
      lines.push(`rcode: ${body.rcode}`);
    } else {
      const text = await response.text();
      try { body = JSON.parse(text); } catch (_) { body = text; }
    }
    const source = body && !Array.isArray(body) && body.source;
    lines.push(`source: ${source || "(not in this format's answer: see the query log)"}`, "", JSON.stringify(body, null, 2));
    result.textContent = lines.join("\n");
  });
  host.focus();
}

// ---- cache ----

function cacheView(id, container) {
  const base = `/v1/${enc(id)}/cache`;
  const status = h("p", { class: "notice", role: "status", testid: "cache-status" });
  const error = h("p", { class: "error", role: "alert" });
  const lookupHost = h("input", { required: true, autocomplete: "off", testid: "cache-host" });
  const lookupType = select("cache-type", "cache-type", ["A", "AAAA"], "A");
  const expired = h("input", { type: "checkbox", id: "cache-expired" });
  const lookupResult = h("pre", { class: "result", testid: "cache-lookup-result", hidden: true });
  const filter = h("input", { type: "search", autocomplete: "off", testid: "cache-filter", placeholder: "host contains" });
  const body = h("tbody");
  const more = h("button", { type: "button", class: "secondary", hidden: true, text: "Load more" });
  const flush = h("button", { type: "button", class: "danger", testid: "cache-flush", text: "Flush cache" });
  const refresh = h("button", { type: "button", class: "secondary", testid: "cache-refresh", text: "Refresh all" });
  const confirmBox = h("span", {});
  let entries = [];
  let cursor = null;

  const lookup = h("form", { class: "row" }, field("Host", "cache-host", lookupHost), field("Type", "cache-type", lookupType),
    h("label", { class: "check", for: "cache-expired" }, expired, "expired too"),
    h("button", { type: "submit", text: "Look up" }));
  container.append(
    h("section", { class: "card" }, h("h2", { text: "Look up" }), lookup, lookupResult),
    h("section", { class: "card" }, h("h2", { text: "Cached answers" }),
      h("div", { class: "actions" }, refresh, flush, confirmBox), status, error,
      field("Search the loaded entries", "cache-filter", filter),
      h("div", { class: "table-wrap" }, h("table", { testid: "cache-table" },
        h("thead", {}, h("tr", {}, ["Host", "Type", "Addresses", "TTL", "Source", ""].map((t) => h("th", { text: t })))), body)),
      more));

  function render() {
    const needle = filter.value.trim().toLowerCase();
    body.replaceChildren(...entries.filter((e) => !needle || e.host.includes(needle)).map((entry) => {
      const remove = h("button", { type: "button", class: "secondary", text: "Delete" });
      remove.addEventListener("click", async () => {
        const result = await api("DELETE", `${base}?host=${enc(entry.host)}`);
        if (!result.ok) { error.textContent = problem(result); return; }
        status.textContent = `Deleted ${result.json.deleted} entries of ${entry.host}.`;
        load(false);
      });
      return h("tr", {}, h("td", { text: entry.host }), h("td", { text: entry.type }),
        h("td", { text: entry.nxdomain ? "NXDOMAIN" : entry.ips.join(", ") }),
        h("td", { class: "num", text: entry.expired ? "expired" : String(entry.ttl) }), h("td", { text: entry.source }),
        h("td", {}, remove));
    }));
  }

  async function load(append) {
    error.textContent = "";
    const result = await api("GET", `${base}?limit=200` + (append && cursor ? `&cursor=${enc(cursor)}` : ""));
    if (!result.ok) { error.textContent = problem(result); return; }
    entries = append ? entries.concat(result.json.entries) : result.json.entries;
    cursor = result.json.next_cursor;
    more.hidden = !cursor;
    render();
  }

  lookup.addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = await api("GET", `${base}?host=${enc(lookupHost.value.trim())}&type=${lookupType.value}` + (expired.checked ? "&expired=1" : ""));
    lookupResult.hidden = false;
    lookupResult.textContent = result.ok ? JSON.stringify(result.json, null, 2) : problem(result);
  });
  filter.addEventListener("input", render);
  more.addEventListener("click", () => load(true));
  refresh.addEventListener("click", async () => {
    const result = await api("POST", `${base}/refresh`);
    status.textContent = result.ok ? `Refreshing ${result.json.refreshing} entries in the background.` : "";
    error.textContent = result.ok ? "" : problem(result);
  });
  flush.addEventListener("click", () => {
    const yes = h("button", { type: "button", class: "danger", testid: "cache-flush-confirm", text: "Flush every entry" });
    const no = h("button", { type: "button", class: "secondary", text: "Cancel" });
    confirmBox.replaceChildren(" ", yes, " ", no);
    no.addEventListener("click", () => confirmBox.replaceChildren());
    yes.addEventListener("click", async () => {
      confirmBox.replaceChildren();
      const result = await api("DELETE", base);
      if (!result.ok) { error.textContent = problem(result); return; }
      status.textContent = `Flushed: ${result.json.deleted} entries deleted.`;
      load(false);
    });
    yes.focus();
  });
  load(false);
}

// ---- query log ----

function queryLogView(id, container) {
  const host = h("input", { autocomplete: "off", testid: "querylog-host" });
  const status = h("input", { inputmode: "numeric", autocomplete: "off", testid: "querylog-status", placeholder: "e.g. 200" });
  const since = select("querylog-since", "querylog-since", ["any time", "5 minutes", "1 hour", "24 hours"], "any time");
  const live = h("input", { type: "checkbox", id: "querylog-live", testid: "querylog-live" });
  const error = h("p", { class: "error", role: "alert" });
  const note = h("p", { class: "muted" });
  const body = h("tbody");
  const more = h("button", { type: "button", class: "secondary", hidden: true, text: "Older entries" });
  const columns = ["Time", "Host", "Type", "Format", "Client", "Source", "Status", "RCODE", "µs", "Request id"];
  const filters = h("form", { class: "row" }, field("Host", "querylog-host", host), field("Status", "querylog-status", status),
    field("Since", "querylog-since", since), h("button", { type: "submit", text: "Apply" }),
    h("label", { class: "check", for: "querylog-live" }, live, "Live"));
  container.append(h("section", { class: "card" }, h("h2", { text: "Query log" }), note, filters, error,
    h("div", { class: "table-wrap" }, h("table", { testid: "querylog-table" },
      h("thead", {}, h("tr", {}, columns.map((t) => h("th", { text: t })))), body)), more));
  let cursor = null;
  let newest = 0;
  const seen = new Set();

  function query() {
    const seconds = { "5 minutes": 300, "1 hour": 3600, "24 hours": 86400 }[since.value];
    let q = "";
    if (host.value.trim()) q += `&host=${enc(host.value.trim())}`;
    if (status.value.trim()) q += `&status=${enc(status.value.trim())}`;
    if (seconds) q += `&since=${Math.floor(Date.now() / 1000) - seconds}`;
    return q;
  }

  function row(entry) {
    const when = new Date(entry.time * 1000).toISOString().replace("T", " ").replace("Z", "");
    return h("tr", {}, [when, entry.host, entry.type, entry.format, entry.client, entry.source, String(entry.status), entry.rcode,
      String(entry.duration_us), entry.request_id].map((text, i) => h("td", { class: i === 8 ? "num" : null, text })));
  }

  // Entries not shown yet (the `since` of a live poll repeats those of its second).
  function fresh(entries) {
    return entries.filter((entry) => {
      const key = JSON.stringify(entry);
      if (seen.has(key)) return false;
      seen.add(key);
      newest = Math.max(newest, entry.time);
      return true;
    });
  }

  async function load(append) {
    error.textContent = "";
    if (!append) { body.replaceChildren(); seen.clear(); newest = 0; }
    const result = await api("GET", `/v1/${enc(id)}/querylog?limit=100${query()}` + (append && cursor ? `&cursor=${enc(cursor)}` : ""));
    if (!result.ok) { error.textContent = problem(result); return; }
    body.append(...fresh(result.json.entries).map(row));
    cursor = result.json.next_cursor;
    more.hidden = !cursor;
  }

  async function poll() {
    const since = newest ? `&since=${Math.floor(newest)}` : "";
    const result = await api("GET", `/v1/${enc(id)}/querylog?limit=100${query().replace(/&since=\d+/, "")}${since}`);
    if (!result.ok) { error.textContent = problem(result); return; }
    const rows = fresh(result.json.entries).map(row);
    body.prepend(...rows);
    while (body.rows.length > 1000) body.lastElementChild.remove();
  }

  let liveTimer = null;
  live.addEventListener("change", () => {
    if (liveTimer) { clearInterval(liveTimer); timers.delete(liveTimer); liveTimer = null; }
    if (live.checked) liveTimer = every(2000, poll);
  });
  filters.addEventListener("submit", (event) => { event.preventDefault(); load(false); });
  more.addEventListener("click", () => load(true));
  api("GET", `/v1/accounts/${enc(id)}`).then((result) => {
    const on = result.ok && result.json.config.queryLog && result.json.config.queryLog.enabled;
    note.textContent = on ? "" : "The query log is off for this account: turn on queryLog in Settings.";
  });
  load(false);
}

// ---- statistics ----

function statsView(id, container) {
  const tiles = h("div", { class: "tiles", testid: "stats-tiles" });
  const error = h("p", { class: "error", role: "alert" });
  const canvas = h("canvas", { testid: "stats-chart", role: "img", "aria-label": "Lookups per second, hit ratio and errors over the last hour" });
  const caption = h("p", { class: "muted", testid: "stats-caption" });
  container.append(h("section", { class: "card" }, h("h2", { text: "Totals" }), tiles, error),
    h("section", { class: "card" }, h("h2", { text: "Last hour" }), canvas, caption));
  const tile = (label, value) => h("div", { class: "tile" }, h("span", { class: "muted", text: label }), h("b", { text: value }));

  api("GET", `/v1/${enc(id)}/stats?limit=5000`).then((result) => {
    if (!result.ok) { error.textContent = problem(result); return; }
    const sum = (key) => result.json.reduce((total, record) => total + record[key], 0);
    const hits = sum("cacheDnsNum"), upstream = sum("requestPDnsNum");
    const errors = ["localErro", "timeoutErro", "noResponseErro", "noPermissionErro", "urlParameterErro", "urlPathErro"]
      .reduce((total, key) => total + sum(key), 0);
    tiles.replaceChildren(tile("Names", String(new Set(result.json.map((r) => r.domain)).size)),
      tile("Cache answers", String(hits)), tile("Upstream queries", String(upstream)),
      tile("Hit ratio", hits + upstream ? `${Math.round((100 * hits) / (hits + upstream))} %` : "–"),
      tile("Stale answers", String(sum("staleNum"))), tile("Upstream errors", String(errors)));
    if (result.headers.get("X-Next-Cursor")) tiles.append(h("p", { class: "muted", text: "(the first 5000 records)" }));
  });

  async function load() {
    const result = await api("GET", `/v1/${enc(id)}/stats/recent`);
    if (!result.ok) { caption.textContent = problem(result); return; }
    const points = result.json.points;
    const lookups = points.reduce((total, p) => total + p.lookups, 0);
    caption.textContent = `Lookups per second (blue bars), cache hit ratio (green) and failures per second (red), a point a minute; ` +
      `${lookups} lookups in the last hour (GET /v1/${id}/stats/recent).`;
    drawChart(canvas, points);
  }
  drawChart(canvas, []);
  load();
  every(10000, load);
}

// The points of the last hour: lookups/s as bars on the left axis, failures/s as a red line on
// the same axis, the hit ratio (0-100 %) as a green line on the right.
function drawChart(canvas, points) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || 600, height = canvas.clientHeight || 240;
  canvas.width = width * ratio;
  canvas.height = height * ratio;
  const g = canvas.getContext("2d");
  g.scale(ratio, ratio);
  g.fillStyle = "#ffffff";
  g.fillRect(0, 0, width, height);
  const left = 44, right = width - 40, top = 12, bottom = height - 24;
  const series = points.filter((p) => p.seconds > 0).map((p) => ({
    end: p.start + p.seconds, seconds: p.seconds, rate: p.lookups / p.seconds,
    failures: (p.failures + p.upstreamErrors) / p.seconds, hit: p.lookups > 0 ? p.hits / p.lookups : null,
  }));
  const now = Date.now() / 1000, start = now - 3600;
  const peak = Math.max(1, ...series.map((p) => Math.max(p.rate, p.failures)));
  const x = (t) => left + ((Math.max(t, start) - start) / 3600) * (right - left);
  const y = (v) => bottom - v * (bottom - top);
  g.strokeStyle = "#d5dae3";
  g.fillStyle = "#5c6475";
  g.font = "11px system-ui, sans-serif";
  g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    g.beginPath(); g.moveTo(left, y(i / 4)); g.lineTo(right, y(i / 4)); g.stroke();
    g.fillText((peak * i / 4).toFixed(peak < 4 ? 1 : 0), 4, y(i / 4) + 4);
    g.fillText(`${25 * i}%`, right + 6, y(i / 4) + 4);
  }
  for (let m = 0; m <= 60; m += 15) g.fillText(m === 60 ? "now" : `-${60 - m}m`, x(start + m * 60) - 10, height - 6);
  g.fillStyle = "#1f5fbf";
  for (const p of series) {
    const from = x(p.end - p.seconds), to = Math.max(x(p.end), from + 3);
    g.fillRect(from, y(p.rate / peak), to - from - 1, bottom - y(p.rate / peak));
  }
  const line = (color, value) => {
    g.strokeStyle = color; g.fillStyle = color; g.lineWidth = 2; g.beginPath();
    let drawing = false;
    for (const p of series) {
      const v = value(p);
      if (v === null) { drawing = false; continue; }
      if (drawing) g.lineTo(x(p.end), y(v)); else g.moveTo(x(p.end), y(v));
      g.fillRect(x(p.end) - 2, y(v) - 2, 4, 4);
      drawing = true;
    }
    g.stroke();
  };
  line("#157347", (p) => p.hit);
  line("#b42318", (p) => p.failures / peak);
}

// ---- router ----

function route() {
  stopTimers();
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (!session.csrf || parts[0] === "login") { loginView(); return; }
  document.getElementById("nav").hidden = false;
  if (parts[0] === "account" && parts[1]) { accountView(parts[1], parts[2] || "stats"); return; }
  if (parts[0] === "accounts" && parts[1] === "new") {
    const container = h("div", {});
    show(h("h1", { text: "New account" }), container);
    settingsView(null, container);
    return;
  }
  accountsView();
}

async function start() {
  document.getElementById("logout").addEventListener("click", logout);
  window.addEventListener("hashchange", route);
  const result = await api("GET", "/console/session");
  if (result.ok && result.json.signedIn) session.csrf = result.json.csrfToken;
  go(session.csrf && (location.hash === "" || location.hash === "#/login") ? "#/accounts" : location.hash);
}

start();
