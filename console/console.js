// httpdnsd console: a client of the admin and tenant APIs (docs/console.md). No framework, no
// inline script or style (the page's Content-Security-Policy forbids both), no data put into
// the page as HTML: every text goes in through textContent.
"use strict";

const session = { csrf: null };
const timers = new Set();

// ---- DOM and HTTP helpers ----

function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "text") element.textContent = value;
    else if (name === "testid") element.setAttribute("data-testid", value);
    else element.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) element.append(child);
  }
  return element;
}

function field(label, id, input) {
  input.id = id;
  return h("div", {}, h("label", { for: id, text: label }), input);
}

function select(id, testid, options, value) {
  return h("select", { id, testid }, options.map((o) => h("option", { value: o, selected: o === value, text: o })));
}

// Every request goes to this origin with the session cookie and the session's CSRF token.
async function api(method, path, body, extraHeaders) {
  const headers = Object.assign({ Accept: "application/json" }, extraHeaders);
  if (session.csrf) headers["X-CSRF-Token"] = session.csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body, credentials: "same-origin", cache: "no-store" });
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch (_) { json = null; }
  if (response.status === 401 && session.csrf && !path.startsWith("/console/")) {
    session.csrf = null;
    location.hash = "#/login";
  }
  return { status: response.status, ok: response.ok, json, text, headers: response.headers };
}

// The server's own message: `Code: message`.
function problem(result) {
  const error = result.json && result.json.error;
  return error ? `${error.code}: ${error.message}` : `HTTP ${result.status}`;
}

function enc(text) { return encodeURIComponent(text); }

// `name=value` lines (`sdns-` before the name is optional) as `&sdns-NAME=VALUE` query
// arguments: the parameters an app sends for the account's rules (docs/rules.md).
function sdnsQuery(text) {
  let query = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf("=");
    const name = at > 0 ? line.slice(0, at).trim().replace(/^sdns-/, "") : "";
    if (!name) throw new Error(`"${line}" is not a name=value line`);
    query += `&sdns-${enc(name)}=${enc(line.slice(at + 1).trim())}`;
  }
  return query;
}

function every(ms, task) {
  const id = setInterval(task, ms);
  timers.add(id);
  return id;
}

function stopTimers() {
  for (const id of timers) clearInterval(id);
  timers.clear();
}

function show(...nodes) {
  const view = document.getElementById("view");
  view.replaceChildren(...nodes);
}

// Shows `hash`, also when it is the one shown already (no hashchange then).
function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

// ---- sign-in ----

function loginView() {
  document.getElementById("nav").hidden = true;
  const form = document.getElementById("login-template").content.cloneNode(true);
  show(form);
  const token = document.getElementById("login-token");
  token.focus();
  document.getElementById("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const error = document.querySelector("[data-testid=login-error]");
    error.textContent = "";
    const result = await api("POST", "/console/login", JSON.stringify({ token: token.value }));
    token.value = "";
    if (!result.ok) { error.textContent = problem(result); return; }
    session.csrf = result.json.csrfToken;
    go("#/accounts");
  });
}

async function logout() {
  await api("POST", "/console/logout");
  session.csrf = null;
  go("#/login");
}

// ---- accounts ----

async function accountsView() {
  const status = h("p", { class: "error", role: "alert" });
  const body = h("tbody");
  const table = h("table", { testid: "account-list" },
    h("thead", {}, h("tr", {}, ["Account", "Upstreams", "Client keys", "Query log", ""].map((t) => h("th", { text: t })))), body);
  show(h("h1", { text: "Accounts" }),
    h("p", {}, h("a", { href: "#/accounts/new", testid: "account-new", text: "New account" })),
    status, h("div", { class: "table-wrap" }, table));
  const result = await api("GET", "/v1/accounts");
  if (!result.ok) { status.textContent = problem(result); return; }
  for (const account of result.json.accounts) {
    const config = account.config;
    const actions = h("td", {});
    const remove = h("button", { type: "button", class: "danger", testid: `account-delete-${account.id}`, text: "Delete" });
    remove.addEventListener("click", () => confirmDelete(actions, account.id, status));
    actions.append(h("a", { href: `#/account/${enc(account.id)}/settings`, text: "Edit" }), " ", remove);
    body.append(h("tr", { "data-account": account.id },
      h("td", {}, h("a", { href: `#/account/${enc(account.id)}/stats`, text: account.id })),
      h("td", { text: (config.upstreams || []).join(", ") || "(local DNS only)" }),
      h("td", { class: "num", text: String((config.clientKeys || []).length) }),
      h("td", { text: config.queryLog && config.queryLog.enabled ? "on" : "off" }),
      actions));
  }
}

function confirmDelete(cell, id, status) {
  const saved = [...cell.childNodes];
  const yes = h("button", { type: "button", class: "danger", testid: "confirm-delete", text: `Delete ${id}` });
  const no = h("button", { type: "button", class: "secondary", text: "Cancel" });
  cell.replaceChildren(h("span", { text: "Delete this account and its cache? " }), yes, " ", no);
  no.addEventListener("click", () => cell.replaceChildren(...saved));
  yes.addEventListener("click", async () => {
    const result = await api("DELETE", `/v1/accounts/${enc(id)}`);
    if (!result.ok) { status.textContent = problem(result); cell.replaceChildren(...saved); return; }
    accountsView();
  });
  yes.focus();
}

const newAccountTemplate = `{
  "upstreams": [],
  "queryLog": {"enabled": true}
}
`;

