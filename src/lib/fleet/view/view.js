// SPDX-License-Identifier: MIT
// The fleet page: reads /api/* and draws it. Every string from the fleet
// (host names, process names, paths, arguments, shield metadata, errors)
// goes into the page as text (text nodes, textContent), never as markup.
'use strict';

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else e.setAttribute(k, String(v));
  }
  for (const c of kids) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const fmtTime = ms => ms > 0 ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + 'Z' : '-';
const ago = ms => {
  if (!(ms > 0)) return '-';
  const s = Math.round((Date.now() - ms) / 1000);
  return s < 120 ? s + ' s ago' : s < 7200 ? Math.round(s / 60) + ' min ago' : Math.round(s / 3600) + ' h ago';
};
const hostLink = h => el('a', { href: '#/host/' + encodeURIComponent(h) }, h);
const shieldLink = s => el('a', { href: '#/shield/' + encodeURIComponent(s) }, s);

// A table: cols = [[title, key|fn, class?]]; every cell gets data-k = key.
function table(cols, rows, rowAttrs) {
  const t = el('table');
  t.append(el('tr', null, ...cols.map(c => el('th', null, c[0]))));
  for (const r of rows) {
    const tr = el('tr', rowAttrs ? rowAttrs(r) : null);
    for (const [, k, cls] of cols) {
      const v = typeof k === 'function' ? k(r) : r[k];
      const td = el('td', { 'data-k': typeof k === 'string' ? k : '' }, v);
      const c = typeof cls === 'function' ? cls(r) : cls;
      if (c) td.className = c;
      tr.append(td);
    }
    t.append(tr);
  }
  return t;
}

// {"a": 3, "b": 1} as "a 3, b 1", biggest first.
const counts = o => Object.entries(o || {}).sort((a, b) => b[1] - a[1]).map(([k, n]) => k + ' ' + n).join(', ');

async function api(path) {
  const r = await fetch('/api/' + path, { credentials: 'same-origin' });
  const j = await r.json();
  document.getElementById('status').textContent = 'api ' + path.split('?')[0] + ' ' + j.took_ms + ' ms, ' + fmtTime(j.at);
  if (j.error) throw new Error(j.error);
  return j;
}

function show(...nodes) {
  const m = document.getElementById('main');
  m.replaceChildren(...nodes);
  m.setAttribute('data-ready', location.hash || '#/');
}

function facts(pairs) {
  const d = el('dl', { class: 'facts' });
  for (const [k, v, key] of pairs) d.append(el('dt', null, k), el('dd', { 'data-k': key || '' }, v));
  return d;
}

// ---- CVE coverage ----
async function coverage() {
  const j = await api('coverage');
  const h = j.hosts;
  const rows = j.shields.map(s => {
    const hit = j.hits[s.shield] || {};
    return Object.assign({}, s, {
      hits_pg: hit.hits || 0, hit_hosts: hit.hosts || 0, last_hit: hit.last || 0,
      verdicts: counts(hit.verdicts), reasons_txt: counts(s.reasons), variants_txt: counts(s.variants),
    });
  });
  // Hits of shields no longer in the desired state are shown too: never dropped.
  for (const [name, hit] of Object.entries(j.hits))
    if (!j.shields.some(s => s.shield === name))
      rows.push({ shield: name, mode: '(not deployed)', hits_pg: hit.hits, hit_hosts: hit.hosts,
        last_hit: hit.last, verdicts: counts(hit.verdicts) });
  show(el('h2', null, 'CVE coverage'),
    facts([['hosts registered', h.registered, 'registered'], ['with kernel agents', h.kernel, 'kernel'],
      ['control-plane agents', h.control_plane, 'control_plane'], ['seen in the last 5 min', h.seen_5m, 'seen_5m']]),
    el('h3', null, 'Shields'),
    table([
      ['shield', r => shieldLink(r.shield)], ['mode', 'mode'], ['targeted', 'targeted', 'n'],
      ['enforcing', 'enforcing', r => r.enforcing ? 'n good' : 'n'],
      ['auditing', 'auditing', r => r.auditing ? 'n warn' : 'n'],
      ['refused', 'refused', r => r.refused ? 'n bad' : 'n'], ['failed', 'failed', r => r.failed ? 'n bad' : 'n'],
      ['not reporting', 'not_reporting', r => r.not_reporting ? 'n warn' : 'n'],
      ['why not enforcing', 'reasons_txt'], ['variants', 'variants_txt'],
      ['hits', 'hits_pg', 'n'], ['by verdict', 'verdicts'], ['hosts hit', 'hit_hosts', 'n'],
      ['last hit', r => fmtTime(r.last_hit)],
    ], rows, r => ({ 'data-shield': r.shield })),
    el('p', { class: 'note' }, 'Counts from each host\'s report in NATS (kshield_status); hits from PostgreSQL (ks_events, counted through its rollup ks_hits_day).'));
}

