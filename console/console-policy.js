// httpdnsd console: the policy page of one account: its policy document (docs/policy.md) edited
// as JSON and saved with the ETag it came with, and "explain" (what would answer a name for a
// client, and why). Uses the helpers of console.js.
"use strict";

const policyExample = `{
  "rules": [
    {"name": "canary", "hosts": ["api.example.com"], "when": {"params": {"appver": "2.*"}},
     "answer": {"ipv4": ["192.0.2.10"], "ttl": 60}, "extra": "canary"}
  ]
}`;

function policyView(id, container) {
  container.append(policyEditor(id), explainPanel(id));
}

// GET keeps the document's ETag; PUT sends it in If-Match, so that a change someone else made
// meanwhile is not overwritten: the server answers 412 and the page offers to read it again.
function policyEditor(id) {
  const path = `/v1/${enc(id)}/policy`;
  const documentText = h("textarea", { spellcheck: "false", testid: "policy-document" });
  const etag = h("code", { testid: "policy-etag" });
  const status = h("p", { class: "notice", role: "status", testid: "policy-status" });
  // Disabled until a document and its ETag are read: a PUT needs the tag.
  const save = h("button", { type: "submit", testid: "policy-save", text: "Save", disabled: true });
  const reload = h("button", { type: "button", class: "secondary", testid: "policy-reload", text: "Reload" });
  let tag = null;

  function say(text, isError) {
    status.className = isError ? "error" : "notice";
    status.setAttribute("role", isError ? "alert" : "status");
    status.textContent = text;
  }

  function take(result) {
    tag = result.headers.get("ETag");
    etag.textContent = tag || "";
    save.disabled = !tag;
    documentText.value = JSON.stringify(result.json, null, 2) + "\n";
  }

  async function load() {
    say("", false);
    const result = await api("GET", path);
    if (!result.ok) { say(problem(result), true); return; }
    take(result);
  }

  const form = h("form", {},
    field("Policy (JSON: domains, hostOverrides, dns64Prefix, rules)", "policy-document", documentText),
    h("p", { class: "muted" }, "Version (ETag): ", etag),
    h("div", { class: "actions" }, save, reload), status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    say("", false);
    const result = await api("PUT", path, documentText.value, { "If-Match": tag });
    if (result.status === 412) {
      say("Someone else changed the policy since it was read (412 PreconditionFailed): nothing was saved. " +
        "Reload to read theirs, then make your change again (Reload replaces the text above).", true);
      reload.focus();
      return;
    }
    if (!result.ok) { say(problem(result), true); return; }
    take(result);
    say("Saved.", false);
  });
  reload.addEventListener("click", () => load());
  load();
  return h("section", { class: "card" }, h("h2", { text: "Policy" }),
    h("p", { class: "muted", text: "The account's domain list, per-name caching, DNS64 prefix and rules, as one document " +
      "(docs/policy.md). A key left out goes back to its default." }),
    form,
    h("details", {}, h("summary", { text: "A rule, for example" }), h("pre", { class: "result", text: policyExample })));
}

// GET /policy/explain: the domain list's decision, each rule naming the host with why it held or
// failed, the host override in force, and what would answer.
function explainPanel(id) {
  const host = h("input", { required: true, autocomplete: "off", testid: "explain-host", placeholder: "api.example.com" });
  const client = h("input", { autocomplete: "off", testid: "explain-client", placeholder: "optional, e.g. 10.1.2.3" });
  const params = h("textarea", { class: "short", spellcheck: "false", testid: "explain-params", placeholder: "appver=2.1" });
  const result = h("div", { testid: "explain-result", "aria-live": "polite" });
  const form = h("form", {},
    h("div", { class: "row" }, field("Host", "explain-host", host), field("Client address", "explain-client", client)),
    field("App parameters (name=value lines, sent as sdns-NAME)", "explain-params", params),
    h("div", { class: "actions" }, h("button", { type: "submit", testid: "explain-submit", text: "Explain" })));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let query;
    try { query = sdnsQuery(params.value); } catch (error) { result.replaceChildren(h("p", { class: "error", text: error.message })); return; }
    const address = client.value.trim() ? `&client_ip=${enc(client.value.trim())}` : "";
    const answer = await api("GET", `/v1/${enc(id)}/policy/explain?host=${enc(host.value.trim())}${address}${query}`);
    if (!answer.ok) { result.replaceChildren(h("p", { class: "error", role: "alert", text: problem(answer) })); return; }
    result.replaceChildren(...explanation(answer.json));
  });
  return h("section", { class: "card" }, h("h2", { text: "Explain" }),
    h("p", { class: "muted", text: "What would answer a name for a client, and why, without resolving it." }), form, result);
}

function explanation(e) {
  const params = Object.entries(e.params || {}).map(([name, value]) => `sdns-${name}=${value}`).join(", ");
  const facts = [
    ["Client", `${e.client_ip || "(the caller)"}${params ? `; ${params}` : ""}`],
    ["Domain list", `${e.domains.mode}: ${e.domains.allowed ? "allowed" : "refused"}`],
    ["Host override", e.hostOverride ? JSON.stringify(e.hostOverride) : "none"],
  ];
  if (e.geo) facts.splice(1, 0, ["Geo", JSON.stringify(e.geo)]);
  const a = e.answer;
  let answer = a.by;
  if (a.by === "rule") {
    answer = `rule ${a.rule}: ${a.ipv4.concat(a.ipv6).join(", ") || "(no address)"}, ttl ${a.ttl}`;
    if (a.weights) answer += `, weights ${a.weights.join("/")}`;
    if (a.extra !== undefined) answer += `, extra ${JSON.stringify(a.extra)}`;
  } else if (a.reason) {
    answer += ` (${a.reason})`;
  }
  facts.push(["Answer", answer]);
  const list = h("dl", { class: "facts" }, facts.flatMap(([term, text]) => [h("dt", { text: term }), h("dd", { text })]));
  const rows = (e.rules || []).map((rule) =>
    h("tr", {}, h("td", { text: rule.name }), h("td", { text: rule.matched ? "matched" : "no" }), h("td", { text: rule.reason })));
  const table = rows.length
    ? h("div", { class: "table-wrap" }, h("table", { testid: "explain-rules" },
      h("thead", {}, h("tr", {}, ["Rule", "Matched", "Why"].map((t) => h("th", { text: t })))), h("tbody", {}, rows)))
    : h("p", { class: "muted", text: "No rule names this host." });
  return [list, table];
}
