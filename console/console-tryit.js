// httpdnsd console: the "try it" page, which asks the account as a client would, in every
// wire format, and shows what answered. Uses the helpers of console.js.
"use strict";

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

// The request of `format` for the form's values; `params` are `&sdns-NAME=VALUE` arguments, which
// v1, EMAS and DoH JSON carry (an RFC 8484 query has no arguments for them).
function tryItRequest(id, format, host, type, client, params) {
  const q = (name, value) => (value ? `&${name}=${enc(value)}` : "");
  const single = type === "AAAA" ? "AAAA" : "A";
  switch (format) {
    case "emas": return `/${enc(id)}/d?host=${enc(host)}` + q("query", { A: "4", AAAA: "6", both: "4,6" }[type]) + q("ip", client) + params;
    case "json": return `/resolve?name=${enc(host)}&type=${single}&uid=${enc(id)}` + q("edns_client_subnet", client) + params;
    case "rfc8484": return `/v1/${enc(id)}/dns-query?dns=${base64url(dnsQuestion(host, single === "A" ? 1 : 28))}` + q("client_ip", client);
    default: return `/v1/${enc(id)}/resolve?host=${enc(host)}&type=${type}` + q("client_ip", client) + params;
  }
}

// The lines shown for an answer: its status, what answered (`source`, v1 only), a rule's
// `extra` (v1, EMAS), whether DNS64 made the AAAA records, then the answer itself.
async function tryItAnswer(response, lines) {
  let body;
  if ((response.headers.get("Content-Type") || "").startsWith("application/dns-message")) {
    body = dnsAnswer(new Uint8Array(await response.arrayBuffer()));
    lines.push(`rcode: ${body.rcode}`);
  } else {
    const text = await response.text();
    try { body = JSON.parse(text); } catch (_) { body = text; }
  }
  const single = body && typeof body === "object" && !Array.isArray(body) ? body : {};
  lines.push(`source: ${single.source || "(not in this format's answer: see the query log)"}`);
  if (typeof single.extra === "string") lines.push(`extra: ${single.extra}`);
  if (single.dns64) lines.push("dns64: true (the AAAA addresses are made from the name's A records)");
  lines.push("", JSON.stringify(body, null, 2));
  return lines.join("\n");
}

function tryItView(id, container) {
  const host = h("input", { required: true, autocomplete: "off", testid: "tryit-host", placeholder: "www.example.com" });
  const type = select("tryit-type", "tryit-type", ["A", "AAAA", "both", "auto"], "A");
  const client = h("input", { autocomplete: "off", testid: "tryit-client", placeholder: "optional, e.g. 192.0.2.1" });
  const format = select("tryit-format", "tryit-format", ["v1", "emas", "json", "rfc8484"], "v1");
  const params = h("textarea", { class: "short", spellcheck: "false", testid: "tryit-params", placeholder: "appver=2.1" });
  const result = h("pre", { class: "result", testid: "tryit-result", "aria-live": "polite" });
  const form = h("form", {},
    h("div", { class: "row" }, field("Host", "tryit-host", host), field("Type", "tryit-type", type),
      field("Client address", "tryit-client", client), field("Wire format", "tryit-format", format)),
    field("App parameters for the rules (name=value lines, sent as sdns-NAME; not over rfc8484)", "tryit-params", params),
    h("div", { class: "actions" }, h("button", { type: "submit", testid: "tryit-submit", text: "Resolve" })));
  container.append(h("section", { class: "card" }, h("h2", { text: "Try it" }),
    h("p", { class: "muted", text: "Asks this account as a client would (json and rfc8484 ask A unless AAAA is chosen)." }),
    form, result));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let query;
    try { query = sdnsQuery(params.value); } catch (error) { result.textContent = error.message; return; }
    result.textContent = "…";
    const path = tryItRequest(id, format.value, host.value.trim(), type.value, client.value.trim(), query);
    const started = performance.now();
    const headers = { "X-CSRF-Token": session.csrf || "" };
    if (format.value === "rfc8484") headers.Accept = "application/dns-message";
    const response = await fetch(path, { headers, credentials: "same-origin", cache: "no-store" });
    const elapsed = Math.round(performance.now() - started);
    result.textContent = await tryItAnswer(response, [`GET ${path}`, `HTTP ${response.status} in ${elapsed} ms`]);
  });
  host.focus();
}