// ---- a shield ----
function chart(hours) {
  const byT = new Map();
  for (const h of hours) {
    const e = byT.get(h.t) || { refused: 0, audited: 0, killed: 0 };
    e[h.verdict] = (e[h.verdict] || 0) + h.hits;
    byT.set(h.t, e);
  }
  const c = el('div', { class: 'chart', title: 'hits per hour, last 7 days' });
  const max = Math.max(1, ...[...byT.values()].map(e => e.refused + e.audited + e.killed));
  for (const [t, e] of [...byT.entries()].sort((a, b) => a[0] - b[0])) {
    const n = e.refused + e.audited + e.killed;
    const b = el('div', { class: e.audited > e.refused ? 'bar audited' : 'bar', title: fmtTime(t) + ': ' + n + ' hits' });
    b.style.height = Math.max(2, Math.round(80 * n / max)) + 'px';   // CSSOM: allowed under the CSP
    c.append(b);
  }
  return c;
}

async function shield(name) {
  const j = await api('shield?name=' + encodeURIComponent(name));
  const s = j.summary;
  const hunt = el('div', null, el('p', { class: 'note' }, 'running the shield\'s hunt fleet-wide...'));
  show(el('h2', null, 'Shield ', el('span', { 'data-k': 'shield' }, name)),
    facts([['mode', s.mode + (s.by ? ' (' + s.by + ')' : ''), 'mode'], ['version', s.version],
      ['targeted', s.targeted, 'targeted'], ['enforcing', s.enforcing, 'enforcing'], ['auditing', s.auditing, 'auditing'],
      ['refused', s.refused, 'refused'], ['not reporting', s.not_reporting, 'not_reporting'],
      ['variants', counts(s.variants)], ['hits (PostgreSQL)', j.hits_total, 'hits_total'],
      ['expires', fmtTime(s.expires_at)]]),
    el('h3', null, 'Hosts by kernel, variant, mode and proof'),
    table([['kernel', 'release'], ['arch', 'arch'], ['variant', 'variant'], ['mode', 'mode'], ['status', 'status'],
      ['proof', 'proof'], ['hosts', 'hosts', 'n']], j.groups.sort((a, b) => b.hosts - a.hosts)),
    el('h3', null, 'Hits per hour (last 7 days)'), chart(j.hits_by_hour),
    el('h3', null, 'Hits by host and verdict'),
    el('p', { class: 'note' }, j.hit_groups + ' groups, ' + j.hits_total + ' hits' +
      (j.hit_groups > j.hits_by_host.length ? '; the ' + j.hits_by_host.length + ' largest listed' : '')),
    table([['host', r => hostLink(r.host)], ['verdict', 'verdict'], ['hits', 'hits', 'n'],
      ['first', r => fmtTime(r.first)], ['last', r => fmtTime(r.last)]], j.hits_by_host),
    el('h3', null, 'The shield\'s hunt, fleet-wide'), hunt,
    el('h3', null, 'Hosts'),
    el('p', { class: 'note' }, j.hosts_total + ' hosts' + (j.hosts_total > j.hosts.length ? ', ' + j.hosts.length + ' listed' : '')),
    table([['host', r => hostLink(r.host)], ['kernel', 'release'], ['arch', 'arch'], ['variant', 'variant'],
      ['mode', 'mode'], ['status', 'status', r => r.status === 'enforcing' ? 'good' : r.status === 'auditing' ? 'warn' : 'bad'],
      ['proof', 'proof'], ['why', 'why'], ['hits', 'hits', 'n'], ['reported', r => ago(r.at)]], j.hosts));
  try {
    const h = await api('hunt?name=' + encodeURIComponent(name));
    hunt.replaceChildren(h.hunt ? table([['host', r => hostLink(r.host)], ['hits', 'hits', 'n'],
      ['first', r => fmtTime(r.first / 1e6)], ['last', r => fmtTime(r.last / 1e6)]], h.rows)
      : el('p', { class: 'note' }, 'this shield has no hunt'));
    if (h.hunt && !h.rows.length) hunt.append(el('p', { class: 'note' }, 'no host matches'));
  } catch (e) {
    hunt.replaceChildren(el('p', { class: 'err' }, 'hunt: ' + e.message));
  }
  hunt.setAttribute('data-done', '1');
}

