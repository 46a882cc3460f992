'use strict';
// leaderlab's lab page: plain JavaScript, no library, nothing loaded from elsewhere. Every request
// carries the token of the page's own address.
const TOKEN = new URLSearchParams(location.search).get('token') || '';
const $ = id => document.getElementById(id);
const SVGNS = 'http://www.w3.org/2000/svg';
const q = p => p + (p.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(TOKEN);
window.labStats = {events: 0, batches: 0, lagMs: 0, maxLagMs: 0, eps: 0, dropped: 0};

function say(text) { const m = $('msg'); m.textContent = text || ''; m.hidden = !text; }
async function api(method, path, body) {
  const r = await fetch(q(path), {method, headers: {'Content-Type': 'application/json', 'X-Leaderlab-Token': TOKEN},
    body: body === undefined ? undefined : JSON.stringify(body)});
  const j = await r.json().catch(() => ({error: r.status + ' ' + r.statusText}));
  if (!r.ok) throw new Error(j.error || r.statusText);
  return j;
}
const act = f => async e => { if (e) e.preventDefault(); try { say(''); await f(e); } catch (err) { say(err.message); } };
const el = (tag, attrs, text) => { const e = document.createElement(tag); for (const k in attrs || {}) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; return e; };
const svgEl = (tag, attrs) => { const e = document.createElementNS(SVGNS, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); return e; };

// Tabs.
for (const b of document.querySelectorAll('#tabs button')) b.onclick = () => {
  for (const x of document.querySelectorAll('#tabs button')) x.classList.toggle('on', x === b);
  for (const s of document.querySelectorAll('.tab')) s.classList.toggle('on', s.id === b.dataset.tab);
  if (b.dataset.tab === 'runs') loadRuns().catch(e => say(e.message));
  if (b.dataset.tab === 'traces') loadTraces().catch(e => say(e.message));
};
const showTab = name => document.querySelector(`#tabs button[data-tab=${name}]`).click();

// The leader the live nodes follow: the belief most of them hold (ties: the higher ID).
function followed(nodes) {
  const c = {};
  for (const n of nodes) if (n.st !== 'dead' && n.st !== 'paused' && n.l) c[n.l] = (c[n.l] || 0) + 1;
  let best = 0;
  for (const l in c) if (!best || c[l] > c[best] || (c[l] === c[best] && +l > best)) best = +l;
  return best;
}

// A cluster picture: the layout scaled into the SVG, a group per node (data-id, data-st).
class Net {
  constructor(svg, onPick, onCut) { this.svg = svg; this.onPick = onPick; this.onCut = onCut; this.pos = {}; this.sel = 0; this.dots = []; }
  draw(layout) {
    const svg = this.svg; svg.textContent = '';
    const W = 520, H = 420, pad = 36, ns = layout.nodes;
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const n of ns) { x0 = Math.min(x0, n.x); x1 = Math.max(x1, n.x); y0 = Math.min(y0, n.y); y1 = Math.max(y1, n.y); }
    const s = Math.min((W - 2 * pad) / Math.max(x1 - x0, 1e-9), (H - 2 * pad) / Math.max(y1 - y0, 1e-9));
    this.r = Math.max(3, Math.min(18, 0.35 * s));
    for (const n of ns) this.pos[n.id] = [pad + (n.x - x0) * s + (W - 2 * pad - (x1 - x0) * s) / 2, pad + (n.y - y0) * s + (H - 2 * pad - (y1 - y0) * s) / 2];
    this.edges = svgEl('g', {}); svg.appendChild(this.edges);
    const edges = layout.mesh && ns.length <= 16 ? ns.flatMap((a, i) => ns.slice(i + 1).map(b => [a.id, b.id])) : layout.edges;
    this.edgeEls = edges.map(([a, b]) => { const l = svgEl('line', {class: 'edge', x1: this.pos[a][0], y1: this.pos[a][1], x2: this.pos[b][0], y2: this.pos[b][1]}); l.ab = [a, b]; this.edges.appendChild(l); return l; });
    this.dotLayer = svgEl('g', {}); svg.appendChild(this.dotLayer);
    this.nodes = {};
    for (const n of ns) {
      const g = svgEl('g', {class: 'node', 'data-id': n.id, 'data-st': 'starting', transform: `translate(${this.pos[n.id][0]},${this.pos[n.id][1]})`});
      g.appendChild(svgEl('circle', {r: this.r}));
      if (this.r >= 7) { const t = svgEl('text', {}); t.textContent = n.id; g.appendChild(t); }
      const lab = svgEl('text', {class: 'lab', y: this.r + 9}); g.appendChild(lab); g.lab = lab;
      g.onclick = e => { e.stopPropagation(); this.pick(n.id); };
      svg.appendChild(g); this.nodes[n.id] = g;
    }
    this.cutting();
  }
  pick(id) {
    this.sel = this.sel === id ? 0 : id;
    for (const k in this.nodes) this.nodes[k].classList.toggle('sel', +k === this.sel);
    this.onPick(this.sel);
  }
  update(views, groups) {
    for (const v of views) {
      const g = this.nodes[v.id]; if (!g) continue;
      g.dataset.st = v.st; g.classList.toggle('sus', !!(v.sus && v.sus.length));
      if (g.lab && this.r >= 7) g.lab.textContent = v.st === 'follower' ? '→' + v.l : v.st === 'dead' || v.st === 'leader' ? v.st : v.st === 'electing' ? '⊥' : v.st === 'paused' ? 'paused' : '';
    }
    const side = {};
    (groups || []).forEach((gr, i) => gr.forEach(id => side[id] = i + 1));
    for (const l of this.edgeEls) l.classList.toggle('cut', !!groups && side[l.ab[0]] !== side[l.ab[1]]);
  }
  // A message as it flies: a dot from sender to receiver, shown for at least a moment.
  fly(from, to, drop) {
    if (this.dots.length > 400 || !this.pos[from] || !this.pos[to]) return;
    const c = svgEl('circle', {r: Math.max(2, this.r / 4), class: drop ? 'dot drop' : 'dot'});
    this.dotLayer.appendChild(c);
    this.dots.push({c, a: this.pos[from], b: this.pos[to], t0: performance.now(), dur: 450});
    if (this.dots.length === 1) requestAnimationFrame(() => this.animate());
  }
  animate() {
    const now = performance.now();
    this.dots = this.dots.filter(d => {
      const f = (now - d.t0) / d.dur;
      if (f >= 1) { d.c.remove(); return false; }
      d.c.setAttribute('cx', d.a[0] + (d.b[0] - d.a[0]) * f); d.c.setAttribute('cy', d.a[1] + (d.b[1] - d.a[1]) * f);
      return true;
    });
    if (this.dots.length) requestAnimationFrame(() => this.animate());
  }
  // Drag across the picture to cut it: the nodes on either side of the line become the sides.
  cutting() {
    if (!this.onCut) return;
    const svg = this.svg; let start = null, line = null;
    const at = e => { const r = svg.getBoundingClientRect(); return [(e.clientX - r.left) * 520 / r.width, (e.clientY - r.top) * 420 / r.height]; };
    svg.onpointerdown = e => { if (e.target !== svg) return; start = at(e); line = svgEl('line', {class: 'cutline', x1: start[0], y1: start[1], x2: start[0], y2: start[1]}); svg.appendChild(line); };
    svg.onpointermove = e => { if (line) { const p = at(e); line.setAttribute('x2', p[0]); line.setAttribute('y2', p[1]); } };
    svg.onpointerup = e => {
      if (!line) return; const p = at(e); line.remove(); line = null;
      if (Math.hypot(p[0] - start[0], p[1] - start[1]) < 20) return;
      const a = [], b = [];
      for (const id in this.pos) { const [x, y] = this.pos[id]; ((p[0] - start[0]) * (y - start[1]) - (p[1] - start[1]) * (x - start[0]) > 0 ? a : b).push(+id); }
      if (a.length && b.length) this.onCut(a, b);
    };
  }
}
const ranges = ids => { ids = ids.slice().sort((x, y) => x - y); const out = []; for (let i = 0; i < ids.length;) { let j = i; while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++; out.push(j > i ? ids[i] + '-' + ids[j] : '' + ids[i]); i = j + 1; } return out.join(','); };

