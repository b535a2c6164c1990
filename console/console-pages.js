// httpdnsd console: the cache and query log pages of one account, and the router. Uses the
// helpers of console.js; the other pages are in console-tryit.js, console-stats.js and
// console-policy.js.
"use strict";

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