// ---- a host ----
function execTree(execs) {
  const byPid = new Map(execs.map(e => [e.pid, e]));
  const kids = new Map();
  const roots = [];
  for (const e of execs.slice().reverse()) {
    if (e.ppid !== e.pid && byPid.has(e.ppid)) {
      if (!kids.has(e.ppid)) kids.set(e.ppid, []);
      kids.get(e.ppid).push(e);
    } else roots.push(e);
  }
  const seen = new Set();
  const node = e => {
    const li = el('li', { 'data-k': 'exec' }, fmtTime(e.ts).slice(11) + '  ' + e.pid + '  ' + e.comm + '  ' + e.binary +
      (e.args ? '  [' + e.args + ']' : '') + '  uid ' + e.uid);
    if (!seen.has(e) && kids.has(e.pid)) {
      seen.add(e);
      li.append(el('ul', { class: 'tree' }, ...kids.get(e.pid).map(node)));
    }
    return li;
  };
  return el('ul', { class: 'tree' }, ...roots.map(node));
}

async function host(name) {
  const j = await api('host?name=' + encodeURIComponent(name));
  const h = j.host;
  const lost = h.lost === undefined ? '-' : h.lost;
  show(el('h2', null, 'Host ', el('span', { 'data-k': 'host' }, name)),
    j.unknown ? el('p', { class: 'err' }, j.unknown) : '',
    facts([['kernel', (h.release || '-') + (h.kernel === false ? ' (control-plane agent)' : ''), 'release'],
      ['arch', h.arch || '-', 'arch'], ['agent', h.agent || '-', 'agent'], ['groups', h.groups || '-'],
      ['last seen', fmtTime(h.at) + ' (' + ago(h.at) + ')', 'at'], ['last event stored', fmtTime(j.last_event)],
      ['guard', h.guard || '-', 'guard'], ['events lost (ring buffer)', lost, 'lost'],
      ['events stored', counts(j.event_counts)]]),
    el('h3', null, 'Shields'),
    table([['shield', r => shieldLink(r.shield)], ['status', 'status', r => r.status === 'enforcing' ? 'good' : r.status === 'auditing' ? 'warn' : 'bad'],
      ['mode', 'mode'], ['variant', 'variant'], ['proof', r => r.gate || 'not gated'], ['error', 'error'],
      ['hits', 'hits', 'n'], ['reported', r => ago(r.at)]], j.shields),
    el('h3', null, 'Hits, grouped'),
    el('p', { class: 'note' }, j.hit_groups + ' groups, ' + j.hits_total + ' hits' +
      (j.hit_groups > j.hits.length ? '; the ' + j.hits.length + ' most recent listed' : '')),
    table([['shield', r => shieldLink(r.shield)], ['verdict', 'verdict'], ['process', 'comm'], ['binary', 'binary'],
      ['command line', 'cmdline'], ['hook', 'hook'],
      ['arguments', 'args'], ['hits', 'hits', 'n'], ['first', r => fmtTime(r.first)], ['last', r => fmtTime(r.last)]],
      j.hits, r => ({ 'data-hit': r.shield })),
    el('h3', null, 'Recent execs (tree by parent)'), execTree(j.execs),
    el('h3', null, 'Recent connections'),
    table([['time', r => fmtTime(r.ts)], ['kind', 'kind'], ['pid', 'pid', 'n'], ['process', 'comm'],
      ['local', r => r.laddr + ':' + r.lport], ['remote', r => r.raddr ? r.raddr + ':' + r.rport : '']], j.connections));
}