// The space-time diagram: a lane per node, an arrow per message, marks for elect and leader, a
// red line per fault. It grows as events come; it is redrawn at most a few times a second.
class Diagram {
  constructor(canvas) { this.cv = canvas; this.lanes = {}; this.ids = []; this.sends = {}; this.arrows = []; this.marks = []; this.faults = []; this.now = 0; this.win = 0; this.dirty = false; }
  reset(ids) { this.ids = ids.slice(); this.lanes = {}; ids.forEach((id, i) => this.lanes[id] = i); this.sends = {}; this.arrows = []; this.marks = []; this.faults = []; this.now = 0; this.touch(); }
  add(e) {
    if (e.e === 'send') { this.sends[e.m] = e; this.arrows.push({a: e.n, b: e.to, t0: e.t, t1: null, k: e.k}); e.arrow = this.arrows.length - 1; }
    else if (e.e === 'recv' || (e.e === 'drop' && e.fr)) { const s = this.sends[e.m]; if (s) { const ar = this.arrows[s.arrow]; ar.t1 = e.t; ar.drop = e.e === 'drop'; delete this.sends[e.m]; } }
    else if (e.e === 'leader' || e.e === 'elect' || e.e === 'start' || e.e === 'stop') this.marks.push(e);
    this.now = Math.max(this.now, e.t); this.touch();
  }
  fault(c) { this.faults.push(c); this.touch(); }
  touch() { if (!this.dirty) { this.dirty = true; setTimeout(() => { this.dirty = false; this.draw(); }, 150); } }
  draw() {
    const cv = this.cv, w = cv.clientWidth || 800, h = cv.height, dpr = window.devicePixelRatio || 1;
    if (cv.width !== w * dpr) { cv.width = w * dpr; cv.style.height = h + 'px'; }
    const g = cv.getContext('2d'); g.setTransform(dpr, 0, 0, dpr, 0, 0); g.clearRect(0, 0, w, h);
    const n = this.ids.length || 1, left = 34, lh = (h - 14) / n, end = Math.max(this.now, 1);
    const t0 = this.win ? Math.max(0, end - this.win) : 0, span = Math.max(end - t0, 1e-6);
    const X = t => left + (t - t0) / span * (w - left - 8), Y = id => 7 + (this.lanes[id] + 0.5) * lh;
    g.font = '10px system-ui'; g.fillStyle = '#555'; g.strokeStyle = '#ddd'; g.lineWidth = 1;
    if (n <= 64) for (const id of this.ids) { g.fillText(id, 4, Y(id) + 3); g.beginPath(); g.moveTo(left, Y(id)); g.lineTo(w, Y(id)); g.stroke(); }
    g.lineWidth = 0.8;
    let drawn = 0;
    for (let i = this.arrows.length - 1; i >= 0 && drawn < 20000; i--) {
      const a = this.arrows[i], te = a.t1 === null ? end : a.t1;
      if (te < t0) { if (a.t0 < t0 - 60000) break; continue; }
      g.strokeStyle = a.t1 === null ? 'rgba(21,101,192,.35)' : a.drop ? '#d32f2f' : 'rgba(21,101,192,.8)';
      g.beginPath(); g.moveTo(X(a.t0), Y(a.a)); g.lineTo(X(te), Y(a.b)); g.stroke(); drawn++;
    }
    for (const m of this.marks) {
      if (m.t < t0) continue;
      const x = X(m.t), y = Y(m.n);
      if (m.e === 'leader') { g.fillStyle = m.l === m.n ? '#f9a825' : '#2e7d32'; g.beginPath(); g.moveTo(x, y - 5); g.lineTo(x + 4, y); g.lineTo(x, y + 5); g.lineTo(x - 4, y); g.fill(); }
      else if (m.e === 'elect') { g.strokeStyle = '#e64a19'; g.beginPath(); g.arc(x, y, 3.5, 0, 7); g.stroke(); }
      else { g.fillStyle = m.e === 'start' ? '#2e7d32' : '#555'; g.fillRect(x - 1, y - 6, 2, 12); }
    }
    g.strokeStyle = '#d32f2f'; g.fillStyle = '#d32f2f'; g.lineWidth = 1.5;
    for (const f of this.faults) { if (f.t < t0) continue; const x = X(f.t); g.beginPath(); g.moveTo(x, 0); g.lineTo(x, h); g.stroke(); g.fillText(f.step.replace(/^at \S+ /, ''), x + 3, 10); }
    g.fillStyle = '#777'; g.fillText(`${t0.toFixed(1)} ms`, left, h - 2); g.fillText(`${end.toFixed(1)} ms`, w - 60, h - 2);
  }
}

