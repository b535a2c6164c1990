// httpdnsd console: the statistics page (totals, the last hour: lookups, hit ratio, failures
// and request latency) and its charts. Uses the helpers of console.js.
"use strict";

function statsView(id, container) {
  const tiles = h("div", { class: "tiles", testid: "stats-tiles" });
  const error = h("p", { class: "error", role: "alert" });
  const canvas = h("canvas", { testid: "stats-chart", role: "img", "aria-label": "Lookups per second, hit ratio and errors over the last hour" });
  const caption = h("p", { class: "muted", testid: "stats-caption" });
  const latencyCanvas = h("canvas", { testid: "latency-chart", role: "img", "aria-label": "Request latency p50, p95 and p99 over the last hour" });
  const latencyCaption = h("p", { class: "muted", testid: "latency-caption" });
  container.append(h("section", { class: "card" }, h("h2", { text: "Totals" }), tiles, error),
    h("section", { class: "card" }, h("h2", { text: "Last hour" }), canvas, caption),
    h("section", { class: "card" }, h("h2", { text: "Request latency" }), latencyCanvas, latencyCaption));
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
    latencyCaption.textContent = latencyText(points);
    drawChart(canvas, points);
    drawLatency(latencyCanvas, points);
  }
  drawChart(canvas, []);
  drawLatency(latencyCanvas, []);
  load();
  every(10000, load);
}

function milliseconds(us) {
  const ms = us / 1000;
  return `${ms < 1 ? ms.toFixed(2) : ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
}

// The figures of the latest minute that timed a request, then what the chart shows.
function latencyText(points) {
  const timed = points.filter((p) => p.latency);
  const legend = "p50 (blue), p95 (orange) and p99 (red) of the lookup requests of each minute, on a log scale.";
  if (!timed.length) return `No request timed in the last hour. ${legend}`;
  const last = timed[timed.length - 1], l = last.latency;
  const when = new Date(last.start * 1000).toTimeString().slice(0, 5);
  return `Minute from ${when}: p50 ${milliseconds(l.p50Us)} · p95 ${milliseconds(l.p95Us)} · p99 ${milliseconds(l.p99Us)} ` +
    `(${l.requests} requests). ${legend}`;
}

// A white canvas with the last hour along the bottom: the drawing context, the plot's edges and
// `x` (Unix seconds to pixels).
function chartFrame(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || 600, height = canvas.clientHeight || 240;
  canvas.width = width * ratio;
  canvas.height = height * ratio;
  const g = canvas.getContext("2d");
  g.scale(ratio, ratio);
  g.fillStyle = "#ffffff";
  g.fillRect(0, 0, width, height);
  const frame = { g, left: 52, right: width - 40, top: 12, bottom: height - 24 };
  const start = Date.now() / 1000 - 3600;
  frame.x = (t) => frame.left + ((Math.max(t, start) - start) / 3600) * (frame.right - frame.left);
  g.strokeStyle = "#d5dae3";
  g.fillStyle = "#5c6475";
  g.font = "11px system-ui, sans-serif";
  g.lineWidth = 1;
  for (let m = 0; m <= 60; m += 15) g.fillText(m === 60 ? "now" : `-${60 - m}m`, frame.x(start + m * 60) - 10, height - 6);
  return frame;
}

// A line through the points' values (null: a gap), with a dot at each.
function plotLine(frame, series, color, value) {
  const g = frame.g;
  g.strokeStyle = color; g.fillStyle = color; g.lineWidth = 2; g.beginPath();
  let drawing = false;
  for (const p of series) {
    const v = value(p);
    if (v === null) { drawing = false; continue; }
    if (drawing) g.lineTo(frame.x(p.end), v); else g.moveTo(frame.x(p.end), v);
    g.fillRect(frame.x(p.end) - 2, v - 2, 4, 4);
    drawing = true;
  }
  g.stroke();
}

// The points of the last hour: lookups/s as bars on the left axis, failures/s as a red line on
// the same axis, the hit ratio (0-100 %) as a green line on the right.
function drawChart(canvas, points) {
  const frame = chartFrame(canvas), g = frame.g, { left, right, top, bottom } = frame;
  const series = points.filter((p) => p.seconds > 0).map((p) => ({
    end: p.start + p.seconds, seconds: p.seconds, rate: p.lookups / p.seconds,
    failures: (p.failures + p.upstreamErrors) / p.seconds, hit: p.lookups > 0 ? p.hits / p.lookups : null,
  }));
  const peak = Math.max(1, ...series.map((p) => Math.max(p.rate, p.failures)));
  const y = (v) => bottom - v * (bottom - top);
  for (let i = 0; i <= 4; i++) {
    g.beginPath(); g.moveTo(left, y(i / 4)); g.lineTo(right, y(i / 4)); g.stroke();
    g.fillText((peak * i / 4).toFixed(peak < 4 ? 1 : 0), 4, y(i / 4) + 4);
    g.fillText(`${25 * i}%`, right + 6, y(i / 4) + 4);
  }
  g.fillStyle = "#1f5fbf";
  for (const p of series) {
    const from = frame.x(p.end - p.seconds), to = Math.max(frame.x(p.end), from + 3);
    g.fillRect(from, y(p.rate / peak), to - from - 1, bottom - y(p.rate / peak));
  }
  plotLine(frame, series, "#157347", (p) => (p.hit === null ? null : y(p.hit)));
  plotLine(frame, series, "#b42318", (p) => y(p.failures / peak));
}

// p50, p95 and p99 of each minute's lookup requests, microseconds on a log scale of whole
// decades (at least 10 µs to 10 ms), labelled in milliseconds.
function drawLatency(canvas, points) {
  const frame = chartFrame(canvas), g = frame.g, { left, right, top, bottom } = frame;
  const series = points.filter((p) => p.latency && p.seconds > 0).map((p) => Object.assign({ end: p.start + p.seconds }, p.latency));
  const values = series.flatMap((p) => [p.p50Us, p.p99Us]).filter((v) => v > 0);
  const low = Math.min(1, Math.floor(Math.log10(Math.min(...values, 1000))));
  const high = Math.max(4, Math.ceil(Math.log10(Math.max(...values, 1))));
  const y = (us) => bottom - ((Math.log10(Math.max(us, 10 ** low)) - low) / (high - low)) * (bottom - top);
  for (let decade = low; decade <= high; decade++) {
    g.beginPath(); g.moveTo(left, y(10 ** decade)); g.lineTo(right, y(10 ** decade)); g.stroke();
    g.fillText(`${10 ** decade / 1000} ms`, 2, y(10 ** decade) + 4);
  }
  plotLine(frame, series, "#1f5fbf", (p) => y(p.p50Us));
  plotLine(frame, series, "#b26b00", (p) => y(p.p95Us));
  plotLine(frame, series, "#b42318", (p) => y(p.p99Us));
}
