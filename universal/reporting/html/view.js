// The HTML view of one run of universal (see universal/reporting/html): the network drawn on a
// canvas, packets as dots moving step by step, links coloured by their queue or load, a slider,
// play/pause, click a packet or a link; beside it the delivery (or open-loop) curves and the
// table row. Written for this view: no library, no network access.
"use strict";
(function () {
  const V = JSON.parse(document.getElementById("view-data").textContent);
  const errors = window.__viewErrors || [];
  const net = V.network, N = net.x.length, L = net.tail.length;
  const P = V.packets.src.length, LAST = V.last_step;
  const off = Int32Array.from(V.hops.offsets), hopLink = Int32Array.from(V.hops.link);
  const hopStep = Int32Array.from(V.hops.step);
  // CHAOS: the step a packet moved into its node's shared queue while waiting for each hop (-1 never)
  const hopQueued = V.hops.queued ? Int32Array.from(V.hops.queued) : null;
  const created = Int32Array.from(V.packets.created), delivered = Int32Array.from(V.packets.delivered);
  const tail = Int32Array.from(net.tail), head = Int32Array.from(net.head);
  const $ = (id) => document.getElementById(id);
  const fmt = (v) => (v === null || v === undefined) ? "-" : (typeof v === "number" && !Number.isInteger(v)) ? v.toFixed(3) : String(v);

  // ---------------------------------------------------------------- per-step state
  // hops made by packet p up to the end of step t (hops not made have step -1 and come last)
  function hopsMade(p, t) {
    let k = 0;
    for (let j = off[p]; j < off[p + 1]; j++) { const s = hopStep[j]; if (s >= 0 && s <= t) k++; else if (!V.bufferless) break; }
    return k;
  }
  function isDelivered(p, t) { return delivered[p] >= 0 && delivered[p] <= t; }
  // Buffered runs: the link packet p waits for at the end of step t (-1 none), and the node it is at.
  function where(p, t) {
    if (created[p] > t) return null;
    if (isDelivered(p, t)) return { done: true, node: V.packets.dst[p] };
    const k = hopsMade(p, t);
    const node = k === 0 ? V.packets.src[p] : head[hopLink[off[p] + k - 1]];
    const wait = off[p] + k < off[p + 1] ? hopLink[off[p] + k] : -1;
    const moved = k > 0 && hopStep[off[p] + k - 1] === t ? hopLink[off[p] + k - 1] : -1;
    const q = hopQueued !== null && wait >= 0 ? hopQueued[off[p] + k] : -1;
    return { done: false, node, wait, moved, shared: q >= 0 && q <= t };
  }
  // Everything drawn at the end of step t: dots (one per packet in the network, or per crossing
  // for the bufferless protocols), the per-link queue and crossings so far.
  function stateAt(t) {
    const queue = new Int32Array(L), crossed = new Int32Array(L), dots = [];
    let inNet = 0, done = 0, atSources = 0, discardedNow = 0;
    for (let j = 0; j < hopLink.length; j++) if (hopStep[j] >= 0 && hopStep[j] <= t) crossed[hopLink[j]]++;
    if (V.bufferless) {
      for (let p = 0; p < P; p++) {
        if (isDelivered(p, t)) { done++; continue; }
        let flying = false;
        for (let j = off[p]; j < off[p + 1]; j++) {
          if (hopStep[j] !== t) continue;
          flying = true;
          const e = hopLink[j];
          // the attempt goes on if the packet crosses a link out of this link's head next step
          let goesOn = false;
          for (let i = off[p]; i < off[p + 1]; i++) if (hopStep[i] === t + 1 && tail[hopLink[i]] === head[e]) goesOn = true;
          const arrives = head[e] === V.packets.dst[p] && delivered[p] === t;
          const lost = !goesOn && !arrives && t < LAST;
          if (lost) discardedNow++;
          dots.push({ p, link: e, slot: -1, from: e, lost });
        }
        if (flying) inNet++; else atSources++;
      }
      for (let p = 0; p < P; p++) if (delivered[p] === t) dots.push({ p, link: -1, slot: -1, arrive: true, node: V.packets.dst[p] });
      return { queue, crossed, dots, inNet, done, atSources, discardedNow };
    }
    const members = new Map(), shared = new Int32Array(N);
    for (let p = 0; p < P; p++) {
      const w = where(p, t);
      if (w === null) continue;
      if (w.done) { done++; if (delivered[p] === t) dots.push({ p, link: -1, node: w.node, arrive: true }); continue; }
      inNet++;
      if (w.shared) {           // in its node's shared queue (CHAOS), not in a link's queue
        dots.push({ p, link: -1, node: w.node, shared: true, slot: shared[w.node]++ });
      } else if (w.wait >= 0) {
        queue[w.wait]++;
        if (!members.has(w.wait)) members.set(w.wait, []);
        members.get(w.wait).push(p);
        dots.push({ p, link: w.wait, slot: members.get(w.wait).length - 1, moved: w.moved });
      } else dots.push({ p, link: -1, node: w.node });
    }
    return { queue, crossed, dots, inNet, done, atSources, discardedNow, shared };
  }

  // ---------------------------------------------------------------- whole-run summaries
  // largest queue of every link over the run (an event sweep over the waiting intervals)
  const maxQueue = new Int32Array(L), totalCrossed = new Int32Array(L);
  function waitIntervals(fn) {
    for (let p = 0; p < P; p++) {
      let arrive = created[p];
      for (let j = off[p]; j < off[p + 1]; j++) {
        const s = hopStep[j], q = hopQueued !== null ? hopQueued[j] : -1;
        const end = Math.min(s >= 0 ? s - 1 : LAST, q >= 0 ? q - 1 : LAST);     // until it crosses or is queued
        if (end >= arrive) fn(hopLink[j], arrive, end);
        if (s < 0) break;
        arrive = s;
      }
    }
  }
  for (let j = 0; j < hopLink.length; j++) if (hopStep[j] >= 0) totalCrossed[hopLink[j]]++;
  if (!V.bufferless) {
    const ev = [];
    waitIntervals((e, a, b) => { ev.push([e, a, 1]); ev.push([e, b + 1, -1]); });
    ev.sort((u, v) => u[0] - v[0] || u[1] - v[1] || u[2] - v[2]);
    let cur = 0, link = -1;
    for (const [e, , d] of ev) { if (e !== link) { link = e; cur = 0; } cur += d; if (cur > maxQueue[e]) maxQueue[e] = cur; }
  }
  function linkSeries(e) {           // queue of link e (or its crossings per step) at the end of every step
    const s = new Float64Array(LAST + 1);
    if (V.bufferless) { for (let j = 0; j < hopLink.length; j++) if (hopLink[j] === e && hopStep[j] >= 0) s[hopStep[j]]++; return s; }
    const d = new Float64Array(LAST + 2);
    waitIntervals((l, a, b) => { if (l === e) { d[a]++; d[b + 1]--; } });
    let c = 0; for (let t = 0; t <= LAST; t++) { c += d[t]; s[t] = c; }
    return s;
  }
  const deliveredBy = new Float64Array(LAST + 1), inNetwork = new Float64Array(LAST + 1);
  for (let p = 0; p < P; p++) {
    if (delivered[p] >= 0 && delivered[p] <= LAST) deliveredBy[delivered[p]]++;
    const from = Math.max(created[p], 0), to = delivered[p] >= 0 ? delivered[p] - 1 : LAST;
    for (let t = from; t <= to && t <= LAST; t++) inNetwork[t]++;
  }
  // open loop: mean latency of the packets delivered in each step (null where none is), latency
  // counted as the study counts it, from the creation step included
  const latencyBy = new Array(LAST + 1).fill(null);
  {
    const sum = new Float64Array(LAST + 1);
    for (let p = 0; p < P; p++) if (delivered[p] >= 0 && delivered[p] <= LAST) sum[delivered[p]] += delivered[p] - created[p] + 1 - V.start_offset;
    for (let t = 0; t <= LAST; t++) if (deliveredBy[t] > 0) latencyBy[t] = sum[t] / deliveredBy[t];
  }
  for (let t = 1; t <= LAST; t++) deliveredBy[t] += deliveredBy[t - 1];

  // ---------------------------------------------------------------- geometry
  const canvas = $("net"), ctx = canvas.getContext("2d");
  let W = 0, H = 0, scale = 1, ox = 0, oy = 0, unit = 10, gap = 10;
  const xs = new Float64Array(N), ys = new Float64Array(N);
  function fit() {
    const r = canvas.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
    W = Math.max(r.width, 200); H = Math.max(r.height, 200);
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    const grow = (x, y) => { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); };
    for (let v = 0; v < N; v++) grow(net.x[v], net.y[v]);
    for (let e = 0; e < L; e++) {         // the middle of an arc lies half its bulge off the straight line
      if (!net.bend[e]) continue;
      const a = tail[e], b = head[e], dx = net.x[b] - net.x[a], dy = net.y[b] - net.y[a], sgn = a < b ? 1 : -1;
      grow((net.x[a] + net.x[b]) / 2 - sgn * dy * net.bend[e] / 2, (net.y[a] + net.y[b]) / 2 + sgn * dx * net.bend[e] / 2);
    }
    const pad = 36, w = Math.max(x1 - x0, 1e-9), h = Math.max(y1 - y0, 1e-9);
    scale = Math.min((W - 2 * pad) / w, (H - 2 * pad) / h);
    if (!isFinite(scale)) scale = 1;
    ox = (W - scale * (x1 - x0)) / 2 - scale * x0; oy = (H - scale * (y1 - y0)) / 2 - scale * y0;
    for (let v = 0; v < N; v++) { xs[v] = ox + scale * net.x[v]; ys[v] = oy + scale * net.y[v]; }
    // the typical edge length on screen sets the size of nodes and dots
    const lens = [];
    for (let e = 0; e < L; e += Math.max(1, Math.floor(L / 400))) lens.push(Math.hypot(xs[tail[e]] - xs[head[e]], ys[tail[e]] - ys[head[e]]));
    lens.sort((a, b) => a - b);
    unit = lens.length ? Math.max(lens[Math.floor(lens.length / 2)], 2) : 40;
    // and no larger than the gaps between nodes (nearest neighbours of up to 200 nodes)
    const near = [];
    for (let v = 0; v < N; v += Math.max(1, Math.floor(N / 200))) {
      let best = Infinity;
      for (let u = 0; u < N; u++) if (u !== v) best = Math.min(best, Math.hypot(xs[u] - xs[v], ys[u] - ys[v]));
      if (isFinite(best)) near.push(best);
    }
    near.sort((a, b) => a - b);
    gap = near.length ? Math.max(near[Math.floor(near.length / 2)], 2) : unit;
  }
  // a point at fraction f along link e: its side of the edge (right-hand), bent links on an arc
  function along(e, f) {
    const a = tail[e], b = head[e];
    const x0 = xs[a], y0 = ys[a], x1 = xs[b], y1 = ys[b];
    const dx = x1 - x0, dy = y1 - y0, len = Math.hypot(dx, dy) || 1;
    const nx = -dy / len, ny = dx / len, side = Math.min(unit * 0.07, gap * 0.08, 3), bend = net.bend[e];
    const sgn = a < b ? 1 : -1;               // both directions of an edge bulge the same way
    const cx = (x0 + x1) / 2 + sgn * nx * bend * len, cy = (y0 + y1) / 2 + sgn * ny * bend * len;
    const u = 1 - f;
    const x = u * u * x0 + 2 * u * f * cx + f * f * x1, y = u * u * y0 + 2 * u * f * cy + f * f * y1;
    return [x + nx * side, y + ny * side];
  }
  const SEGMENTS = 10;
  function linkPath(e) {
    ctx.beginPath();
    if (net.bend[e] === 0) { const [a, b] = along(e, 0), [c, d] = along(e, 1); ctx.moveTo(a, b); ctx.lineTo(c, d); return; }
    for (let i = 0; i <= SEGMENTS; i++) { const [x, y] = along(e, i / SEGMENTS); if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y); }
  }
  function slotPoint(e, slot) { return along(e, Math.min(0.14 + 0.1 * slot, 0.74)); }
  function dotAt(d, t) {        // position of a dot at the end of step t
    if (d.shared) {             // a shared queue: a ring round the node, one place per packet
      const a = 0.9 * d.slot, rr = Math.max(4, Math.min(unit * 0.14, gap * 0.35, 12)) * (1 + 0.25 * Math.floor(d.slot / 7));
      return [xs[d.node] + rr * Math.cos(a), ys[d.node] + rr * Math.sin(a)];
    }
    if (d.link < 0) return [xs[d.node], ys[d.node]];
    if (V.bufferless) return along(d.link, 0.85);
    return slotPoint(d.link, d.slot);
  }

  // ---------------------------------------------------------------- colours
  function ramp(x) {           // 0..1: pale yellow to dark red
    x = Math.max(0, Math.min(1, x));
    const r = Math.round(250 - 70 * x), g = Math.round(200 - 180 * x), b = Math.round(60 - 40 * x);
    return `rgb(${r},${g},${b})`;
  }
  const modes = V.bufferless ? { crossed: "crossings so far" } : { queue: "queue (packets waiting to cross)", crossed: "crossings so far" };
  if (V.static_load) modes.paths = "paths using the link (its load; C is the largest)";
  let mode = Object.keys(modes)[0];
  function linkValue(s, e) { return mode === "queue" ? s.queue[e] : mode === "crossed" ? s.crossed[e] : V.static_load[e]; }
  function modeMax() {
    let m = 0;
    const arr = mode === "queue" ? maxQueue : mode === "crossed" ? totalCrossed : V.static_load;
    for (let e = 0; e < L; e++) m = Math.max(m, arr[e]);
    return Math.max(m, 1);
  }

  // ---------------------------------------------------------------- drawing
  let step = 0, state = null, prev = null, selected = null, drawn = { nodes: 0, links: 0, dots: 0 };
  const PACKET = "#1f5fbf", SELECT = "#0a8f3c", SHARED = "#8a56c2";
  function draw(frac) {
    ctx.clearRect(0, 0, W, H);
    const s = state, maxv = modeMax();
    const lw = Math.max(0.6, Math.min(unit * 0.05, 2.5));
    let links = 0, nodes = 0;
    for (let e = 0; e < L; e++) {
      const v = linkValue(s, e);
      linkPath(e);
      ctx.strokeStyle = v > 0 ? ramp(v / maxv) : "#c9ced6";
      ctx.lineWidth = v > 0 ? lw * (1 + 2.2 * v / maxv) : lw;
      ctx.stroke();
      links++;
    }
    if (selected && selected.type === "packet") {
      const p = selected.id;
      ctx.strokeStyle = SELECT; ctx.lineWidth = lw * 3;
      for (let j = off[p]; j < off[p + 1]; j++) { linkPath(hopLink[j]); ctx.stroke(); }
    }
    if (selected && selected.type === "link") { linkPath(selected.id); ctx.strokeStyle = SELECT; ctx.lineWidth = lw * 4; ctx.stroke(); }
    const r = Math.max(1.2, Math.min(unit * 0.16, gap * 0.3, 8));
    const labels = N <= 100 && r >= 5;
    for (let v = 0; v < N; v++) {
      ctx.beginPath(); ctx.arc(xs[v], ys[v], r, 0, 2 * Math.PI);
      ctx.fillStyle = "#ffffff"; ctx.fill(); ctx.strokeStyle = "#4a5360"; ctx.lineWidth = 1; ctx.stroke();
      nodes++;
    }
    if (labels) {
      ctx.fillStyle = "#4a5360"; ctx.font = `${Math.max(9, Math.min(11, r * 1.6))}px sans-serif`; ctx.textAlign = "center";
      for (let v = 0; v < N; v++) ctx.fillText(net.labels[v], xs[v], ys[v] - r - 3);
    }
    // dots, moving from where they were at the end of the step before
    const dr = Math.max(2.4, Math.min(unit * 0.075, gap * 0.3, 4.5));
    const before = new Map();
    if (prev && frac < 1) for (const d of prev.dots) if (!before.has(d.p)) before.set(d.p, d);
    let dots = 0;
    for (const d of s.dots) {
      let [x, y] = dotAt(d, step);
      if (frac < 1) {
        let from = null;
        if (V.bufferless && d.link >= 0) from = along(d.link, 0.05);
        else if (before.has(d.p)) from = dotAt(before.get(d.p), step - 1);
        else if (!V.bufferless && d.link >= 0) from = [xs[V.packets.src[d.p]], ys[V.packets.src[d.p]]];
        if (from) { x = from[0] + (x - from[0]) * frac; y = from[1] + (y - from[1]) * frac; }
      } else if (d.arrive) continue;         // delivered: gone once the step is over
      ctx.beginPath(); ctx.arc(x, y, dr, 0, 2 * Math.PI);
      const chosen = selected && selected.type === "packet" && selected.id === d.p;
      ctx.fillStyle = chosen ? SELECT : d.lost ? "#d0362b" : d.arrive ? "#2e9e55" : d.shared ? SHARED : PACKET;
      ctx.fill();
      if (chosen) { ctx.lineWidth = 2; ctx.strokeStyle = "#000"; ctx.stroke(); }
      d.x = x; d.y = y; dots++;
    }
    drawn = { nodes, links, dots };
  }
  function setStep(t) {
    step = Math.max(0, Math.min(LAST, t | 0));
    prev = step > 0 ? stateAt(step - 1) : null;
    state = stateAt(step);
    $("slider").value = step;
    draw(1); status(); charts(); info();
  }

  // ---------------------------------------------------------------- side panel
  function status() {
    const s = state;
    let busiest = -1;
    for (let e = 0; e < L; e++) if (busiest < 0 || s.queue[e] > s.queue[busiest]) busiest = e;
    const parts = [`<b>step ${step}</b> of ${LAST}`, `delivered <b>${s.done}</b> of ${P}`];
    if (V.bufferless) {
      const R = V.round_length;
      if (R) parts.push(`round ${Math.floor(Math.max(step - 1, 0) / R) + 1} (steps of ${R}: 2D forward, 2D for the acknowledgements)`);
      parts.push(`${s.inNet} in flight, ${s.atSources} at their sources`);
      if (s.discardedNow) parts.push(`<span class="lost">${s.discardedNow} discarded after this step</span>`);
    } else {
      parts.push(`${s.inNet} in the network`);
      if (busiest >= 0 && s.queue[busiest] > 0) parts.push(`longest queue ${s.queue[busiest]} (link ${linkName(busiest)})`);
      if (hopQueued !== null) {
        let n = 0, fullest = 0;
        for (let v = 0; v < N; v++) { n += s.shared[v]; if (s.shared[v] > s.shared[fullest]) fullest = v; }
        parts.push(`${n} in shared queues` + (n ? ` (most ${s.shared[fullest]}, node ${net.labels[fullest]})` : ""));
      }
    }
    $("status").innerHTML = parts.join(" &middot; ");
  }
  function linkName(e) { return `${net.labels[tail[e]]}\u2192${net.labels[head[e]]}`; }
  function chart(cv, series, opts) {
    const c = cv.getContext("2d"), dpr = window.devicePixelRatio || 1, r = cv.getBoundingClientRect();
    const w = Math.max(r.width, 100), h = Math.max(r.height, 60);
    cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr); c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, w, h);
    const L0 = 44, R0 = 10, T0 = 16, B0 = 26;
    let x0 = Infinity, x1 = -Infinity, y1 = opts.ymax || 0;
    for (const s of series) for (let i = 0; i < s.x.length; i++) { if (s.y[i] === null) continue; x0 = Math.min(x0, s.x[i]); x1 = Math.max(x1, s.x[i]); y1 = Math.max(y1, s.y[i]); }
    if (!isFinite(x0)) { x0 = 0; x1 = 1; }
    if (x1 === x0) x1 = x0 + 1;
    if (!(y1 > 0)) y1 = 1;
    const X = (v) => L0 + (v - x0) / (x1 - x0) * (w - L0 - R0), Y = (v) => h - B0 - v / y1 * (h - B0 - T0);
    c.strokeStyle = "#9aa3ad"; c.lineWidth = 1; c.beginPath(); c.moveTo(L0, T0); c.lineTo(L0, h - B0); c.lineTo(w - R0, h - B0); c.stroke();
    c.fillStyle = "#4a5360"; c.font = "10px sans-serif"; c.textAlign = "right";
    c.fillText(fmt(+y1.toPrecision(3)), L0 - 4, T0 + 4); c.fillText("0", L0 - 4, h - B0 + 3);
    c.textAlign = "center"; c.fillText(fmt(+x0.toPrecision(3)), L0, h - B0 + 12); c.fillText(fmt(+x1.toPrecision(3)), w - R0 - 8, h - B0 + 12);
    c.fillText(opts.xlabel, (L0 + w) / 2, h - 4);
    c.textAlign = "left"; c.fillText(opts.title, L0 + 4, 11);
    for (const m of opts.marks || []) {
      if (!(m.x >= x0 && m.x <= x1)) continue;          // outside the axis: not drawn
      c.strokeStyle = m.color; c.setLineDash([4, 3]); c.beginPath(); c.moveTo(X(m.x), T0); c.lineTo(X(m.x), h - B0); c.stroke(); c.setLineDash([]);
      const right = X(m.x) > (L0 + w) / 2;
      c.fillStyle = m.color; c.textAlign = right ? "right" : "left"; c.fillText(m.label, X(m.x) + (right ? -3 : 3), T0 + 10);
    }
    for (const s of series) {
      c.strokeStyle = s.color; c.fillStyle = s.color; c.lineWidth = 1.8; c.beginPath();
      let started = false;
      for (let i = 0; i < s.x.length; i++) {
        if (s.y[i] === null) continue;
        const px = X(s.x[i]), py = Y(s.y[i]);
        if (started) c.lineTo(px, py); else { c.moveTo(px, py); started = true; }
      }
      c.stroke();
      if (s.points) for (let i = 0; i < s.x.length; i++) if (s.y[i] !== null) { c.beginPath(); c.arc(X(s.x[i]), Y(s.y[i]), 2.5, 0, 7); c.fill(); }
    }
    if (opts.cursor !== undefined) {
      c.strokeStyle = "#111"; c.lineWidth = 1.2; c.beginPath(); c.moveTo(X(opts.cursor), T0); c.lineTo(X(opts.cursor), h - B0); c.stroke();
    }
  }
  const stepsAxis = Array.from({ length: LAST + 1 }, (_, i) => i);
  function charts() {
    if (V.kind === "batch") {
      const marks = [];
      if (V.row.lower_bound !== undefined && V.row.lower_bound !== null) marks.push({ x: V.row.lower_bound, label: "max(C/B, D)", color: "#8a56c2" });
      chart($("curve"), [{ x: stepsAxis, y: Array.from(deliveredBy), color: "#2e9e55" }, { x: stepsAxis, y: Array.from(inNetwork), color: PACKET }],
        { title: "delivered (green) and in the network (blue)", xlabel: "step", cursor: step, marks, ymax: P });
    } else {
      const stops = [{ x: V.create_steps, label: "creation stops", color: "#8a56c2" }];
      chart($("curve"), [{ x: stepsAxis, y: Array.from(inNetwork), color: PACKET }],
        { title: "packets in the network", xlabel: "step", cursor: step, marks: stops });
      chart($("latency"), [{ x: stepsAxis, y: Array.from(latencyBy), color: "#c0392b" }],
        { title: "mean latency of the packets delivered in the step", xlabel: "step", cursor: step, marks: stops });
      const sw = V.sweep;
      if (sw && sw.offered.length) {
        const theta = V.row.analytic_value;
        const sat = theta !== undefined && theta !== null ? [{ x: theta, label: "\u0398 (analytic)", color: "#8a56c2" }] : [];
        chart($("sweep1"), [{ x: sw.offered, y: sw.latency, color: "#c0392b", points: true }],
          { title: "study: mean latency against offered load", xlabel: "offered (" + sw.units + ")", cursor: sw.load, marks: sat });
        chart($("sweep2"), [{ x: sw.offered, y: sw.offered, color: "#c9ced6" }, { x: sw.offered, y: sw.accepted, color: "#2e9e55", points: true }],
          { title: "study: accepted \u03b1* against offered (grey: equal)", xlabel: "offered", cursor: sw.load, marks: sat });
      }
    }
  }
  function rowTable() {
    const keys = V.kind === "batch"
      ? ["T", "C", "D", "lower_bound", "bound_expr", "bound", "T_over_bound", "T_over_maxCD", "delivered", "status", "max_buffer", "mean_latency", "max_latency", "rounds", "discarded", "bound_note"]
      : ["offered", "accepted", "accepted_min", "latency_mean", "latency_p99", "hops_mean", "stable", "status", "analytic_value"];
    const names = { lower_bound: "max(\u2308C/B\u2309, D)", bound_expr: "bound", bound: "bound value", T_over_bound: "T / bound", T_over_maxCD: "T / max(C, D)", analytic_value: "\u0398 (analytic saturation)", accepted: "accepted \u03b1*", accepted_min: "accepted \u03b1'" };
    let html = "";
    for (const k of keys) if (k in V.row && V.row[k] !== null) html += `<tr><th>${names[k] || k}</th><td>${fmt(V.row[k])}</td></tr>`;
    $("row").innerHTML = html || "<tr><td>(no table row: this load was not in the sweep)</td></tr>";
  }
  function info() {
    const box = $("info");
    $("linkchart").style.display = "none";
    if (!selected) { box.innerHTML = "Click a packet to see its path and its waits, or a link to see its queue over time."; return; }
    if (selected.type === "packet") {
      const p = selected.id, src = V.packets.src[p], dst = V.packets.dst[p];
      // a batch run's packets are all there at step 0 and first move in step 1; an open-loop
      // packet may move in the step it is created in (its latency counts that step)
      const first = created[p] + V.start_offset;
      let html = `<b>packet ${p}</b>: ${net.labels[src]} \u2192 ${net.labels[dst]}, ` +
        (V.kind === "batch" ? "" : `created in step ${created[p]}, `) +
        (delivered[p] >= 0 ? `delivered in step ${delivered[p]} (latency ${delivered[p] - first + 1})` : "not delivered") + "<ol>";
      let arrive = first;
      for (let j = off[p]; j < off[p + 1]; j++) {
        const s = hopStep[j];
        if (V.bufferless) {
          // a crossing that does not continue the one before starts a new attempt (a new round, or another copy)
          const goesOn = j > off[p] && hopStep[j - 1] === s - 1 && head[hopLink[j - 1]] === tail[hopLink[j]];
          html += `<li>step ${s}: ${linkName(hopLink[j])}` + (j > off[p] && !goesOn ? " <i>(another attempt)</i>" : "") + "</li>";
        }
        else if (s < 0) html += `<li>${linkName(hopLink[j])}: not crossed</li>`;
        else {
          const w = s - arrive, q = hopQueued !== null ? hopQueued[j] : -1;
          html += `<li>step ${s}: ${linkName(hopLink[j])}` + (w > 0 ? ` <span class="lost">(waited ${w})</span>` : "") +
            (q >= 0 ? ` <i>(in the shared queue of ${net.labels[tail[hopLink[j]]]} from step ${q})</i>` : "") + "</li>";
          arrive = s + 1;
        }
      }
      box.innerHTML = html + "</ol>";
    } else {
      const e = selected.id, series = linkSeries(e);
      let peak = 0, at = 0;
      for (let t = 0; t <= LAST; t++) if (series[t] > peak) { peak = series[t]; at = t; }
      const what = V.bufferless ? "crossings per step" : "queue (packets waiting to cross)";
      const paths = V.static_load ? (V.static_load[e] === 1 ? "1 path uses it, " : `${V.static_load[e]} paths use it, `) : "";
      box.innerHTML = `<b>link ${linkName(e)}</b>: ${paths}${totalCrossed[e]} crossing${totalCrossed[e] === 1 ? "" : "s"} in the run; ` +
        `${what}: ${series[step]} now, at most ${peak}` + (peak ? ` (first in step ${at})` : "");
      const cv = $("linkchart");
      cv.style.display = "block";
      chart(cv, [{ x: stepsAxis, y: Array.from(series), color: "#c0392b" }], { title: what, xlabel: "step", cursor: step });
    }
  }

  // ---------------------------------------------------------------- interaction
  let playing = false, t0 = 0;
  const speed = () => +$("speed").value;
  function frame(now) {
    if (!playing) return;
    const f = (now - t0) / speed();
    if (f >= 1) {
      if (step >= LAST) { playing = false; $("play").textContent = "\u25b6 play"; setStep(LAST); return; }
      setStep(step + 1); t0 = now; draw(0);
    } else draw(f);
    requestAnimationFrame(frame);
  }
  function play() {
    playing = !playing;
    $("play").textContent = playing ? "\u275a\u275a pause" : "\u25b6 play";
    if (playing) { if (step >= LAST) setStep(0); t0 = performance.now(); requestAnimationFrame(frame); }
  }
  function pick(mx, my) {
    let best = null, bd = Math.max(7, unit * 0.12);
    for (const d of state.dots) { if (d.x === undefined || (d.arrive)) continue; const dd = Math.hypot(d.x - mx, d.y - my); if (dd < bd) { bd = dd; best = { type: "packet", id: d.p }; } }
    if (best) return best;
    bd = 6;
    for (let e = 0; e < L; e++) for (let i = 0; i <= SEGMENTS; i++) {
      const [x, y] = along(e, i / SEGMENTS), dd = Math.hypot(x - mx, y - my);
      if (dd < bd) { bd = dd; best = { type: "link", id: e }; }
    }
    return best;
  }
  function init() {
    $("title").textContent = V.title; $("subtitle").textContent = V.subtitle; $("command").textContent = V.command;
    $("notes").innerHTML = V.captions.map((c) => `<p>${c.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</p>`).join("");
    const sl = $("slider"); sl.max = LAST;
    sl.addEventListener("input", () => { playing = false; $("play").textContent = "\u25b6 play"; setStep(+sl.value); });
    $("play").addEventListener("click", play);
    $("first").addEventListener("click", () => setStep(0));
    $("back").addEventListener("click", () => setStep(step - 1));
    $("fwd").addEventListener("click", () => setStep(step + 1));
    $("last").addEventListener("click", () => setStep(LAST));
    const ms = $("mode");
    for (const [k, v] of Object.entries(modes)) { const o = document.createElement("option"); o.value = k; o.textContent = v; ms.appendChild(o); }
    ms.addEventListener("change", () => { mode = ms.value; draw(1); });
    const asked = /mode=(\w+)/.exec(location.hash);       // e.g. #mode=paths&step=4
    if (asked && asked[1] in modes) { mode = asked[1]; ms.value = mode; }
    canvas.addEventListener("click", (ev) => { const r = canvas.getBoundingClientRect(); selected = pick(ev.clientX - r.left, ev.clientY - r.top); draw(1); info(); });
    // a clicked button lets go of the focus, so that space and the arrow keys keep working on the page
    for (const b of document.querySelectorAll("button")) b.addEventListener("click", () => b.blur());
    document.addEventListener("keydown", (ev) => {
      if (ev.target.closest && ev.target.closest("button, select, input")) return;   // they handle their own keys
      if (ev.key === "ArrowRight") setStep(step + 1); else if (ev.key === "ArrowLeft") setStep(step - 1);
      else if (ev.key === " ") { ev.preventDefault(); play(); }
    });
    window.addEventListener("resize", () => { fit(); draw(1); charts(); info(); });
    $("counts").textContent = `${N} nodes, ${L} links (each drawn on the right-hand side of its edge), ${P} packets, ${hopLink.length} packet-hops`;
    document.body.classList.add(V.kind);
    if (V.kind === "batch") for (const c of document.querySelectorAll(".openloop")) c.style.display = "none";
    for (const c of document.querySelectorAll(V.bufferless ? ".buffered-only" : ".bufferless-only")) c.style.display = "none";
    if (hopQueued === null) for (const c of document.querySelectorAll(".chaos-only")) c.style.display = "none";
    rowTable(); fit();
    const pk = /packet=(\d+)/.exec(location.hash), ln = /link=(\d+)/.exec(location.hash);   // a selection to start with
    if (pk && +pk[1] < P) selected = { type: "packet", id: +pk[1] };
    else if (ln && +ln[1] < L) selected = { type: "link", id: +ln[1] };
    const m = /step=(\d+)/.exec(location.hash);
    setStep(m ? +m[1] : 0);
    if (/selftest/.test(location.hash)) {
      // every step, drawn half-way through its moves as play does, and both selections; then the last step
      for (let t = 0; t <= LAST; t++) { setStep(t); draw(0.5); }
      if (P) { selected = { type: "packet", id: 0 }; info(); }
      if (L) { selected = { type: "link", id: 0 }; info(); }
      selected = null;
      setStep(LAST);
      $("selftest").textContent = JSON.stringify({ nodes: drawn.nodes, links: drawn.links, packets: P, delivered: state.done, last_step: LAST, errors });
    }
  }
  // the test API: what a browser test (or a curious student at the console) can ask
  window.universalView = {
    step: (t) => { setStep(t); return step; }, lastStep: () => LAST, nodeCount: () => drawn.nodes,
    linkCount: () => drawn.links, packetCount: () => P, delivered: () => state.done, errors,
  };
  try { init(); } catch (err) { errors.push(String(err && err.stack || err)); const st = $("selftest"); if (st) st.textContent = JSON.stringify({ errors }); throw err; }
})();