// ---- The live cluster.
const live = {net: null, diag: new Diagram($('st')), es: null, nodes: [], groups: null, sim: false, sel: 0};
live.net = new Net($('net'), id => pickLive(id), (a, b) => fault(`partition ${ranges(a)}|${ranges(b)}`));
$('win').onchange = () => { live.diag.win = +$('win').value; live.diag.draw(); };
function pickLive(id) {
  live.sel = id; $('node-acts').hidden = !id; $('sel-name').textContent = id ? `node ${id}` : '';
}
const fault = action => api('POST', '/api/live/fault', {action});
for (const op of ['kill', 'pause', 'resume', 'stop', 'restart'])
  $('act-' + op).onclick = act(() => fault(`${op} ${live.sel}`));
$('act-isolate').onclick = act(() => fault(`partition isolate ${live.sel}`));
$('heal').onclick = act(() => fault('heal'));
$('fault-form').onsubmit = act(() => fault($('fault-text').value));
$('link-form').onsubmit = act(() => {
  const k = $('l-kind').value, v = $('l-val').value;
  const rule = k === 'drop' ? 'drop' : k === 'delay' ? `delay ${v}ms` : `${k} ${v}%`;
  return fault(`link ${$('l-from').value}->${$('l-to').value} ${rule}`);
});
$('stop').onclick = act(async () => { const r = await api('POST', '/api/live/stop'); $('stop-note').textContent = r.note; });
$('speed').oninput = act(async () => { const x = Math.round(Math.pow(10, +$('speed').value) * 100) / 100; $('speed-x').textContent = x + '×'; await api('POST', '/api/live/speed', {speed: x}); });
$('live-form').onsubmit = act(async () => {
  const seed = $('f-seed').value.trim();
  const body = {algo: $('f-algo').value, nodes: +$('f-nodes').value, topology: $('f-topo').value.trim(), sim: $('f-sim').checked, speed: +$('f-speed').value};
  if (seed) body.seed = +seed;
  $('start').disabled = true;
  try { await api('POST', '/api/live', body); watch(); } finally { $('start').disabled = false; }
});