// ---- rollouts ----
async function rollouts() {
  const j = await api('rollouts');
  const rows = j.rollouts;
  const blocks = rows.map(r => el('div', { 'data-rollout': r.shield },
    el('h3', null, shieldLink(r.shield), ' - ', r.mode, r.by ? ' (' + r.by + ')' : ''),
    facts([['audit-first', r.audit_first ? 'yes: ' + (r.audit_first_ms / 1000) + ' s quiet, ' + (r.audit_hit_hosts ?
        'held back by audit hits (promote it, or roll back)' : 'promotes ' + fmtTime(r.promote_at)) : 'no', 'audit_first'],
      ['hosts with audit hits', r.audit_hit_hosts, 'audit_hit_hosts'],
      ['enforcing / auditing / targeted', r.enforcing + ' / ' + r.auditing + ' / ' + r.targeted, 'eat'],
      ['gated', r.gated ? 'yes: proven ' + r.kernels.proven + ', unproven ' + r.kernels.unproven + ', refused ' +
        r.kernels.refused + ', promoted ' + r.kernels.promoted : 'no', 'gated'],
      ['unproven kernels held in audit', counts(r.unproven_kernels) || '-'],
      ['expires', fmtTime(r.expires_at) + ' (in ' + Math.round(r.expires_in_ms / 86400000) + ' days)', 'expires']]),
    el('p', { class: 'note' }, 'To act, sign and run:'),
    ...r.commands.map(c => el('pre', { class: 'cmd' }, c))));
  show(el('h2', null, 'Rollouts'), ...(blocks.length ? blocks : [el('p', null, 'nothing deployed')]));
}

// ---- hosts ----
async function hosts(glob) {
  const j = await api('hosts?name=' + encodeURIComponent(glob || ''));
  const input = el('input', { type: 'search', placeholder: 'host glob, e.g. web-*', value: glob || '' });
  input.addEventListener('change', () => { location.hash = '#/hosts/' + encodeURIComponent(input.value); });
  show(el('h2', null, 'Hosts'), input,
    el('p', { class: 'note' }, j.total + ' hosts' + (j.total > j.hosts.length ? ', ' + j.hosts.length + ' listed' : '')),
    table([['host', r => hostLink(r.host)], ['kernel', 'release'], ['arch', 'arch'], ['agent', 'agent'],
      ['kind', r => r.kernel ? 'kernel' : 'control-plane'], ['last seen', r => ago(r.at)]], j.hosts));
}

async function route() {
  const parts = (location.hash || '#/').slice(2).split('/');
  const arg = parts.length > 1 ? decodeURIComponent(parts.slice(1).join('/')) : '';
  try {
    if (parts[0] === 'shield') await shield(arg);
    else if (parts[0] === 'host') await host(arg);
    else if (parts[0] === 'rollouts') await rollouts();
    else if (parts[0] === 'hosts') await hosts(arg);
    else await coverage();
  } catch (e) {
    const msg = String(e.message || e);
    if (msg.startsWith('still reading')) setTimeout(route, 1000);   // the server's first read of NATS
    else show(el('p', { class: 'err' }, msg));
  }
}

window.addEventListener('hashchange', route);
route();
