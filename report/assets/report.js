// The space-time diagram of a leaderlab run, drawn from the JSON in #report-data. Plain JavaScript,
// no library. Only what is in the time window is drawn; when more arrows or markers are in view than
// can be drawn one by one, they are bundled per pixel column and the notice above the diagram says so.
(function () {
  "use strict";
  var t0 = performance.now();
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var parseMS = performance.now() - t0;
  var SVGNS = "http://www.w3.org/2000/svg";
  var svg = document.getElementById("diagram");
  var ov = document.getElementById("overview");
  var tip = document.getElementById("tip");
  var notice = document.getElementById("notice");
  var rangeEl = document.getElementById("range");

  // Beyond ARROW_LIMIT messages (MARK_LIMIT markers) in view, bundles are drawn instead, about
  // BUNDLE_TARGET of them at most.
  var ARROW_LIMIT = 3000, MARK_LIMIT = 4000, BUNDLE_TARGET = 2500;

  var N = D.lanes.length;
  var M = D.msgs, K = D.marks;
  var laneOfId = {};
  D.lanes.forEach(function (l, i) { laneOfId[l.id] = i; });
  var T = {};
  D.types.forEach(function (name, i) { T[name] = i; });

  // Layout, in pixels (the SVG's user units are pixels).
  var GUT = 64, RIGHT = 14, AXIS = 18, FROWS = 3, FROW = 12;
  var CLUSTER_Y = AXIS + FROWS * FROW + 6, CLUSTER_H = 12;
  var LANES_TOP = CLUSTER_Y + CLUSTER_H + 10;
  var LANE_H, H, NV, rowOf = [];
  var W = 1200, PW = 1000;
  // Hidden message kinds (by index in D.kinds) and lanes (by lane index): the legend and the lane
  // names toggle them.
  var hiddenKinds = {}, hiddenLanes = {};
  // layout gives each shown lane its row; the hidden ones have none (-1).
  function layout() {
    rowOf = []; NV = 0;
    for (var l = 0; l < N; l++) rowOf.push(hiddenLanes[l] ? -1 : NV++);
    LANE_H = Math.max(10, Math.min(40, Math.floor(560 / Math.max(NV, 1))));
    H = LANES_TOP + NV * LANE_H + 8;
  }
  layout();
  function shown(l) { return rowOf[l] >= 0; }

  var full = { a: D.from, b: D.to };
  var view = { a: full.a, b: full.b };
  var hi = null; // the highlighted stretch: {a, b, lanes}
  var bundles = [], markGroups = [];

  function clamp(v, lo, hi) { return v < lo ? lo : v > hi ? hi : v; }
  function laneY(l) { return LANES_TOP + rowOf[l] * LANE_H + LANE_H / 2; }
  function x(t) { return GUT + (t - view.a) * PW / (view.b - view.a); }
  function tAt(px) { return view.a + (px - GUT) * (view.b - view.a) / PW; }
  function ms(us) {
    var s = (us / 1000).toFixed(3).replace(/\.?0+$/, "");
    return s + " ms";
  }
  function color(id) { var l = laneOfId[id]; return l === undefined ? "#888" : D.lanes[l].color; }
  function name(l) { return l >= 0 && l < N ? D.lanes[l].label : "?"; }
  function str(i) { return i >= 0 ? D.strings[i] : ""; }

  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]); }
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, s, attrs) { var t = el("text", attrs, parent); t.textContent = s; return t; }

  // lower returns the first index of the sorted array a whose value is >= v.
  function lower(a, v) {
    var lo = 0, hi2 = a.length;
    while (lo < hi2) { var mid = (lo + hi2) >> 1; if (a[mid] < v) lo = mid + 1; else hi2 = mid; }
    return lo;
  }

  // --- the fixed parts: defs, layers, legend -----------------------------------------------------
  var defs = el("defs", {}, svg);
  D.kinds.forEach(function (k, i) {
    var m = el("marker", { id: "ah" + i, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse", markerUnits: "userSpaceOnUse" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", fill: k.color }, m);
  });
  function pattern(id, bg, fg, w) {
    var p = el("pattern", { id: id, width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
    if (bg !== "none") el("rect", { width: 6, height: 6, fill: bg }, p);
    el("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: fg, "stroke-width": w }, p);
  }
  pattern("pat-bottom", "#ffffff", "#d0d4da", 1.5);
  pattern("pat-paused", "#e6e8eb", "#9aa0a8", 2);
  pattern("pat-none", "#f4f5f7", "#b8bec7", 1.5);
  pattern("pat-split", "none", "#e53935", 1.2);
  pattern("pat-stop", "#eceff1", "#b0bec5", 1);
  var clip = el("clipPath", { id: "plot-clip" }, defs);
  var clipRect = el("rect", { x: GUT, y: 0, width: 10, height: H }, clip);

  // fitText keeps a label inside [lo, hi] (the drawing), moving it in and anchoring it at its
  // start: a label centred on the last tick, or right of a fault near the edge, is not cut off.
  function fitText(t, lo, hi) {
    var w = 0;
    try { w = t.getComputedTextLength(); } catch (e) { w = 0; }
    if (!(w > 0)) w = t.textContent.length * 6.5;
    var x0 = +t.getAttribute("x"), anchor = t.getAttribute("text-anchor") || "start";
    var left = anchor === "middle" ? x0 - w / 2 : anchor === "end" ? x0 - w : x0;
    if (left + w > hi) left = hi - w;
    if (left < lo) left = lo;
    t.setAttribute("x", left.toFixed(1));
    t.setAttribute("text-anchor", "start");
    return t;
  }

  var layers = {};
  ["grid", "bands", "shade", "lanes", "msgs", "marks", "faults", "hi", "axis", "labels"].forEach(function (n) {
    var clipped = n !== "labels" && n !== "axis";
    layers[n] = el("g", { "class": "layer-" + n, "clip-path": clipped ? "url(#plot-clip)" : null }, svg);
  });

  function legend() {
    var box = document.getElementById("legend");
    function item(draw, label) {
      var span = document.createElement("span");
      span.className = "item";
      var s = document.createElementNS(SVGNS, "svg");
      s.setAttribute("width", 22); s.setAttribute("height", 12);
      draw(s);
      span.appendChild(s);
      span.appendChild(document.createTextNode(label));
      box.appendChild(span);
      return span;
    }
    // A message kind's entry is a toggle: click it to hide its arrows, again to show them.
    D.kinds.forEach(function (k, ki) {
      var span = item(function (s) { el("line", { x1: 1, y1: 6, x2: 21, y2: 6, stroke: k.color, "stroke-width": 2 }, s); }, k.name + (k.role !== "other" ? " (" + k.role + ")" : "") + " " + k.count);
      span.className = "item kind";
      span.setAttribute("role", "button");
      span.setAttribute("tabindex", "0");
      span.setAttribute("aria-pressed", "true");
      span.setAttribute("data-kind", ki);
      span.title = "click to hide or show the " + k.name + " arrows";
      function toggle() {
        if (hiddenKinds[ki]) delete hiddenKinds[ki]; else hiddenKinds[ki] = true;
        span.classList.toggle("off", !!hiddenKinds[ki]);
        span.setAttribute("aria-pressed", hiddenKinds[ki] ? "false" : "true");
        render();
      }
      span.addEventListener("click", toggle);
      span.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
    });
    var leaders = {};
    D.beliefs.forEach(function (b) { if (b.v) leaders[b.v] = true; });
    Object.keys(leaders).map(Number).sort(function (a, b) { return a - b; }).forEach(function (id) {
      item(function (s) { el("rect", { x: 1, y: 1, width: 20, height: 10, fill: color(id), opacity: 0.35 }, s); }, "follows n" + id);
    });
    item(function (s) { el("rect", { x: 1, y: 1, width: 20, height: 10, fill: "url(#pat-bottom)", stroke: "#ccc" }, s); }, "⊥ (electing)");
    item(function (s) { el("rect", { x: 1, y: 1, width: 20, height: 10, fill: "#8d939c", opacity: 0.6 }, s); }, "dead");
    item(function (s) { el("rect", { x: 1, y: 1, width: 20, height: 10, fill: "url(#pat-paused)" }, s); }, "paused");
    item(function (s) { el("rect", { x: 1, y: 1, width: 20, height: 10, fill: "#7e57c2", opacity: 0.18 }, s); }, "partition");
    item(function (s) { el("rect", { x: 1, y: 1, width: 20, height: 10, fill: "#e53935", opacity: 0.3 }, s); }, "overlap (self-believers in one component)");
    item(function (s) { el("rect", { x: 1, y: 1, width: 20, height: 10, fill: "url(#pat-split)", stroke: "#e53935" }, s); }, "split brain (a leader in each component)");
    if (D.stop) item(function (s) { el("rect", { x: 1, y: 1, width: 20, height: 10, fill: "url(#pat-stop)" }, s); }, "the run's stop");
    ["start", "stop", "elect", "leader", "suspect", "trust", "drop", "orphan"].forEach(function (t) {
      item(function (s) { glyph(s, T[t], 11, 6, 0, null); }, t === "orphan" ? "recv without send" : t);
    });
    // Only a synchronous algorithm's run has pulses: the others' legends stay as they were.
    if (T.pulse !== undefined && K.y.indexOf(T.pulse) >= 0) item(function (s) { glyph(s, T.pulse, 11, 6, 0, null); }, "pulse");
  }

  // glyph draws the marker of type y at (cx, cy).
  function glyph(parent, y, cx, cy, arg, attrs) {
    var g, r = 4;
    switch (y) {
      case T.start: g = el("path", { d: "M" + (cx - 3) + "," + (cy - 5) + " L" + (cx + 4) + "," + cy + " L" + (cx - 3) + "," + (cy + 5) + "z", fill: "#2e7d32" }, parent); break;
      case T.stop: g = el("rect", { x: cx - 3.5, y: cy - 3.5, width: 7, height: 7, fill: "#37474f" }, parent); break;
      case T.elect: g = el("circle", { cx: cx, cy: cy, r: r, fill: "#fff", stroke: "#333", "stroke-width": 1.3 }, parent); break;
      case T.leader: g = el("path", { d: "M" + cx + "," + (cy - 5) + " L" + (cx + 5) + "," + cy + " L" + cx + "," + (cy + 5) + " L" + (cx - 5) + "," + cy + "z", fill: arg ? color(arg) : "#555", stroke: "#222", "stroke-width": 0.8 }, parent); break;
      case T.suspect: g = el("path", { d: "M" + (cx - 4) + "," + (cy - 3) + " L" + (cx + 4) + "," + (cy - 3) + " L" + cx + "," + (cy + 4) + "z", fill: "#ef6c00" }, parent); break;
      case T.trust: g = el("path", { d: "M" + (cx - 4) + "," + (cy + 3) + " L" + (cx + 4) + "," + (cy + 3) + " L" + cx + "," + (cy - 4) + "z", fill: "#00897b" }, parent); break;
      // A pulse is a thin tick: there is one per node per pulse, and they must not hide the arrows.
      case T.pulse: g = el("line", { x1: cx, x2: cx, y1: cy - 5, y2: cy + 5, stroke: "#3949ab", "stroke-width": 1.2 }, parent); break;
      case T.drop: g = el("path", { d: "M" + (cx - 4) + "," + (cy - 4) + " L" + (cx + 4) + "," + (cy + 4) + " M" + (cx + 4) + "," + (cy - 4) + " L" + (cx - 4) + "," + (cy + 4), stroke: "#c62828", "stroke-width": 2.2, fill: "none" }, parent); break;
      default: g = el("circle", { cx: cx, cy: cy, r: 5, fill: "none", stroke: "#c62828", "stroke-width": 2 }, parent);
    }
    if (attrs) for (var k in attrs) g.setAttribute(k, attrs[k]);
    return g;
  }

  // --- drawing ---------------------------------------------------------------------------------
  function clear() { for (var n in layers) layers[n].textContent = ""; }

  // spanRect draws [a, b) on a band of the lanes, clipped to the plot; it returns null when out of view.
  function inView(a, b) { return b >= view.a && a <= view.b; }

  function niceStep(v) {
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    if (p >= v) return p;
    if (2 * p >= v) return 2 * p;
    if (5 * p >= v) return 5 * p;
    return 10 * p;
  }

  function drawAxis() {
    var step = niceStep((view.b - view.a) / Math.max(PW / 110, 1));
    var digits = step >= 1000 ? 0 : step >= 100 ? 1 : step >= 10 ? 2 : 3;
    for (var t = Math.ceil(view.a / step) * step; t <= view.b; t += step) {
      var px = x(t);
      el("line", { x1: px, x2: px, y1: CLUSTER_Y, y2: H - 4, stroke: "#eef0f3" }, layers.grid);
      fitText(text(layers.axis, (t / 1000).toFixed(digits) + " ms", { x: px, y: 12, "text-anchor": "middle", "class": "tick" }), 2, W - 2);
    }
  }

  // A list of stretches on one row, coalescing those narrower than a pixel with their neighbour so
  // that a run with thousands of belief changes draws at most a rectangle per pixel.
  function bandRow(list, yTop, h, fillOf, cls, tipKind, parent) {
    var cur = null, drawn = 0;
    function flush() {
      if (!cur) return;
      var r = el("rect", { x: cur.x0, y: yTop, width: Math.max(cur.x1 - cur.x0, 0.8), height: h, fill: cur.fill, "class": cls, "data-tip": tipKind, "data-i": cur.i }, parent);
      if (cur.opacity !== undefined) r.setAttribute("fill-opacity", cur.opacity);
      if (cur.merged) r.setAttribute("data-merged", cur.merged);
      drawn++;
      cur = null;
    }
    list.forEach(function (it) {
      var s = it.s;
      if (!inView(s.a, s.b)) return;
      var x0 = Math.max(x(s.a), GUT - 1), x1 = Math.min(x(s.b), W - RIGHT + 1);
      var f = fillOf(s);
      if (cur && x0 - cur.x1 < 1 && (x1 - x0 < 1 || cur.x1 - cur.x0 < 1)) {
        if (x1 - x0 > cur.w) { cur.w = x1 - x0; cur.fill = f.fill; cur.opacity = f.opacity; cur.i = it.i; }
        cur.x1 = Math.max(cur.x1, x1);
        cur.merged = (cur.merged || 1) + 1;
        return;
      }
      flush();
      cur = { x0: x0, x1: x1, w: x1 - x0, fill: f.fill, opacity: f.opacity, i: it.i };
    });
    flush();
    return drawn;
  }

  var beliefsByLane = [], deadByLane = [], pausedByLane = [];
  for (var l0 = 0; l0 < N; l0++) { beliefsByLane.push([]); deadByLane.push([]); pausedByLane.push([]); }
  D.beliefs.forEach(function (s, i) { beliefsByLane[s.l].push({ s: s, i: i }); });
  D.dead.forEach(function (s, i) { deadByLane[s.l].push({ s: s, i: i }); });
  D.paused.forEach(function (s, i) { pausedByLane[s.l].push({ s: s, i: i }); });
  var leaderItems = D.leaders.map(function (s, i) { return { s: s, i: i }; });

  function drawLanes() {
    var stats = { bands: 0 };
    text(layers.labels, "cluster", { x: 6, y: CLUSTER_Y + CLUSTER_H - 2, "class": "lanelabel" });
    bandRow(leaderItems, CLUSTER_Y, CLUSTER_H, function (s) {
      return s.v ? { fill: color(s.v), opacity: 0.85 } : s.stop ? { fill: "url(#pat-stop)" } : { fill: "url(#pat-none)" };
    }, "cluster-seg", "leader", layers.bands);
    // A split network's stretch: a stripe per component, in its leader's colour (hatched: none).
    leaderItems.forEach(function (it) {
      var s = it.s;
      if (!s.parts || !inView(s.a, s.b)) return;
      var x0 = Math.max(x(s.a), GUT - 1), x1 = Math.min(x(s.b), W - RIGHT + 1), ph = CLUSTER_H / s.parts.length;
      if (x1 - x0 < 1) return;
      s.parts.forEach(function (p, pi) {
        el("rect", { x: x0, y: CLUSTER_Y + pi * ph, width: x1 - x0, height: ph, fill: p.v ? color(p.v) : "url(#pat-none)", "fill-opacity": p.v ? 0.85 : null, "class": "cluster-part", "data-tip": "leader", "data-i": it.i }, layers.bands);
      });
    });
    var every = LANE_H >= 12 ? 1 : Math.ceil(12 / LANE_H);
    for (var l = 0; l < N; l++) {
      if (!shown(l)) continue;
      var y = laneY(l), top = y - LANE_H / 2 + 1, h = LANE_H - 2;
      stats.bands += bandRow(beliefsByLane[l], top, h, function (s) {
        return s.v ? { fill: color(s.v), opacity: 0.3 } : { fill: "url(#pat-bottom)" };
      }, "band", "belief", layers.bands);
      bandRow(deadByLane[l], top, h, function () { return { fill: "#8d939c", opacity: 0.6 }; }, "dead", "dead", layers.bands);
      bandRow(pausedByLane[l], top, h, function () { return { fill: "url(#pat-paused)" }; }, "paused", "paused", layers.bands);
      el("line", { x1: GUT, x2: W - RIGHT, y1: y, y2: y, stroke: "#b9bfc8", "stroke-width": 1, "class": "lane", "data-lane": l }, layers.lanes);
      if (rowOf[l] % every === 0) {
        el("rect", { x: 6, y: y - 4, width: 8, height: 8, fill: D.lanes[l].color, rx: 2 }, layers.labels);
        text(layers.labels, D.lanes[l].label, { x: 18, y: y + 4, "class": "lanelabel" });
      }
      // The lane's name is a button: click it to hide the lane (the bar above the diagram shows it again).
      el("rect", { x: 0, y: y - LANE_H / 2, width: GUT - 4, height: LANE_H, fill: "transparent", "class": "lanehit", "data-lane": l, "data-tip": "lane", "data-i": l }, layers.labels);
    }
    D.incs.forEach(function (inc, i) {
      if (!shown(inc.l)) return;
      var y = laneY(inc.l);
      if (inView(inc.a, inc.a)) {
        var px = x(inc.a);
        el("line", { x1: px, x2: px, y1: y - LANE_H / 2 + 1, y2: y + LANE_H / 2 - 1, stroke: "#263238", "stroke-width": 2.5, "class": "inc", "data-tip": "inc", "data-i": i }, layers.lanes);
        if (inc.inc > 1) text(layers.lanes, "#" + inc.inc, { x: px + 3, y: y - LANE_H / 2 + 10, "class": "inclabel", "font-weight": 700 });
      }
      if (inc.end === "killed" && inView(inc.b, inc.b)) {
        text(layers.lanes, "✕", { x: x(inc.b) + 2, y: y + 4, fill: "#c62828", "font-weight": 700, "data-tip": "inc", "data-i": i });
      }
    });
    return stats;
  }

  function drawShades() {
    var parts = 0, splits = 0;
    if (D.stop && inView(D.stop.a, D.stop.b)) {
      var sx0 = Math.max(x(D.stop.a), GUT - 1), sx1 = Math.min(x(D.stop.b), W - RIGHT + 1);
      el("rect", { x: sx0, y: LANES_TOP - 4, width: Math.max(sx1 - sx0, 1), height: NV * LANE_H + 8, fill: "url(#pat-stop)", "fill-opacity": 0.6, "class": "runstop", "data-tip": "stop", "data-i": 0 }, layers.shade);
      if (sx1 - sx0 > 40) text(layers.shade, "stop", { x: sx0 + 4, y: LANES_TOP + 8, fill: "#455a64" });
    }
    D.partitions.forEach(function (p, i) {
      if (!inView(p.a, p.b)) return;
      var x0 = Math.max(x(p.a), GUT - 1), x1 = Math.min(x(p.b), W - RIGHT + 1);
      el("rect", { x: x0, y: LANES_TOP - 4, width: Math.max(x1 - x0, 1), height: NV * LANE_H + 8, fill: "#7e57c2", "fill-opacity": 0.14, stroke: "#7e57c2", "stroke-opacity": 0.5, "class": "partition", "data-tip": "partition", "data-i": i }, layers.shade);
      if (x1 - x0 > 60) text(layers.shade, p.label, { x: x0 + 4, y: LANES_TOP + 8, fill: "#4527a0" });
      parts++;
    });
    // A split-brain window: hatched across the lanes, its leaders' lanes in red.
    D.split_brain.forEach(function (w, i) {
      if (!inView(w.a, w.b)) return;
      var x0 = Math.max(x(w.a), GUT - 1), x1 = Math.min(x(w.b), W - RIGHT + 1), wd = Math.max(x1 - x0, 1.5);
      el("rect", { x: x0, y: LANES_TOP - 4, width: wd, height: NV * LANE_H + 8, fill: "url(#pat-split)", "fill-opacity": 0.35, stroke: "#e53935", "stroke-opacity": 0.7, "stroke-dasharray": "4 2", "class": "splitbrain", "data-tip": "split", "data-i": i }, layers.shade);
      w.lanes.forEach(function (l) {
        if (!shown(l)) return;
        el("rect", { x: x0, y: laneY(l) - LANE_H / 2, width: wd, height: LANE_H, fill: "#e53935", "fill-opacity": 0.22, "class": "splitlead", "data-tip": "split", "data-i": i }, layers.shade);
      });
      if (x1 - x0 > 90) text(layers.shade, "split brain: leaders " + w.leaders.join(", "), { x: x0 + 4, y: LANES_TOP + NV * LANE_H + 2, fill: "#b71c1c" });
      splits++;
    });
    D.overlaps.forEach(function (o, i) {
      if (!inView(o.a, o.b)) return;
      var x0 = Math.max(x(o.a), GUT - 1), x1 = Math.min(x(o.b), W - RIGHT + 1);
      o.lanes.forEach(function (l) {
        if (!shown(l)) return;
        el("rect", { x: x0, y: laneY(l) - LANE_H / 2, width: Math.max(x1 - x0, 1.5), height: LANE_H, fill: "#e53935", "fill-opacity": o.beyond_grace ? 0.35 : 0.15, "class": "overlap", "data-tip": "overlap", "data-i": i }, layers.shade);
      });
    });
    return { parts: parts, splits: splits };
  }

  // visibleMsgs lists the arrows crossing the view, but for the hidden kinds and the hidden lanes'
  // (counted in filtered).
  var filtered = 0;
  function visibleMsgs() {
    var lo = lower(M.s, view.a - D.max_latency - 1), hi2 = lower(M.s, view.b + 1), out = [];
    var any = Object.keys(hiddenKinds).length + Object.keys(hiddenLanes).length > 0;
    filtered = 0;
    for (var i = lo; i < hi2; i++) {
      var s = M.s[i], r = M.r[i];
      if ((s > r ? s : r) < view.a || (s < r ? s : r) > view.b) continue;
      if (any && (hiddenKinds[M.k[i]] || !shown(M.f[i]) || !shown(M.t[i]))) { filtered++; continue; }
      out.push(i);
    }
    return out;
  }

  function arrowEnd(i) {
    var y1 = laneY(M.f[i]), y2 = laneY(M.t[i]);
    if (M.g[i] >= 2) return { x: x(M.r[i]), y: y1 + (y2 - y1) * 0.35 };
    return { x: x(M.r[i]), y: y2 };
  }

  function drawMsgs(idx) {
    var g = layers.msgs;
    for (var n = 0; n < idx.length; n++) {
      var i = idx[n], x1 = x(M.s[i]), y1 = laneY(M.f[i]), e = arrowEnd(i), k = M.k[i];
      var attrs = { stroke: D.kinds[k].color, "stroke-width": 1.3, "class": "msg", "data-tip": "msg", "data-i": i, fill: "none" };
      if (M.g[i] === 0) attrs["marker-end"] = "url(#ah" + k + ")";
      else attrs["stroke-dasharray"] = M.g[i] === 3 ? "1.5 2.5" : "4 3";
      if (M.f[i] === M.t[i] && M.g[i] === 0) {
        attrs.d = "M" + x1 + "," + y1 + " Q" + ((x1 + e.x) / 2) + "," + (y1 - LANE_H * 0.8) + " " + e.x + "," + e.y;
        el("path", attrs, g);
      } else {
        attrs.x1 = x1; attrs.y1 = y1; attrs.x2 = e.x; attrs.y2 = e.y;
        el("line", attrs, g);
      }
    }
  }

  // bundleMsgs groups the messages in view per (sender lane, receiver lane, column of the send's x).
  // The columns start as narrow as the lane pairs in view allow for BUNDLE_TARGET bundles at most,
  // and are narrowed further while the bundles stay sparse.
  function bundleMsgs(idx) {
    var scale = PW / (view.b - view.a), pairs = new Set();
    for (var n = 0; n < idx.length; n++) pairs.add(M.f[idx[n]] * N + M.t[idx[n]]);
    var B = 4;
    while (B < PW && pairs.size * (Math.ceil(PW / B) + 2) > BUNDLE_TARGET) B *= 2;
    var groups = aggregate(idx, B, scale);
    while (B > 4 && groups.size < BUNDLE_TARGET / 4) {
      var finer = aggregate(idx, B / 2, scale);
      if (finer.size > BUNDLE_TARGET) break;
      groups = finer;
      B /= 2;
    }
    bundles = [];
    groups.forEach(function (b) { bundles.push(b); });
    var g = layers.msgs, labels = bundles.length <= 1500;
    bundles.forEach(function (b, bi) {
      var top = -1, topN = -1;
      for (var k in b.kinds) if (b.kinds[k] > topN) { topN = b.kinds[k]; top = +k; }
      var x1 = b.sx / b.n, y1 = laneY(b.f), x2 = b.ex / b.n, y2 = b.ey / b.n;
      el("line", { x1: x1, y1: y1, x2: x2, y2: y2, stroke: D.kinds[top].color, "stroke-width": Math.min(1 + Math.log2(b.n), 7), "stroke-opacity": 0.75, "marker-end": "url(#ah" + top + ")", "class": "bundle", "data-tip": "bundle", "data-i": bi, "data-n": b.n }, g);
      if (labels && b.n > 1) text(g, String(b.n), { x: (x1 + x2) / 2 + 2, y: (y1 + y2) / 2 - 2, "class": "count" });
    });
    return B;
  }

  function aggregate(idx, B, scale) {
    var groups = new Map(), cols = Math.ceil(PW / B) + 2;
    for (var n = 0; n < idx.length; n++) {
      var i = idx[n], s = M.s[i], sx = GUT + (s - view.a) * scale;
      var col = clamp(Math.floor((sx - GUT) / B) + 1, 0, cols - 1);
      var key = (M.f[i] * N + M.t[i]) * cols + col, b = groups.get(key);
      if (b === undefined) {
        b = { f: M.f[i], t: M.t[i], n: 0, sx: 0, ex: 0, ey: 0, a: s, b: s, kinds: {}, undelivered: 0 };
        groups.set(key, b);
      }
      var y1 = laneY(M.f[i]), y2 = laneY(M.t[i]);
      b.n++;
      b.sx += sx;
      b.ex += GUT + (M.r[i] - view.a) * scale;
      b.ey += M.g[i] >= 2 ? y1 + (y2 - y1) * 0.35 : y2;
      if (s < b.a) b.a = s;
      if (s > b.b) b.b = s;
      b.kinds[M.k[i]] = (b.kinds[M.k[i]] || 0) + 1;
      if (M.g[i] !== 0) b.undelivered++;
    }
    return groups;
  }

  // The failure detector's markers sit above the lane line: a suspicion is usually logged at the
  // same instant as the elect and the sends it causes.
  function markY(i) {
    var y = laneY(K.l[i]);
    return K.y[i] === T.suspect || K.y[i] === T.trust ? y - Math.max(4, LANE_H * 0.28) : y;
  }

  function drawMarks() {
    var lo = lower(K.t, view.a), hi2 = lower(K.t, view.b + 1), count = hi2 - lo, g = layers.marks;
    markGroups = [];
    var anyHidden = NV < N;
    if (anyHidden) for (var c = lo; c < hi2; c++) if (!shown(K.l[c])) count--;
    if (count <= MARK_LIMIT) {
      for (var i = lo; i < hi2; i++) if (!anyHidden || shown(K.l[i])) glyph(g, K.y[i], x(K.t[i]), markY(i), K.a[i], { "class": "mark mark-" + D.types[K.y[i]], "data-tip": "mark", "data-i": i });
      return { inView: count, drawn: count, B: 0 };
    }
    var rows = new Set(), nt = D.types.length, scale = PW / (view.b - view.a);
    for (var r = lo; r < hi2; r++) if (shown(K.l[r])) rows.add(K.l[r] * nt + K.y[r]);
    var B = 3, groups;
    while (B < PW && rows.size * (Math.ceil(PW / B) + 2) > MARK_LIMIT) B *= 2;
    for (;;) {
      groups = new Map();
      var cols = Math.ceil(PW / B) + 2;
      for (var j = lo; j < hi2; j++) {
        if (anyHidden && !shown(K.l[j])) continue;
        var col = clamp(Math.floor((K.t[j] - view.a) * scale / B) + 1, 0, cols - 1), key = (K.l[j] * nt + K.y[j]) * cols + col, mg = groups.get(key);
        if (!mg) { mg = { first: j, n: 0, a: K.t[j], b: K.t[j] }; groups.set(key, mg); }
        mg.n++; mg.b = K.t[j];
      }
      if (groups.size <= MARK_LIMIT || B >= PW) break;
      B *= 2;
    }
    groups.forEach(function (mg) { markGroups.push(mg); });
    markGroups.forEach(function (mg, gi) {
      var i = mg.first;
      glyph(g, K.y[i], x(K.t[i]), markY(i), K.a[i], { "class": "mark markgroup mark-" + D.types[K.y[i]], "data-tip": "markgroup", "data-i": gi, "data-n": mg.n });
    });
    return { inView: count, drawn: markGroups.length, B: B };
  }

  var OP_COLOR = { kill: "#c62828", restart: "#2e7d32", pause: "#ef6c00", resume: "#ef6c00", partition: "#6a1b9a", heal: "#6a1b9a", link: "#1565c0" };

  function drawFaults() {
    var rowEnd = [], drawn = 0;
    for (var r = 0; r < FROWS; r++) rowEnd.push(-1e9);
    D.faults.forEach(function (f, i) {
      if (!inView(f.t, f.t)) return;
      var px = x(f.t), c = f.error ? "#9e9e9e" : (OP_COLOR[f.op] || "#455a64");
      el("line", { x1: px, x2: px, y1: AXIS + 2, y2: H - 4, stroke: c, "stroke-width": 1.5, "stroke-dasharray": f.error ? "3 3" : null, "class": "fault", "data-tip": "fault", "data-i": i }, layers.faults);
      var label = f.label + (f.error ? " (not applied)" : ""), w = label.length * 6 + 8;
      for (var row = 0; row < FROWS; row++) {
        if (px - rowEnd[row] > 0) {
          fitText(text(layers.axis, label, { x: px + 3, y: AXIS + 10 + row * FROW, fill: c, "class": "faultlabel", "data-tip": "fault", "data-i": i }), GUT, W - 2);
          rowEnd[row] = px + w;
          break;
        }
      }
      drawn++;
    });
    return drawn;
  }

  function drawHighlight() {
    if (!hi || !inView(hi.a, hi.b)) return;
    var x0 = x(hi.a) - 4, x1 = x(hi.b) + 4;
    hi.lanes.forEach(function (l) {
      if (!shown(l)) return;
      el("rect", { x: x0, y: laneY(l) - LANE_H / 2, width: Math.max(x1 - x0, 8), height: LANE_H, fill: "none", stroke: "#d50000", "stroke-width": 2.5, "class": "highlight flash" }, layers.hi);
    });
  }

  function drawOverview() {
    var w = ov.getBoundingClientRect().width || W, h = 36;
    ov.setAttribute("viewBox", "0 0 " + w + " " + h);
    ov.setAttribute("height", h);
    ov.textContent = "";
    var max = 1;
    D.density.forEach(function (c) { if (c > max) max = c; });
    var bw = w / D.density.length, d = "";
    D.density.forEach(function (c, i) {
      if (c > 0) { var bh = Math.max(1, Math.sqrt(c / max) * (h - 4)); d += "M" + (i * bw) + "," + h + "v" + (-bh) + "h" + Math.max(bw, 0.6) + "v" + bh + "z"; }
    });
    el("rect", { x: 0, y: 0, width: w, height: h, fill: "#f7f8fa" }, ov);
    el("path", { d: d, fill: "#90a4ae" }, ov);
    var span = full.b - full.a;
    D.faults.forEach(function (f) {
      var px = (f.t - full.a) / span * w;
      el("line", { x1: px, x2: px, y1: 0, y2: h, stroke: OP_COLOR[f.op] || "#455a64", "stroke-width": 1 }, ov);
    });
    var x0 = (view.a - full.a) / span * w, x1 = (view.b - full.a) / span * w;
    el("rect", { x: x0, y: 1, width: Math.max(x1 - x0, 2), height: h - 2, fill: "#1e88e5", "fill-opacity": 0.12, stroke: "#1e88e5", "stroke-width": 1.5, "class": "window" }, ov);
  }

  function render() {
    var start = performance.now();
    W = Math.max(svg.getBoundingClientRect().width || 0, 400);
    if (!isFinite(W) || W <= 0) W = 1200;
    PW = W - GUT - RIGHT;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("height", H);
    clipRect.setAttribute("width", PW);
    clipRect.setAttribute("height", H);
    clear();
    drawAxis();
    drawLanes();
    var shades = drawShades(), parts = shades.parts;
    var idx = visibleMsgs(), msgNote = "", B = 0;
    bundles = [];
    if (idx.length <= ARROW_LIMIT) drawMsgs(idx);
    else B = bundleMsgs(idx);
    var mk = drawMarks();
    var faults = drawFaults();
    drawHighlight();
    drawOverview();
    var notes = [];
    if (B) {
      notes.push("Bundled: the " + idx.length.toLocaleString("en") + " messages in view are drawn as " + bundles.length.toLocaleString("en") +
        " arrows, one per lane pair and " + B + " px column (the number on an arrow is how many messages it stands for; its colour is their most common kind). Zoom in to under " +
        ARROW_LIMIT.toLocaleString("en") + " messages in view to see each one.");
    }
    if (mk.B) {
      notes.push("Bundled: the " + mk.inView.toLocaleString("en") + " event markers in view are drawn as " + mk.drawn.toLocaleString("en") +
        ", one per lane, event type and " + mk.B + " px column (hover for the count).");
    }
    var hk = Object.keys(hiddenKinds).map(function (k) { return D.kinds[k].name; });
    if (hk.length || NV < N) {
      notes.push("Filtered: " + (hk.length ? "kinds " + hk.join(", ") + " hidden" : "") + (hk.length && NV < N ? "; " : "") +
        (NV < N ? (N - NV) + " lane(s) hidden" : "") + " — " + filtered.toLocaleString("en") + " message(s) in view not drawn.");
    }
    notice.textContent = notes.join(" ");
    hiddenBar();
    rangeEl.textContent = ms(view.a) + " – " + ms(view.b) + " (" + ms(view.b - view.a) + " in view, " + idx.length.toLocaleString("en") + " of " + M.s.length.toLocaleString("en") + " messages)";
    svg.setAttribute("data-rendered", "1");
    svg.setAttribute("data-lanes", N);
    svg.setAttribute("data-in-view", idx.length);
    svg.setAttribute("data-arrows", B ? 0 : idx.length);
    svg.setAttribute("data-bundles", bundles.length);
    svg.setAttribute("data-marks", mk.drawn);
    svg.setAttribute("data-faults", faults);
    svg.setAttribute("data-partitions", parts);
    svg.setAttribute("data-splits", shades.splits);
    svg.setAttribute("data-filtered", filtered);
    svg.setAttribute("data-shown-lanes", NV);
    svg.setAttribute("data-view", Math.round(view.a) + "," + Math.round(view.b));
    svg.setAttribute("data-parse-ms", Math.round(parseMS));
    svg.setAttribute("data-render-ms", Math.round(performance.now() - start));
  }

  // hiddenBar lists the hidden lanes, each a button that shows it again.
  var hiddenEl = document.getElementById("hidden-lanes");
  function hiddenBar() {
    if (!hiddenEl) return;
    hiddenEl.textContent = "";
    if (NV === N) { hiddenEl.hidden = true; return; }
    hiddenEl.hidden = false;
    hiddenEl.appendChild(document.createTextNode("Hidden lanes: "));
    function button(label, title, act) {
      var b = document.createElement("button");
      b.type = "button"; b.textContent = label; b.title = title;
      b.addEventListener("click", act);
      hiddenEl.appendChild(b);
    }
    for (var l = 0; l < N; l++) {
      if (!hiddenLanes[l]) continue;
      (function (l) { button(D.lanes[l].label + " ✕", "show " + D.lanes[l].label + " again", function () { showLane(l); }); })(l);
    }
    button("show all lanes", "show every lane", function () { hiddenLanes = {}; layout(); render(); });
  }
  function hideLane(l) {
    if (NV <= 1) return; // keep one lane at least
    hiddenLanes[l] = true; layout(); tip.hidden = true; render();
  }
  function showLane(l) { delete hiddenLanes[l]; layout(); render(); }

  var pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; render(); });
  }

  // --- navigation --------------------------------------------------------------------------------
  function setView(a, b) {
    var span = full.b - full.a, w = clamp(b - a, 5, span * 1.02), slack = span * 0.05;
    a = clamp(a, full.a - slack, full.b + slack - w);
    view = { a: a, b: a + w };
    if (openedEl) openedEl.textContent = "";
    schedule();
  }
  function zoom(f, at) {
    if (at === undefined) at = (view.a + view.b) / 2;
    var w = view.b - view.a, nw = w * f;
    setView(at - (at - view.a) * nw / w, at - (at - view.a) * nw / w + nw);
  }
  function pan(frac) { var w = view.b - view.a; setView(view.a + w * frac, view.b + w * frac); }
  function zoomTo(a, b, lanes) {
    a = +a; b = +b;
    var w = Math.max(b - a, 2000), pad = w * 0.3;
    hi = lanes ? { a: a, b: b, lanes: lanes } : null;
    setView(a - pad, a + w + pad);
  }

  svg.addEventListener("wheel", function (e) {
    e.preventDefault();
    var rect = svg.getBoundingClientRect(), px = e.clientX - rect.left;
    var unit = e.deltaMode === 1 ? 30 : e.deltaMode === 2 ? 300 : 1;
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      pan((e.deltaX || e.deltaY) * unit / PW);
      return;
    }
    zoom(Math.exp(e.deltaY * unit * 0.0015), tAt(px));
  }, { passive: false });

  var drag = null;
  svg.addEventListener("pointerdown", function (e) {
    if (e.button !== 0) return;
    if (e.target.classList && e.target.classList.contains("lanehit")) { hideLane(+e.target.getAttribute("data-lane")); return; }
    drag = { x: e.clientX, a: view.a, b: view.b };
    svg.setPointerCapture(e.pointerId);
    svg.classList.add("dragging");
  });
  svg.addEventListener("pointermove", function (e) {
    if (drag) {
      var dt = (e.clientX - drag.x) * (drag.b - drag.a) / PW;
      setView(drag.a - dt, drag.b - dt);
      tip.hidden = true;
      return;
    }
    showTip(e);
  });
  function endDrag() { drag = null; svg.classList.remove("dragging"); }
  svg.addEventListener("pointerup", endDrag);
  svg.addEventListener("pointercancel", endDrag);
  svg.addEventListener("pointerleave", function () { tip.hidden = true; });
  svg.addEventListener("keydown", function (e) {
    var k = e.key;
    if (k === "+" || k === "=") zoom(0.5);
    else if (k === "-" || k === "_") zoom(2);
    else if (k === "ArrowLeft") pan(-0.25);
    else if (k === "ArrowRight") pan(0.25);
    else if (k === "0") { hi = null; setView(full.a, full.b); }
    else return;
    e.preventDefault();
  });
  document.querySelectorAll(".toolbar button").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var act = btn.getAttribute("data-act");
      if (act === "in") zoom(0.5);
      else if (act === "out") zoom(2);
      else if (act === "left") pan(-0.25);
      else if (act === "right") pan(0.25);
      else { hi = null; setView(full.a, full.b); }
    });
  });
  function overviewAt(e) {
    var rect = ov.getBoundingClientRect(), t = full.a + (e.clientX - rect.left) / rect.width * (full.b - full.a), w = view.b - view.a;
    setView(t - w / 2, t + w / 2);
  }
  var ovDrag = false;
  ov.addEventListener("pointerdown", function (e) { ovDrag = true; ov.setPointerCapture(e.pointerId); overviewAt(e); });
  ov.addEventListener("pointermove", function (e) { if (ovDrag) overviewAt(e); });
  ov.addEventListener("pointerup", function () { ovDrag = false; });

  function lanesAttr(s) { return s ? s.split(",").filter(function (v) { return v !== ""; }).map(Number) : null; }
  document.querySelectorAll("tr[data-a]").forEach(function (row) {
    row.addEventListener("click", function () {
      zoomTo(row.getAttribute("data-a"), row.getAttribute("data-b"), lanesAttr(row.getAttribute("data-lanes")));
      document.getElementById("diagram-section").scrollIntoView({ behavior: "smooth" });
    });
  });
  document.querySelectorAll("a.jump").forEach(function (a) {
    a.addEventListener("click", function (e) {
      e.preventDefault();
      zoomTo(a.getAttribute("data-a"), a.getAttribute("data-b"), lanesAttr(a.getAttribute("data-lanes")));
      document.getElementById("diagram-section").scrollIntoView({ behavior: "smooth" });
    });
  });
  // The "Over time" charts: a bucket, an election's bar or a fault shows that stretch in the diagram.
  document.querySelectorAll("#over-time [data-a]").forEach(function (g) {
    g.addEventListener("click", function () {
      zoomTo(g.getAttribute("data-a"), g.getAttribute("data-b"), null);
      document.getElementById("diagram-section").scrollIntoView({ behavior: "smooth" });
    });
  });
  document.querySelectorAll(".swatch[data-leader]").forEach(function (s) { s.style.background = color(+s.getAttribute("data-leader")); });
  window.addEventListener("resize", schedule);

  // --- tooltips ----------------------------------------------------------------------------------
  function tipText(kind, i) {
    var s;
    switch (kind) {
      case "msg":
        s = D.kinds[M.k[i]].name + " " + M.id[i] + ": " + name(M.f[i]) + " → " + name(M.t[i]) + "\nsent " + ms(M.s[i]);
        if (M.g[i] === 0) s += ", received " + ms(M.r[i]) + " (after " + ms(M.r[i] - M.s[i]) + ")";
        else if (M.g[i] === 1) s += ", dropped by " + name(M.t[i]) + " at " + ms(M.r[i]);
        else if (M.g[i] === 2) s += ", dropped by its sender at " + ms(M.r[i]);
        else s += ", never received nor dropped";
        if (M.x[i] >= 0) s += "\n" + str(M.x[i]);
        return s;
      case "bundle": {
        var b = bundles[i], parts = [];
        for (var k in b.kinds) parts.push(D.kinds[k].name + " " + b.kinds[k]);
        return b.n + " messages " + name(b.f) + " → " + name(b.t) + ", sent " + ms(b.a) + " – " + ms(b.b) + "\n" + parts.join(", ") +
          (b.undelivered ? "\n" + b.undelivered + " not delivered" : "") + "\nzoom in to see each";
      }
      case "mark": return markText(i);
      case "markgroup": {
        var mg = markGroups[i];
        return mg.n + " × " + D.types[K.y[mg.first]] + " on " + name(K.l[mg.first]) + ", " + ms(mg.a) + " – " + ms(mg.b) + "\nfirst: " + markText(mg.first);
      }
      case "belief": {
        var bl = D.beliefs[i];
        return name(bl.l) + (bl.v ? " follows n" + bl.v : ": ⊥ (no leader: electing)") + "\n" + ms(bl.a) + " – " + ms(bl.b);
      }
      case "leader": { var ls = D.leaders[i]; return (ls.parts ? "split: " : "") + ls.text + "\n" + ms(ls.a) + " – " + ms(ls.b); }
      case "dead": { var dd = D.dead[i]; return name(dd.l) + " dead (no process)\n" + ms(dd.a) + " – " + ms(dd.b); }
      case "paused": { var p = D.paused[i]; return name(p.l) + " paused (SIGSTOP)\n" + ms(p.a) + " – " + ms(p.b); }
      case "inc": {
        var inc = D.incs[i];
        return name(inc.l) + " incarnation " + inc.inc + (inc.pid ? " (pid " + inc.pid + ")" : "") + "\n" + ms(inc.a) + " – " + ms(inc.b) + ", ended: " + inc.end +
          (inc.run_stop ? " (the run's orderly stop)" : "");
      }
      case "fault": {
        var f = D.faults[i];
        return f.label + " at " + ms(f.t) + (f.step ? "\nstep: " + f.step : "") + (f.error ? "\nnot applied: " + f.error : "");
      }
      case "partition": { var pt = D.partitions[i]; return pt.label + "\n" + ms(pt.a) + " – " + ms(pt.b); }
      case "split": {
        var w = D.split_brain[i];
        return "split brain: leaders " + w.leaders.map(function (id) { return "n" + id; }).join(", ") + " each led a component for " + ms(w.b - w.a) +
          "\nfrom " + ms(w.a) + " (not a violation: uniqueness is judged per component)";
      }
      case "stop": return D.stop.label + "\n" + ms(D.stop.a) + " – " + ms(D.stop.b);
      case "lane": {
        var ln = D.lanes[i], pos = D.order === "ring" ? ", ring position " + (i + 1) + " of " + N : "";
        return ln.label + " (node " + ln.id + pos + ")\nclick to hide this lane";
      }
      case "overlap": {
        var o = D.overlaps[i];
        return o.lanes.map(name).join(", ") + " believed in themselves at once for " + ms(o.b - o.a) + (o.beyond_grace ? " (beyond the grace)" : " (within the grace)") + "\nfrom " + ms(o.a);
      }
    }
    return "";
  }

  function markText(i) {
    var y = D.types[K.y[i]], a = K.a[i], s = name(K.l[i]) + " " + y, x2 = str(K.x[i]);
    switch (y) {
      case "start": s += " (incarnation " + a + ")"; break;
      case "elect": s += a ? " (round " + a + "): leader now ⊥" : ": leader now ⊥"; break;
      case "leader": s += " n" + a; break;
      case "suspect": case "trust": s += " n" + a; break;
      case "pulse": s += " " + a + " started"; break;
      case "drop": case "orphan":
        if (a >= 0) s += " of " + D.kinds[M.k[a]].name + " " + M.id[a] + " (" + name(M.f[a]) + " → " + name(M.t[a]) + ")";
        break;
    }
    s += " at " + ms(K.t[i]);
    if (x2) s += "\n" + x2;
    return s;
  }

  function showTip(e) {
    var t = e.target;
    while (t && t !== svg && !(t.getAttribute && t.getAttribute("data-tip"))) t = t.parentNode;
    if (!t || t === svg) { tip.hidden = true; return; }
    var s = tipText(t.getAttribute("data-tip"), +t.getAttribute("data-i"));
    if (t.getAttribute("data-merged")) s += "\n(" + t.getAttribute("data-merged") + " stretches within a pixel: zoom in)";
    tip.textContent = s;
    tip.hidden = false;
    var px = e.clientX + 14, py = e.clientY + 14;
    if (px + 420 > window.innerWidth) px = Math.max(4, e.clientX - 430);
    tip.style.left = px + "px";
    tip.style.top = py + "px";
  }

  // #view=FROM,TO (ms) opens the page on that window, and the address follows the view, so that a
  // view can be shared as a link.
  // Otherwise it opens on D.initial: the first election (or fault) with its arrows in sight; the
  // "whole run" button (or 0) shows everything.
  var m = /view=(-?[\d.]+),(-?[\d.]+)/.exec(location.hash);
  var openedEl = document.getElementById("opened");
  if (m && +m[2] > +m[1]) view = { a: +m[1] * 1000, b: +m[2] * 1000 };
  else if (D.initial && D.initial.b > D.initial.a && (D.initial.a > full.a || D.initial.b < full.b)) {
    view = { a: D.initial.a, b: D.initial.b };
    if (openedEl) openedEl.textContent = "showing " + D.initial.label + " — “whole run” shows all of it";
  }
  function remember() {
    if (!history.replaceState) return;
    try { history.replaceState(null, "", "#view=" + (view.a / 1000).toFixed(3) + "," + (view.b / 1000).toFixed(3)); } catch (e) { /* file: URLs may refuse */ }
  }
  var rememberTimer = 0;
  var render0 = render;
  render = function () { render0(); clearTimeout(rememberTimer); rememberTimer = setTimeout(remember, 300); };

  legend();
  render0();
  window.leaderlabReport = { zoomTo: zoomTo, view: function () { return { a: view.a, b: view.b }; }, render: render };
})();