function watch() {
  if (live.es) live.es.close();
  const es = live.es = new EventSource(q('/api/live/events'));
  es.onmessage = ev => { const m = JSON.parse(ev.data); (handlers[m.type] || (() => {}))(m); };
  es.onerror = () => { if (live.ended) es.close(); };
}
const handlers = {
  hello(m) {
    live.ended = false; live.sim = m.sim; live.t0 = performance.now();
    $('live-bar').hidden = false; $('speed-box').hidden = !m.sim; $('verdict').textContent = ''; $('faults').textContent = ''; $('stop-note').textContent = '';
    $('run-info').textContent = `${m.algo} on ${m.topology}, ${m.nodes} nodes, ${m.sim ? 'simulated' : 'real processes'}, seed ${m.seed} — ${m.dir}`;
    live.net.draw(m.layout); live.diag.reset(m.layout.nodes.map(n => n.id).sort((a, b) => a - b));
    pickLive(0); if (m.state) state(m.state, m.props);
  },
  batch(m) {
    const s = window.labStats, evs = m.ev || [];
    s.batches++; s.events += evs.length;
    for (const e of evs) {
      live.diag.add(e);
      if (e.e === 'send' && live.net.dots.length < 400) live.net.fly(e.n, e.to, false);
      if (e.e === 'drop' && e.fr) live.net.fly(e.fr, e.n, true);
    }
    for (const c of m.chaos || []) {
      live.diag.fault(c);
      if (c.op === 'partition' && !c.error) live.groups = c.groups; else if (c.op === 'heal' && !c.error) live.groups = null;
      const li = el('li', c.error ? {class: 'err'} : {}, `+${c.t.toFixed(1)}ms ${c.step.replace(/^at \S+ /, '')} → ${c.error ? 'not applied: ' + c.error : (c.targets || []).join(',')}`);
      $('faults').appendChild(li);
    }
    if (m.state) state(m.state, m.props);
    $('clock').textContent = m.now.toFixed(1); if (m.now > live.diag.now) { live.diag.now = m.now; live.diag.touch(); }
    if (m.wall) { s.lagMs = Date.now() - m.wall; s.maxLagMs = Math.max(s.maxLagMs, s.lagMs); }
  },
  end(m) {
    live.ended = true; if (live.es) live.es.close();
    $('props').textContent = ''; $('props').appendChild(el('li', {class: 'info'}, 'the run is over and its nodes were stopped: the checker\'s verdict on the whole run is below'));
    const v = m.verdict, d = $('verdict'); d.textContent = '';
    d.appendChild(el('h3', {class: v ? v.outcome.toUpperCase() : 'FAIL'}, v ? `verdict: ${v.outcome.toUpperCase()}` : `no verdict: ${m.error || 'exit ' + m.code}`));
    if (v) for (const p of v.properties) d.appendChild(el('div', {}, `${p.ok ? 'PASS' : 'FAIL'}  ${p.name}: ${p.detail}`));
    if (v) for (const f of v.failovers) d.appendChild(el('div', {}, `failover after ${f.fault}: ${f.ms === null ? 'never ended' : f.ms.toFixed(1) + ' ms'}`));
    const a = el('a', {href: q('/runs/' + m.dir + '/report.html'), target: '_blank', id: 'report-link'}, 'the report of ' + m.dir);
    d.appendChild(a); $('stop-note').textContent = 'the run is over';
  },
};
function state(views, props) {
  live.nodes = views; live.net.update(views, live.groups);
  const l = followed(views); $('leader').textContent = l || '–'; $('leader').dataset.leader = l;
  const ul = $('props'); ul.textContent = '';
  for (const p of props || []) ul.appendChild(el('li', {class: p.name === 'beliefs' ? 'info' : p.ok ? 'ok' : 'bad', 'data-prop': p.name}, `${p.name}: ${p.detail}`));
}

