// report.html's views, drawn from the JSON in #mh-data (HtmlPageData). No library, no network: Canvas for the
// timeline (only what is visible, one min/max pair per pixel column), SVG for flame graphs and diagrams (only
// frames at least one pixel wide). Every control is a button, select, input or focusable element.
(() => {
  'use strict';
  performance.mark('memharness-views-start');  // the test reports how long drawing every view took
  const DATA = JSON.parse(document.getElementById('mh-data').textContent);
  const tip = document.getElementById('mh-tip');
  const SVGNS = 'http://www.w3.org/2000/svg';
  const redraws = [];
  let uid = 0;

  function el(tag, attrs, parent, text) {
    const node = document.createElement(tag);
    for (const key in attrs || {}) node.setAttribute(key, attrs[key]);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function svgEl(tag, attrs, parent, text) {
    const node = document.createElementNS(SVGNS, tag);
    for (const key in attrs || {}) node.setAttribute(key, attrs[key]);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function bytes(value) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = Math.abs(value);
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
    // Below a KiB the figure is truncated, as Units.formatBytes does.
    return (value < 0 ? '-' : '') + (i === 0 ? String(Math.trunc(v)) : v.toFixed(2)) + ' ' + units[i];
  }
  function signedBytes(value) { return (value > 0 ? '+' : '') + bytes(value); }
  function seconds(us) {
    return Math.abs(us) >= 1e6 ? (us / 1e6).toFixed(3) + ' s' : (us / 1000).toFixed(2) + ' ms';
  }
  function percent(share) { return (share * 100).toFixed(1) + '%'; }
  function cssVar(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }
  function showTip(lines, event) {
    tip.textContent = '';
    lines.forEach(line => el('div', {}, tip, line));
    tip.hidden = false;
    const box = tip.getBoundingClientRect();
    const x = Math.min(event.clientX + 14, window.innerWidth - box.width - 8);
    const below = event.clientY + 16 + box.height <= window.innerHeight;
    const y = below ? event.clientY + 16 : event.clientY - box.height - 10;
    tip.style.left = Math.max(4, x) + 'px';
    tip.style.top = Math.max(4, y) + 'px';
  }
  function hideTip() { tip.hidden = true; }
  // About `count` round ticks between lo and hi (1, 2 or 5 times a power of ten apart).
  function ticks(lo, hi, count) {
    const span = hi - lo;
    if (!(span > 0)) return [lo];
    let step = Math.pow(10, Math.floor(Math.log10(span / count)));
    const err = count / span * step;
    if (err <= 0.15) step *= 10; else if (err <= 0.35) step *= 5; else if (err <= 0.75) step *= 2;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
    return out;
  }
  // Round ticks in the binary unit of `top` (0, 64 MiB, 128 MiB, not 0, 47.68 MiB).
  function byteTicks(top) {
    let unit = 1;
    while (top / unit >= 1024 && unit < Math.pow(1024, 4)) unit *= 1024;
    return ticks(0, top / unit, 5).map(v => v * unit);
  }
  // The first index whose value is at least `value` (values ascending).
  function lowerBound(values, value) {
    let lo = 0;
    let hi = values.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (values[mid] < value) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  function hash(text) {
    let h = 0;
    for (let i = 0; i < text.length; i += 1) h = (h * 31 + text.charCodeAt(i)) | 0;
    return Math.abs(h);
  }
  function heading(parent, level, text) { return el('h' + level, {}, parent, text); }
  function button(parent, label, action) {
    const node = el('button', {type: 'button'}, parent, label);
    node.addEventListener('click', action);
    return node;
  }
  function select(parent, label, options, chosen, action) {
    const wrap = el('label', {}, parent, label + ' ');
    const node = el('select', {}, wrap);
    options.forEach((option, index) => {
      const item = el('option', {value: String(index)}, node, option);
      if (index === chosen) item.selected = true;
    });
    node.addEventListener('change', () => action(Number(node.value)));
    return node;
  }

  // ---- Timeline: every strategy on one time axis --------------------------------------------------------------
  function Timeline(host, timeline) {
    const lines = timeline.lines;
    let end = 1;
    lines.forEach(line => { end = Math.max(end, line.timeMicroseconds[line.timeMicroseconds.length - 1] || 0); });
    const view = {t0: 0, t1: end};
    const shown = lines.map(() => true);
    const M = {l: 76, r: 16, t: 16, b: 38};
    const H = 340;
    let hoverX = null;
    let drag = null;
    host.classList.add('mh-view');
    const bar = el('div', {class: 'mh-bar'}, host);
    lines.forEach((line, index) => {
      const label = el('label', {}, bar);
      const box = el('input', {type: 'checkbox'}, label);
      box.checked = true;
      box.addEventListener('change', () => { shown[index] = box.checked; draw(); });
      el('span', {class: 'mh-swatch', style: 'background:' + line.colour}, label);
      el('span', {}, label, line.strategy + (line.kill ? ' (killed)' : ''));
    });
    const tools = el('div', {class: 'mh-bar'}, host);
    button(tools, 'Zoom in', () => zoomBy(0.5));
    button(tools, 'Zoom out', () => zoomBy(2));
    button(tools, 'Reset zoom', reset).classList.add('mh-reset');
    const range = el('span', {class: 'mh-range', 'aria-live': 'polite'}, tools);
    el('span', {class: 'mh-note'}, tools,
      'drag to zoom · double-click or 0 to reset · arrows pan, + and − zoom · hover for values');
    const wrap = el('div', {class: 'mh-canvas-wrap'}, host);
    const canvas = el('canvas', {tabindex: '0', role: 'img',
      'aria-label': host.getAttribute('aria-label') || 'allocated above baseline over time'}, wrap);
    const brush = el('div', {class: 'mh-brush', hidden: ''}, wrap);
    const ctx = canvas.getContext('2d');

    function plotWidth() { return Math.max(10, wrap.clientWidth - M.l - M.r); }
    function xOf(t) { return M.l + (t - view.t0) / (view.t1 - view.t0) * plotWidth(); }
    function tAt(px) { return view.t0 + (px - M.l) / plotWidth() * (view.t1 - view.t0); }
    function visibleRange(line) {
      const t = line.timeMicroseconds;
      return [Math.max(0, lowerBound(t, view.t0) - 1), Math.min(t.length - 1, lowerBound(t, view.t1))];
    }
    function visibleMax() {
      let top = 0;
      lines.forEach((line, index) => {
        if (!shown[index]) return;
        const [i0, i1] = visibleRange(line);
        for (let i = i0; i <= i1; i += 1) top = Math.max(top, line.netBytes[i]);
        // The marker reads the measured peak, which a peak between two samples puts above the line.
        const at = line.timeMicroseconds[line.peak.sampleIndex];
        if (!line.kill && at >= view.t0 && at <= view.t1) top = Math.max(top, line.peak.netBytes);
      });
      return top > 0 ? top * 1.08 : 1024;
    }
    function draw() {
      const dpr = window.devicePixelRatio || 1;
      const width = wrap.clientWidth;
      canvas.style.height = H + 'px';
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(H * dpr);
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, width, H);
      const pw = plotWidth();
      const ph = H - M.t - M.b;
      const top = visibleMax();
      // Net bytes below the baseline (a few hundred bytes freed) sit on the axis.
      const yOf = v => M.t + ph - Math.max(0, v) / top * ph;
      const fg = cssVar('--fg');
      const muted = cssVar('--muted');
      ctx.font = '11px sans-serif';
      drawPhases(pw, ph, muted);
      drawAxes(pw, ph, top, yOf, fg, muted);
      ctx.save();
      ctx.beginPath();
      ctx.rect(M.l, M.t, pw, ph);
      ctx.clip();
      lines.forEach((line, index) => { if (shown[index]) drawLine(line, yOf, pw); });
      const limits = [];
      lines.forEach((line, index) => { if (shown[index]) drawEvents(line, yOf, top, pw, fg, limits); });
      lines.forEach((line, index) => { if (shown[index]) drawPeak(line, yOf, fg); });
      if (hoverX !== null) {
        ctx.strokeStyle = muted;
        ctx.setLineDash([2, 3]);
        ctx.beginPath();
        ctx.moveTo(hoverX + 0.5, M.t);
        ctx.lineTo(hoverX + 0.5, M.t + ph);
        ctx.stroke();
        ctx.setLineDash([]);
      }
      ctx.restore();
      range.textContent = 'showing ' + seconds(view.t0) + ' – ' + seconds(view.t1);
      host.dataset.t0 = String(Math.round(view.t0));
      host.dataset.t1 = String(Math.round(view.t1));
    }
    function drawPhases(pw, ph, muted) {
      timeline.phases.forEach((phase, index) => {
        const a = Math.max(xOf(phase.startMicroseconds), M.l);
        const b = Math.min(xOf(phase.endMicroseconds), M.l + pw);
        if (b <= a) return;
        if (index % 2 === 0) {
          ctx.fillStyle = cssVar('--band');
          ctx.fillRect(a, M.t, b - a, ph);
        }
        if (b - a > ctx.measureText(phase.name).width + 6) {
          ctx.fillStyle = muted;
          ctx.fillText(phase.name, a + 3, M.t + 11);
        }
      });
    }
    function drawAxes(pw, ph, top, yOf, fg, muted) {
      ctx.strokeStyle = cssVar('--grid');
      ctx.fillStyle = muted;
      ctx.textAlign = 'right';
      byteTicks(top).forEach(v => {
        const y = Math.round(yOf(v)) + 0.5;
        ctx.beginPath();
        ctx.moveTo(M.l, y);
        ctx.lineTo(M.l + pw, y);
        ctx.stroke();
        ctx.fillText(bytes(v), M.l - 6, y + 4);
      });
      ctx.textAlign = 'center';
      ticks(view.t0, view.t1, Math.max(2, Math.floor(pw / 110))).forEach(t => {
        const x = Math.round(xOf(t)) + 0.5;
        ctx.beginPath();
        ctx.moveTo(x, M.t + ph);
        ctx.lineTo(x, M.t + ph + 5);
        ctx.stroke();
        ctx.fillText(seconds(t), x, M.t + ph + 17);
      });
      ctx.fillText('time since the case started · allocated above baseline', M.l + pw / 2, H - 4);
      ctx.textAlign = 'left';
      ctx.strokeStyle = fg;
      ctx.strokeRect(M.l + 0.5, M.t + 0.5, pw, ph);
    }
    // Draws the visible samples; with more samples than pixels, one column per pixel with its lowest and
    // highest value (so no peak disappears), without allocating anything per sample.
    function drawLine(line, yOf, pw) {
      const t = line.timeMicroseconds;
      const b = line.netBytes;
      const [i0, i1] = visibleRange(line);
      if (i1 < i0) return;
      const scale = pw / (view.t1 - view.t0);
      ctx.strokeStyle = line.colour;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      if (i1 - i0 <= pw * 2) {
        for (let i = i0; i <= i1; i += 1) {
          const x = M.l + (t[i] - view.t0) * scale;
          if (i === i0) ctx.moveTo(x, yOf(b[i])); else ctx.lineTo(x, yOf(b[i]));
        }
      } else {
        let column = null;
        let low = 0;
        let high = 0;
        let last = 0;
        for (let i = i0; i <= i1; i += 1) {
          const c = Math.floor((t[i] - view.t0) * scale);
          if (c !== column) {
            if (column !== null) {
              ctx.lineTo(M.l + column, yOf(low));
              ctx.lineTo(M.l + column, yOf(high));
              ctx.lineTo(M.l + column, yOf(last));
            }
            column = c;
            low = high = last = b[i];
            if (i === i0) ctx.moveTo(M.l + c, yOf(b[i])); else ctx.lineTo(M.l + c, yOf(b[i]));
          } else {
            low = Math.min(low, b[i]);
            high = Math.max(high, b[i]);
            last = b[i];
          }
        }
        ctx.lineTo(M.l + column, yOf(low));
        ctx.lineTo(M.l + column, yOf(high));
        ctx.lineTo(M.l + column, yOf(last));
      }
      ctx.stroke();
      ctx.lineWidth = 1;
    }
    // Each line's peak marker, where it is in view: a dot and its value, both the data's (the SVG timeline's own).
    function drawPeak(line, yOf, fg) {
      if (line.kill) return;
      const t = line.timeMicroseconds[line.peak.sampleIndex];
      if (t < view.t0 || t > view.t1) return;
      const x = xOf(t);
      const y = yOf(line.peak.netBytes);
      ctx.fillStyle = line.colour;
      ctx.beginPath();
      ctx.arc(x, y, 3.5, 0, 2 * Math.PI);
      ctx.fill();
      ctx.fillStyle = fg;
      ctx.fillText('peak ' + line.peak.text, x + 6, Math.max(M.t + 22, y - 6));
    }
    // The memory limit (dashed), the kill (a cross) and the memory warnings (triangles at the top).
    function drawEvents(line, yOf, top, pw, fg, limits) {
      const kill = line.kill;
      ctx.fillStyle = line.colour;
      ctx.strokeStyle = line.colour;
      const limit = kill && typeof kill.limitNetBytes === 'number' ? kill.limitNetBytes : null;
      // One line for limits within a pixel or two of one drawn already (the same budget, baselines a few KiB apart).
      const drawn = limits.some(other => Math.abs(yOf(other) - yOf(limit)) < 2);
      if (limit !== null && limit <= top && !drawn) {
        limits.push(limit);
        const y = Math.round(yOf(kill.limitNetBytes)) + 0.5;
        ctx.setLineDash([6, 4]);
        ctx.beginPath();
        ctx.moveTo(M.l, y);
        ctx.lineTo(M.l + pw, y);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillText('memory limit', M.l + 6, y - 4);
      }
      if (kill && kill.timeMicroseconds >= view.t0 && kill.timeMicroseconds <= view.t1) {
        const x = xOf(kill.timeMicroseconds);
        const y = yOf(kill.netBytes);
        ctx.lineWidth = 2.5;
        ctx.beginPath();
        ctx.moveTo(x - 6, y - 6); ctx.lineTo(x + 6, y + 6);
        ctx.moveTo(x + 6, y - 6); ctx.lineTo(x - 6, y + 6);
        ctx.stroke();
        ctx.lineWidth = 1;
        ctx.fillStyle = fg;
        ctx.textAlign = 'right';
        ctx.fillText('killed: ' + line.strategy, x - 9, y + 4);
        ctx.textAlign = 'left';
        ctx.fillStyle = line.colour;
      }
      line.warningMicroseconds.forEach(t => {
        if (t < view.t0 || t > view.t1) return;
        const x = xOf(t);
        ctx.beginPath();
        ctx.moveTo(x - 5, M.t + 1); ctx.lineTo(x + 5, M.t + 1); ctx.lineTo(x, M.t + 9);
        ctx.closePath();
        ctx.fill();
      });
    }
    function hoverLines(t) {
      const out = ['at ' + seconds(t)];
      lines.forEach((line, index) => {
        if (!shown[index]) return;
        const times = line.timeMicroseconds;
        let i = lowerBound(times, t);
        if (i > 0 && (i >= times.length || t - times[i - 1] < times[i] - t)) i -= 1;
        if (i >= times.length || Math.abs(times[i] - t) > (view.t1 - view.t0) / 20) return;
        const phase = line.phaseNames[line.phaseIndex[i]] || '–';
        out.push(line.strategy + ': ' + bytes(line.netBytes[i]) + ' · phase ' + phase + ' · ' + seconds(times[i]));
      });
      const warned = lines.filter((line, index) => shown[index] && line.warningMicroseconds.some(
        w => Math.abs(w - t) < (view.t1 - view.t0) / 200));
      warned.forEach(line => out.push('memory warning: ' + line.strategy));
      return out;
    }
    function zoomTo(a, b) {
      const span = Math.max(b - a, Math.min(end, 20));  // a few samples at least: a narrower view shows nothing
      const t0 = Math.max(0, Math.min(a, end - span));
      view.t0 = t0;
      view.t1 = Math.min(end, t0 + span);
      draw();
    }
    function zoomBy(factor) {
      const centre = (view.t0 + view.t1) / 2;
      const half = (view.t1 - view.t0) * factor / 2;
      zoomTo(centre - half, centre + half);
    }
    function pan(fraction) {
      const shift = (view.t1 - view.t0) * fraction;
      zoomTo(view.t0 + shift, view.t1 + shift);
    }
    function reset() { zoomTo(0, end); }
    function localX(event) { return event.clientX - canvas.getBoundingClientRect().left; }
    function clampX(x) { return Math.max(M.l, Math.min(M.l + plotWidth(), x)); }
    canvas.addEventListener('mousedown', event => {
      if (event.button !== 0) return;
      drag = {x0: clampX(localX(event)), x1: null};
      event.preventDefault();
    });
    window.addEventListener('mousemove', event => {
      if (!drag) return;
      drag.x1 = clampX(localX(event));
      brush.hidden = false;
      brush.style.left = Math.min(drag.x0, drag.x1) + 'px';
      brush.style.width = Math.abs(drag.x1 - drag.x0) + 'px';
      brush.style.top = M.t + 'px';
      brush.style.height = (H - M.t - M.b) + 'px';
    });
    window.addEventListener('mouseup', () => {
      if (!drag) return;
      const done = drag;
      drag = null;
      brush.hidden = true;
      if (done.x1 !== null && Math.abs(done.x1 - done.x0) > 3) {
        zoomTo(tAt(Math.min(done.x0, done.x1)), tAt(Math.max(done.x0, done.x1)));
      }
    });
    canvas.addEventListener('dblclick', reset);
    canvas.addEventListener('mousemove', event => {
      if (drag) return;
      const x = localX(event);
      if (x < M.l || x > M.l + plotWidth()) {
        hoverX = null;
        hideTip();
      } else {
        hoverX = x;
        showTip(hoverLines(tAt(x)), event);
      }
      draw();
    });
    canvas.addEventListener('mouseleave', () => { hoverX = null; hideTip(); draw(); });
    canvas.addEventListener('keydown', event => {
      const actions = {'+': () => zoomBy(0.5), '=': () => zoomBy(0.5), '-': () => zoomBy(2), '0': reset,
        Escape: reset, ArrowLeft: () => pan(-0.2), ArrowRight: () => pan(0.2)};
      if (actions[event.key]) { actions[event.key](); event.preventDefault(); }
    });
    redraws.push(draw);
    draw();
  }

  // ---- Flame graphs ---------------------------------------------------------------------------------------------
  // The document's flame tree (scenario.flame) is built once, in Swift: a node per function under a path of callers,
  // a column per live set (a peak, an iteration mark, an earlier run's peak) with the weight of each node it passes.
  // A view is one column of it (or two, for a difference), laid out here: children widest first.
  function locationsIn(node, column) {
    return node.locations.filter(l => l.columns.includes(column)).map(l => l.text).join(', ');
  }
  // The view nodes of `column` (widths) and, for a difference, `base` (kept beside them as `before`).
  function columnView(flame, column, base) {
    const views = new Map();
    function view(index) {
      let n = views.get(index);
      if (n) return n;
      const node = flame.nodes[index];
      n = {name: node.name, location: locationsIn(node, column) || (base === undefined ? '' : locationsIn(node, base)),
        library: node.library, bytes: 0, count: 0, before: 0, kids: [], parent: null};
      views.set(index, n);
      if (node.parent >= 0) { n.parent = view(node.parent); n.parent.kids.push(n); }
      return n;
    }
    const root = view(0);
    flame.columns[column].weights.forEach(([index, amount, count]) => {
      const n = view(index);
      n.bytes = amount; n.count = count;
    });
    if (base !== undefined) flame.columns[base].weights.forEach(([index, amount]) => { view(index).before = amount; });
    (function layout(n) {
      n.kids.sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1));
      n.height = 0;
      n.kids.forEach(kid => { layout(kid); n.height = Math.max(n.height, kid.height + 1); });
    })(root);
    return root;
  }
  function frameColour(n) {
    if (!n.parent) return '#b8b8b8';
    const h = hash(n.name);
    return n.library ? 'hsl(' + (195 + h % 25) + ',55%,' + (62 + h % 12) + '%)'
      : 'hsl(' + (18 + h % 28) + ',85%,' + (58 + h % 10) + '%)';
  }
  function diffColour(n) {
    const before = n.before || 0;
    const delta = n.bytes - before;
    const size = Math.max(n.bytes, before, 1);
    const strength = Math.min(1, Math.abs(delta) / size);
    if (Math.abs(delta) < 1) return 'hsl(0,0%,80%)';
    return delta > 0 ? 'hsl(0,85%,' + (88 - 30 * strength) + '%)' : 'hsl(215,85%,' + (88 - 30 * strength) + '%)';
  }

  // A flame graph view of `tree()`: click (or Enter) a frame to zoom into it, search to highlight.
  function FlameView(host, options) {
    const view = el('div', {class: 'mh-flame-view'}, host);
    const bar = el('div', {class: 'mh-bar'}, view);
    const search = el('input', {type: 'search', placeholder: 'Search functions', 'aria-label': 'Search functions',
      class: 'mh-search'}, bar);
    button(bar, 'Reset zoom', () => { state.zoom = state.root; render(); }).classList.add('mh-reset');
    const match = el('span', {class: 'mh-match', 'aria-live': 'polite'}, bar);
    const crumb = el('div', {class: 'mh-crumb'}, view);
    const svg = svgEl('svg', {class: 'mh-flame-svg', role: 'group', 'aria-label': options.label}, view);
    const state = {root: null, zoom: null, query: ''};
    const rowHeight = 18;
    const frames = new Map();

    function matches(n) { return state.query !== '' && n.parent && n.name.toLowerCase().includes(state.query); }
    // Bytes of the matching frames, each counted once (a match inside a match is already in its width).
    function matchedShare() {
      let matched = 0;
      let count = 0;
      (function walk(n) {
        if (matches(n)) { matched += n.bytes; count += 1; return; }
        n.kids.forEach(walk);
      })(state.root);
      return {bytes: matched, frames: count};
    }
    function render() {
      if (!state.root) return;
      const width = Math.max(320, view.clientWidth);
      let levels = state.zoom.height + 1;
      for (let n = state.zoom.parent; n; n = n.parent) levels += 1;
      const height = levels * rowHeight + 2;
      svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
      svg.setAttribute('height', String(height));
      svg.textContent = '';
      frames.clear();
      const path = [];
      for (let n = state.zoom; n; n = n.parent) path.unshift(n);
      path.slice(0, -1).forEach((n, level) => drawFrame(n, 0, width, level, height, false));
      drawFrame(state.zoom, 0, width, path.length - 1, height, true);
      const found = matchedShare();
      match.textContent = state.query === '' ? '' : found.frames === 0 ? 'no frame matches' :
        'matched ' + percent(found.bytes / Math.max(1, state.root.bytes)) + ' of ' + bytes(state.root.bytes) +
        ' (' + bytes(found.bytes) + ')';
      view.dataset.matchedShare = state.query === '' ? '' : String(found.bytes / Math.max(1, state.root.bytes));
      crumb.textContent = state.zoom === state.root ? options.caption :
        'zoomed into ' + state.zoom.name + ' · ' + bytes(state.zoom.bytes) + ' · ' +
        percent(state.zoom.bytes / Math.max(1, state.root.bytes)) + ' of all (Reset zoom or Escape to go back)';
      view.dataset.zoom = state.zoom === state.root ? '' : state.zoom.name;
    }
    function drawFrame(n, x, w, level, height, recurse) {
      if (w < 1) return;  // narrower than a pixel: its bytes are in its parent's width
      const g = svgEl('g', {class: 'fr', transform: 'translate(' + x.toFixed(2) + ',' + (height - (level + 1) *
        rowHeight) + ')', 'data-name': n.name}, svg);
      frames.set(g, n);
      if (matches(n)) g.classList.add('match');
      if (!recurse) g.classList.add('dim');
      if (w >= 40) {
        g.setAttribute('tabindex', '0');
        g.setAttribute('role', 'button');
        g.setAttribute('aria-label', n.name + ', ' + bytes(n.bytes));
      }
      svgEl('rect', {width: Math.max(0.5, w - 0.5).toFixed(2), height: rowHeight - 1, rx: 2,
        fill: options.colour(n)}, g);
      const chars = Math.floor((w - 6) / 6.6);
      if (chars >= 3) {
        const text = n.name.length <= chars ? n.name : n.name.slice(0, chars - 1) + '…';
        svgEl('text', {x: 3, y: 12.5}, g, text);
      }
      if (!recurse) return;
      let cx = x;
      n.kids.forEach(kid => {
        const kw = n.bytes > 0 ? kid.bytes / n.bytes * w : 0;
        drawFrame(kid, cx, kw, level + 1, height, true);
        cx += kw;
      });
    }
    function frameAt(target) {
      const g = target.closest && target.closest('g.fr');
      return g ? frames.get(g) : null;
    }
    svg.addEventListener('click', event => {
      const n = frameAt(event.target);
      if (n) { state.zoom = n; render(); }
    });
    svg.addEventListener('keydown', event => {
      const n = frameAt(event.target);
      if (n && (event.key === 'Enter' || event.key === ' ')) { state.zoom = n; render(); event.preventDefault(); }
      if (event.key === 'Escape') { state.zoom = state.root; render(); }
    });
    svg.addEventListener('mousemove', event => {
      const n = frameAt(event.target);
      if (!n) { hideTip(); return; }
      showTip(options.tip(n, state.root), event);
    });
    svg.addEventListener('mouseleave', hideTip);
    search.addEventListener('input', () => { state.query = search.value.trim().toLowerCase(); render(); });
    redraws.push(render);
    return {
      show(root) { state.root = root; state.zoom = root; render(); },
    };
  }
  function frameTip(n, root) {
    const lines = [n.name];
    if (n.location) lines.push(n.location);
    lines.push(bytes(n.bytes) + ' · ' + percent(n.bytes / Math.max(1, root.bytes)) + ' of the live set');
    lines.push(n.count + ' allocation' + (n.count === 1 ? '' : 's') + ' live (sampled)');
    if (n.parent) lines.push(n.library ? 'library code' : 'your code');
    return lines;
  }
  function diffTip(n) {
    const before = n.before || 0;
    return [n.name].concat(n.location ? [n.location] : []).concat([
      'base ' + bytes(before) + ' → compared ' + bytes(n.bytes) + ' (' + signedBytes(n.bytes - before) + ')']);
  }
  function peakFlame(host, flame, column) {
    host.classList.add('mh-view');
    const root = columnView(flame, column);
    const peak = flame.columns[column];
    const view = FlameView(host, {
      label: host.getAttribute('aria-label') || peak.strategy, colour: frameColour, tip: frameTip,
      caption: peak.strategy + ': ' + bytes(root.bytes) + ' sampled live at the peak (one sample per ' +
        bytes(peak.sampleMeanBytes) + ') · orange: your code, blue: libraries · click a frame to zoom'});
    view.show(root);
  }

  // ---- Per scenario: strategy diff, live set over time, heap graph -------------------------------------------
  // The columns of `flame` that `keep` keeps, as their indices.
  function columnsWhere(flame, keep) {
    return flame ? flame.columns.map((c, index) => keep(c) ? index : -1).filter(index => index >= 0) : [];
  }
  function Explore(host, scenario) {
    heading(host, 3, 'Explore ' + scenario.name);
    const flame = scenario.flame;
    const peaks = columnsWhere(flame, c => c.mark === undefined && c.earlierRun === undefined);
    const earlier = columnsWhere(flame, c => c.mark === undefined && c.earlierRun !== undefined);
    if (peaks.length >= 1 && peaks.length + earlier.length >= 2) {
      diffView(el('div', {class: 'mh-view mh-diff'}, host), flame, peaks, earlier);
    }
    const timed = peaks.map(p => ({strategy: flame.columns[p].strategy,
      marks: columnsWhere(flame, c => c.mark !== undefined && c.strategy === flame.columns[p].strategy)}))
      .filter(t => t.marks.length > 0);
    if (timed.length > 0) overTime(el('div', {class: 'mh-view mh-over-time'}, host), flame, timed);
    scenario.heapGraphs.forEach(graph => {
      if (graph.captures.length > 0) heapView(el('div', {class: 'mh-view mh-heap'}, host), graph);
    });
  }
  // The strategies of this run and, on a comparison page, of the earlier run: a base and a compared one.
  function diffView(host, flame, peaks, earlier) {
    const runs = earlier.length > 0;
    heading(host, 4, runs ? 'Difference between two strategies or two runs' : 'Difference between two strategies');
    el('p', {class: 'mh-note'}, host, 'Widths are the compared strategy\u2019s live bytes at its peak; red frames ' +
      'hold more than in the base, blue less (stronger colour, larger change). Frames only in the base are not ' +
      'drawn.' + (runs ? ' Strategies marked \u201cearlier run\u201d are those of ' + DATA.earlierRun + '.' : ''));
    const bar = el('div', {class: 'mh-bar'}, host);
    const strategy = column => flame.columns[column].strategy;
    const choices = peaks.map(p => ({column: p, name: runs ? strategy(p) + ' (this run)' : strategy(p)}))
      .concat(earlier.map(p => ({column: p, name: strategy(p) + ' (earlier run)'})));
    const names = choices.map(c => c.name);
    let compared = 0;
    // Without an earlier run, the last strategy (the least memory) is the base; with one, the same strategy
    // in the earlier run.
    const same = earlier.findIndex(p => strategy(p) === strategy(peaks[0]));
    let base = !runs ? peaks.length - 1 : peaks.length + Math.max(0, same);
    const summary = el('p', {class: 'mh-match mh-diff-summary', 'aria-live': 'polite'});
    const baseSelect = select(bar, 'Base', names, base, value => { base = value; update(); });
    const comparedSelect = select(bar, 'Compared', names, compared, value => { compared = value; update(); });
    baseSelect.classList.add('mh-base');
    comparedSelect.classList.add('mh-compared');
    button(bar, 'Swap', () => {
      [base, compared] = [compared, base];
      baseSelect.value = String(base);
      comparedSelect.value = String(compared);
      update();
    });
    host.appendChild(summary);
    const view = FlameView(host, {label: 'differential flame graph', colour: diffColour, tip: diffTip,
      caption: 'click a frame to zoom'});
    function update() {
      const tree = columnView(flame, choices[compared].column, choices[base].column);
      summary.textContent = names[compared] + ' vs ' + names[base] + ': ' + bytes(tree.bytes) + ' vs ' +
        bytes(tree.before) + ' sampled live at the peak (' + signedBytes(tree.bytes - tree.before) + ')';
      host.dataset.base = names[base];
      host.dataset.compared = names[compared];
      view.show(tree);
    }
    update();
  }
  // `timed`: per strategy, the columns of its iteration marks in order.
  function overTime(host, flame, timed) {
    heading(host, 4, 'Live set over time');
    el('p', {class: 'mh-note'}, host, 'The agent recorded the live set by allocation stack after each iteration of ' +
      'a repeat step: choose a moment to see what was live then (bytes are absolute, not net of the baseline).');
    const bar = el('div', {class: 'mh-bar'}, host);
    let chosen = 0;
    let mark = timed[0].marks.length - 1;
    const slider = el('input', {type: 'range', min: '0', step: '1', 'aria-label': 'iteration mark'});
    const label = el('span', {class: 'mh-range', 'aria-live': 'polite'});
    select(bar, 'Strategy', timed.map(t => t.strategy), 0, value => {
      chosen = value;
      mark = timed[chosen].marks.length - 1;
      update();
    });
    bar.appendChild(el('label', {}, null, 'Moment '));
    bar.lastChild.appendChild(slider);
    bar.appendChild(label);
    slider.addEventListener('input', () => { mark = Number(slider.value); update(); });
    const view = FlameView(host, {label: 'live set at an iteration mark', colour: frameColour, tip: frameTip,
      caption: 'click a frame to zoom'});
    function update() {
      const marks = timed[chosen].marks;
      const column = flame.columns[marks[mark]];
      slider.max = String(marks.length - 1);
      slider.value = String(mark);
      const tree = columnView(flame, marks[mark]);
      label.textContent = column.mark + ' at ' + seconds(column.timeMicroseconds) + ': ' + bytes(tree.bytes) +
        ' sampled live';
      view.show(tree);
    }
    update();
  }

  // ---- Heap graph: cycles and retaining paths as node-link diagrams ----------------------------------------
  function heapView(host, graph) {
    heading(host, 4, 'Why memory is kept: ' + graph.strategy);
    const bar = el('div', {class: 'mh-bar'}, host);
    const body = el('div', {}, host);
    const last = graph.captures.length - 1;
    select(bar, 'Capture', graph.captures.map(c => c.label), last, value => show(graph.captures[value]));
    function show(capture) {
      body.textContent = '';
      el('p', {class: 'mh-note'}, body, capture.label + ': ' + capture.liveBlocks + ' live blocks (' +
        bytes(capture.liveBytes) + '), ' + capture.leakedBlocks + ' leaked (' + bytes(capture.leakedBytes) + '), ' +
        capture.cycles.length + ' cycle' + (capture.cycles.length === 1 ? '' : 's') + ', ' + capture.paths.length +
        ' retaining path' + (capture.paths.length === 1 ? '' : 's') + '.');
      // Cycles of the same shape (every dismissed screen leaks the same one) are drawn once, with their count.
      const shapes = new Map();
      capture.cycles.forEach(cycle => {
        const key = cycle.edges.map(e => e.from + '.' + e.field + '>' + e.to).join('|') + '|' + cycle.memberBlocks;
        if (!shapes.has(key)) shapes.set(key, []);
        shapes.get(key).push(cycle);
      });
      Array.from(shapes.values()).forEach((same, index) => {
        const cycle = same[0];
        const groups = same.map(c => c.group);
        heading(body, 5, 'Cycle ' + (index + 1) + (same.length > 1 ? ' × ' + same.length + ' (leak groups ' +
          groups.join(', ') + ')' : ' (leak group ' + cycle.group + ')') + ': ' + cycle.memberBlocks +
          ' blocks, ' + bytes(cycle.memberBytes) + (same.length > 1 ? ' each' : '') + (cycle.omittedEdges > 0 ?
          ', ' + cycle.omittedEdges + ' more references not shown' : ''));
        cycleDiagram(body, cycle);
      });
      capture.paths.forEach(path => {
        const last = path.nodes.length > 0 ? path.nodes[path.nodes.length - 1].type : '?';
        heading(body, 5, 'Retaining path to ' + (path.query || last) + ' (' + path.reason + '; ' +
          path.reachableInstances + ' reachable, ' + path.leakedInstances + ' leaked)');
        if (path.root === null || path.root === undefined) {
          el('p', {class: 'mh-note'}, body, 'No root reaches an instance' + (path.leakedInstances > 0 ?
            ': all ' + path.leakedInstances + ' are leaked.' : '.'));
        } else {
          pathDiagram(body, path);
        }
      });
    }
    show(graph.captures[last]);
  }
  // `.field`, or `+64` where reflection named no field (the reference's byte offset).
  function member(field) { return field.startsWith('+') ? field : '.' + field; }
  function shortType(label) {
    const short = label.replace(/\b[A-Za-z_][A-Za-z0-9_]*\./g, '');
    return short.length <= 34 ? short : '…' + short.slice(short.length - 33);
  }
  function arrowDefs(svg) {
    const id = 'mh-arrow-' + (uid += 1);
    const marker = svgEl('marker', {id: id, viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '8',
      markerHeight: '8', orient: 'auto-start-reverse'}, svgEl('defs', {}, svg));
    svgEl('path', {d: 'M0,0 L10,5 L0,10 z'}, marker);
    return 'url(#' + id + ')';
  }
  function box(svg, x, y, text, full, extra) {
    const g = svgEl('g', {class: 'node' + (extra ? ' ' + extra : '')}, svg);
    const width = Math.max(60, text.length * 7 + 16);
    svgEl('rect', {x: x - width / 2, y: y - 13, width: width, height: 26, rx: 6}, g);
    svgEl('text', {x: x, y: y + 4, 'text-anchor': 'middle'}, g, text);
    svgEl('title', {}, g, full);
    return {x: x, y: y, hw: width / 2, hh: 13};
  }
  // Where the segment from `from` towards the centre of `b` meets b's border.
  function border(b, from) {
    const dx = from.x - b.x;
    const dy = from.y - b.y;
    const scale = Math.min(Math.abs(dx) > 0 ? b.hw / Math.abs(dx) : Infinity,
      Math.abs(dy) > 0 ? b.hh / Math.abs(dy) : Infinity, 1);
    return {x: b.x + dx * scale, y: b.y + dy * scale};
  }
  function cycleDiagram(parent, cycle) {
    const n = cycle.edges.length;
    const radius = n === 1 ? 0 : Math.max(70, n * 42);
    const width = Math.min(1180, 2 * radius + 340);
    const height = 2 * radius + (n === 1 ? 130 : 90);
    const svg = svgEl('svg', {class: 'mh-graph mh-cycle', width: width, height: height, role: 'img',
      'aria-label': 'cycle: ' + cycle.edges.map(e => e.from + '.' + e.field).join(' → ')}, parent);
    const arrow = arrowDefs(svg);
    const cx = width / 2;
    const cy = height / 2 + (n === 1 ? 25 : 0);
    const boxes = cycle.edges.map((edge, i) => {
      const angle = -Math.PI / 2 + i * 2 * Math.PI / n;
      return box(svg, cx + radius * Math.cos(angle), cy + radius * Math.sin(angle), shortType(edge.from), edge.from);
    });
    cycle.edges.forEach((edge, i) => {
      const a = boxes[i];
      const b = boxes[(i + 1) % n];
      if (n === 1) {
        const d = 'M' + (a.x - 20) + ',' + (a.y - a.hh) + ' C' + (a.x - 60) + ',' + (a.y - 90) + ' ' + (a.x + 60) +
          ',' + (a.y - 90) + ' ' + (a.x + 20) + ',' + (a.y - a.hh);
        svgEl('path', {class: 'edge', d: d, 'marker-end': arrow}, svg);
        svgEl('text', {class: 'label', x: a.x, y: a.y - 74, 'text-anchor': 'middle'}, svg, member(edge.field));
        return;
      }
      // Bend each reference outwards (perpendicular to the chord), so A→B and B→A do not overlap.
      const mx = (a.x + b.x) / 2;
      const my = (a.y + b.y) / 2;
      const length = Math.hypot(b.x - a.x, b.y - a.y) || 1;
      const bend = n === 2 ? 45 : 22;
      const control = {x: mx + (b.y - a.y) / length * bend, y: my - (b.x - a.x) / length * bend};
      const start = border(a, control);
      const stop = border(b, control);
      svgEl('path', {class: 'edge', d: 'M' + start.x + ',' + start.y + ' Q' + control.x + ',' + control.y + ' ' +
        stop.x + ',' + stop.y, 'marker-end': arrow}, svg);
      svgEl('text', {class: 'label', x: control.x, y: control.y + 4, 'text-anchor': 'middle'}, svg,
        member(edge.field));
    });
  }
  function pathDiagram(parent, path) {
    const steps = [{text: path.root, full: path.root, root: true}].concat(path.nodes.map(n => ({
      text: shortType(n.type), full: n.type, field: n.field})));
    const gap = 64;
    const height = steps.length * gap + 10;
    const width = Math.min(1180, Math.max(420, ...steps.map(s => s.text.length * 7 + 240)));
    const svg = svgEl('svg', {class: 'mh-graph mh-path', width: width, height: height, role: 'img',
      'aria-label': 'retaining path: ' + steps.map(s => s.full).join(' → ')}, parent);
    const arrow = arrowDefs(svg);
    const x = 30 + Math.max(...steps.map(s => s.text.length * 7 + 16)) / 2;
    const boxes = steps.map((step, i) => box(svg, x, 24 + i * gap, step.text.length > 60 ?
      step.text.slice(0, 59) + '…' : step.text, step.full, step.root ? 'root' : ''));
    boxes.slice(1).forEach((b, i) => {
      const a = boxes[i];
      svgEl('line', {class: 'edge', x1: a.x, y1: a.y + a.hh, x2: b.x, y2: b.y - b.hh - 1, 'marker-end': arrow}, svg);
      const field = i === 0 ? 'root' : steps[i].field;
      if (field) {
        svgEl('text', {class: 'label', x: a.x + 10, y: (a.y + b.y) / 2 + 4}, svg, i === 0 ? field : member(field));
      }
    });
    if (path.omittedNodes > 0) {
      el('p', {class: 'mh-note'}, parent, path.omittedNodes + ' blocks in the middle of the path are not shown.');
    }
  }

  // ---- Start --------------------------------------------------------------------------------------------------
  // Timelines are drawn at once (a canvas each); flame graphs and the explore views, thousands of SVG elements in
  // a large report, are built when they come within a screen or two of the viewport.
  const waiting = new Map();
  const observer = 'IntersectionObserver' in window ? new IntersectionObserver(entries => {
    entries.forEach(entry => { if (entry.isIntersecting) build(entry.target); });
  }, {rootMargin: '1500px 0px'}) : null;
  function build(host) {
    const make = waiting.get(host);
    if (!make) return;
    waiting.delete(host);
    if (observer) observer.unobserve(host);
    make();
    host.dataset.drawn = 'true';
  }
  function later(host, make) {
    waiting.set(host, make);
    if (observer) observer.observe(host); else build(host);
  }
  document.querySelectorAll('.mh-timeline').forEach(host => {
    const scenario = DATA.scenarios[Number(host.dataset.scenario)];
    if (scenario && scenario.timeline) Timeline(host, scenario.timeline);
    host.dataset.drawn = 'true';
  });
  document.querySelectorAll('.mh-flame').forEach(host => {
    const scenario = DATA.scenarios[Number(host.dataset.scenario)];
    const peak = columnsWhere(scenario && scenario.flame,
      c => c.mark === undefined && c.earlierRun === undefined && c.strategy === host.dataset.strategy)[0];
    if (peak !== undefined) later(host, () => peakFlame(host, scenario.flame, peak));
  });
  document.querySelectorAll('.mh-explore').forEach(host => {
    const scenario = DATA.scenarios[Number(host.dataset.scenario)];
    if (scenario) later(host, () => Explore(host, scenario));
  });
  // Printing shows everything.
  window.addEventListener('beforeprint', () => Array.from(waiting.keys()).forEach(build));
  // A table still wider than the page with its headers' words whole lets them break inside a word (report.css:
  // .tight) rather than scroll: measured once everything is laid out, again when the window is resized.
  function fitTables() {
    const hosts = Array.from(document.querySelectorAll('div.table'));
    hosts.forEach(host => host.classList.remove('tight'));
    hosts.filter(host => host.scrollWidth > host.clientWidth).forEach(host => host.classList.add('tight'));
  }
  fitTables();
  redraws.push(fitTables);
  let pending = false;
  function redrawAll() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; redraws.forEach(draw => draw()); });
  }
  window.addEventListener('resize', redrawAll);
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', redrawAll);
  performance.measure('memharness-views', 'memharness-views-start');
  document.documentElement.dataset.ready = 'true';
})();