// Create (id null) or edit an account. The configuration is the admin API's JSON, sent as
// written: the server checks it and its message is shown as it is.
async function settingsView(id, container) {
  const error = h("p", { class: "error", role: "alert", testid: "account-error" });
  const notice = h("p", { class: "notice", role: "status", testid: "account-notice" });
  const idInput = h("input", { required: true, autocomplete: "off", testid: "account-id", value: id || "" });
  if (id) idInput.readOnly = true;
  const config = h("textarea", { spellcheck: "false", testid: "account-config" });
  const form = h("form", {},
    field("Account id", "account-id", idInput),
    field("Configuration (JSON, the keys of docs/configuration.md)", "account-config", config),
    h("div", { class: "actions" }, h("button", { type: "submit", testid: "account-save", text: id ? "Save" : "Create" })),
    error, notice);
  container.append(h("section", { class: "card" }, h("h2", { text: id ? "Configuration" : "New account" }), form));
  if (id) {
    const current = await api("GET", `/v1/accounts/${enc(id)}`);
    if (!current.ok) { error.textContent = problem(current); return; }
    config.value = JSON.stringify(current.json.config, null, 2) + "\n";
    container.append(clientKeysPanel(id, current.json.config));
  } else {
    config.value = newAccountTemplate;
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    notice.textContent = "";
    const target = idInput.value.trim();
    const result = await api("PUT", `/v1/accounts/${enc(target)}`, config.value);
    if (!result.ok) { error.textContent = problem(result); return; }
    if (!id) { location.hash = `#/account/${enc(target)}/tryit`; return; }
    notice.textContent = "Saved.";
    config.value = JSON.stringify(result.json.config, null, 2) + "\n";
  });
}

// 32 random bytes, base64url: a client key secret (16-256 characters).
function newSecret() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// Client keys: added, rotated and removed by replacing the account (PUT); the secrets the
// server already holds are sent back as "***", which keeps them. A new secret is shown once.
function clientKeysPanel(id, config) {
  const error = h("p", { class: "error", role: "alert" });
  const secretBox = h("div", { role: "status" });
  const body = h("tbody");
  const keyId = h("input", { autocomplete: "off", testid: "key-id" });
  const role = select("key-role", "key-role", ["resolve", "manage"], "resolve");
  const add = h("button", { type: "submit", testid: "key-add", text: "Add key" });
  let keys = config.clientKeys || [];

  async function save(nextKeys, shown) {
    error.textContent = "";
    secretBox.replaceChildren();
    const current = await api("GET", `/v1/accounts/${enc(id)}`);
    if (!current.ok) { error.textContent = problem(current); return; }
    const next = Object.assign({}, current.json.config, { clientKeys: nextKeys });
    const result = await api("PUT", `/v1/accounts/${enc(id)}`, JSON.stringify(next));
    if (!result.ok) { error.textContent = problem(result); return; }
    keys = result.json.config.clientKeys || [];
    render();
    if (shown) {
      secretBox.replaceChildren(h("p", { text: `Secret of key ${shown.id}; copy it now, it is not shown again:` }),
        h("p", { class: "secret", testid: "key-secret", text: shown.secret }));
    }
  }

  function render() {
    body.replaceChildren(...keys.map((key) => {
      const rotate = h("button", { type: "button", class: "secondary", testid: `key-rotate-${key.id}`, text: "Rotate" });
      const remove = h("button", { type: "button", class: "danger", testid: `key-remove-${key.id}`, text: "Remove" });
      rotate.addEventListener("click", () => {
        const secret = newSecret();
        save(keys.map((k) => (k.id === key.id ? Object.assign({}, k, { secret }) : k)), { id: key.id, secret });
      });
      remove.addEventListener("click", () => save(keys.filter((k) => k.id !== key.id)));
      return h("tr", {}, h("td", { text: key.id }), h("td", { text: key.role }), h("td", {}, rotate, " ", remove));
    }));
  }
  render();
  const form = h("form", { class: "row" }, field("Key id", "key-id", keyId), field("Role", "key-role", role), add);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const secret = newSecret();
    save(keys.concat([{ id: keyId.value.trim(), secret, role: role.value }]), { id: keyId.value.trim(), secret });
    keyId.value = "";
  });
  return h("section", { class: "card" }, h("h2", { text: "Client keys" }),
    h("div", { class: "table-wrap" }, h("table", { testid: "key-list" },
      h("thead", {}, h("tr", {}, ["Key", "Role", ""].map((t) => h("th", { text: t })))), body)),
    form, error, secretBox);
}

// ---- one account's pages ----

const accountTabs = [
  ["stats", "Statistics"], ["cache", "Cache"], ["querylog", "Query log"], ["tryit", "Try it"], ["policy", "Policy"], ["settings", "Settings"],
];

function accountView(id, tab) {
  const nav = h("nav", { class: "tabs", "aria-label": "Account" }, accountTabs.map(([name, label]) =>
    h("a", { href: `#/account/${enc(id)}/${name}`, "aria-current": name === tab ? "page" : false, testid: `tab-${name}`, text: label })));
  const container = h("div", {});
  show(h("h1", { text: `Account ${id}` }), nav, container);
  const pages = { stats: statsView, cache: cacheView, querylog: queryLogView, tryit: tryItView, policy: policyView, settings: settingsView };
  (pages[tab] || statsView)(id, container);
}

// The pages of one account and the router: console-tryit.js, console-stats.js, console-policy.js,
// console-pages.js.