// ---- Step mode and the explorer's traces.
const step = {net: new Net($('s-net'), id => { step.sel = id; $('s-acts').hidden = !id; $('s-sel').textContent = id ? `node ${id}` : ''; }), diag: new Diagram($('s-st')), sel: 0, layout: null};
const stepDo = a => api('POST', '/api/step/do', a).then(showStep);
$('step-form').onsubmit = act(async () => { const st = await api('POST', '/api/step', {algo: $('s-algo').value, nodes: +$('s-nodes').value, seed: +$('s-seed').value || 0}); step.layout = null; showStep(st); });
$('s-next').onclick = act(() => stepDo({kind: 'next'}));
$('s-run').onclick = act(() => stepDo({kind: 'leader'}));
$('s-back').onclick = act(() => api('POST', '/api/step/back', {}).then(showStep));
$('s-crash').onclick = act(() => stepDo({kind: 'crash', node: step.sel}));
$('s-restart').onclick = act(() => stepDo({kind: 'restart', node: step.sel}));
$('s-gone').onclick = act(() => stepDo({kind: 'gone', node: step.sel}));
$('s-export').onclick = act(async () => { const r = await api('POST', '/api/step/export'); $('s-note').textContent = `exported to ${r.dir}: ${r.verdict.outcome.toUpperCase()}`; });
function showStep(st) {
  $('s-bar').hidden = false;
  if (step.layout !== st.layout) { step.layout = st.layout; step.net.draw(st.layout); step.net.pick(0); }
  $('s-info').textContent = `${st.algo}, ${st.n} nodes, seed ${st.seed}` + (st.next ? ` — next: ${st.next}` : ' — nothing left to happen');
  $('s-clock').textContent = st.now.toFixed(3);
  step.net.update(st.nodes); const l = followed(st.nodes); $('s-leader').textContent = l || '–'; $('s-leader').dataset.leader = l;
  const fl = $('flight'); fl.textContent = '';
  fl.appendChild(row(['from', 'to', 'kind', 'due (ms)', ''], 'th'));
  for (const f of st.flight) {
    const b = el('button', {class: 'deliver', 'data-from': f.from, 'data-to': f.to}, 'deliver'); b.disabled = !f.head;
    b.title = f.head ? '' : 'an earlier message on this link comes first';
    b.onclick = act(() => stepDo({kind: 'deliver', peer: f.from, node: f.to}));
    const r = row([f.from, f.to, f.kind + (f.cand ? ' ' + f.cand : ''), f.due.toFixed(3)]); r.appendChild(el('td')).appendChild(b);
    if (!f.head) r.className = 'later'; fl.appendChild(r);
  }
  const tm = $('timers'); tm.textContent = ''; tm.appendChild(row(['node', 'timer', 'due (ms)', ''], 'th'));
  for (const t of st.timers) {
    const b = el('button', {class: 'fire', 'data-node': t.node}, 'fire'); b.onclick = act(() => stepDo({kind: 'fire', node: t.node, timer: t.timer}));
    const r = row([t.node, t.timer, t.due.toFixed(3)]); r.appendChild(el('td')).appendChild(b); tm.appendChild(r);
  }
  const dn = $('s-done'); dn.textContent = '';
  st.actions.forEach((a, i) => dn.appendChild(el('li', {}, `${a.t.toFixed(3)} ms  ${a.text}`)));
  dn.scrollTop = dn.scrollHeight;
  step.diag.reset(st.layout.nodes.map(n => n.id).sort((a, b) => a - b));
  for (const e of st.events || []) step.diag.add(e);
  step.diag.now = st.now; step.diag.draw();
  const tb = $('trace-box'); tb.hidden = !st.trace;
  if (st.trace) {
    $('trace-head').textContent = st.trace.header.slice(0, 2).join(' — ');
    const ol = $('trace-steps'); ol.textContent = '';
    const li0 = el('li', {value: 0, class: st.trace_at === 0 ? 'at' : ''}, 'the start'); li0.onclick = act(() => traceTo(0)); ol.appendChild(li0);
    for (const s of st.trace.steps) {
      const li = el('li', {value: s.n, 'data-n': s.n, class: (s.n === st.trace_at ? 'at ' : '') + (s.differs ? 'differs' : '')}, `${s.at} ${s.text}  ${s.beliefs}` + (s.note ? ' (' + s.note + ')' : '') + (s.differs ? ' — ' + s.differs : ''));
      li.onclick = act(() => traceTo(s.n)); ol.appendChild(li);
    }
    const at = ol.querySelector('.at'); if (at) at.scrollIntoView({block: 'nearest'});
  }
}
const traceTo = k => api('POST', '/api/step/back', {to: k}).then(showStep);
function row(cells, tag) { const r = el('tr'); for (const c of cells) r.appendChild(el(tag || 'td', {}, c)); return r; }

async function loadTraces() {
  const r = await api('GET', '/api/traces'), t = $('trace-list'); t.textContent = '';
  t.appendChild(row(['counterexample', 'property', 'transitions', ''], 'th'));
  if (!r.traces.length) t.appendChild(row([`none under ${r.root} (leaderlab explore writes one for each violation it finds)`]));
  for (const x of r.traces) {
    const b = el('button', {class: 'open-trace'}, 'step through it');
    b.onclick = act(async () => { const st = await api('GET', '/api/trace?dir=' + encodeURIComponent(x.dir)); step.layout = null; showTab('step'); showStep(st); });
    const tr = row([x.dir, x.header, x.steps]); tr.appendChild(el('td')).appendChild(b); t.appendChild(tr);
  }
}

// ---- The runs index, each run's report a click away.
async function loadRuns() {
  const r = await api('GET', '/api/runs'), t = $('runs-table'); t.textContent = '';
  $('runs-root').textContent = `under ${r.root}: ${r.rows.length} run${r.rows.length === 1 ? '' : 's'}`;
  t.appendChild(row(['made (UTC)', 'world', 'algo', 'n', 'topology', 'verdict', 'leader', 'failovers', 'failed', 'seed', 'run'], 'th'));
  for (const x of r.rows.slice().reverse()) {
    const tr = row([(x.created || '').replace('T', ' ').slice(0, 19), x.world, x.algo, x.nodes, x.topology, x.verdict, x.leader ?? '-', x.failovers, (x.violations || []).join(', ') || (x.problem ? 'unreadable' : '-'), x.seed]);
    tr.className = x.verdict; tr.children[5].className = 'v';
    const a = el('a', {href: q('/runs/' + x.dir + '/report.html'), target: '_blank'}, x.dir); tr.appendChild(el('td')).appendChild(a); t.appendChild(tr);
  }
}
$('runs-filter').oninput = () => { const f = $('runs-filter').value.toLowerCase(); for (const r of $('runs-table').rows) if (r.cells[0].tagName === 'TD') r.hidden = !r.textContent.toLowerCase().includes(f); };

// A run already going (run --ui, or another page's) is shown at once.
api('GET', '/api/live').then(() => watch()).catch(() => {});
