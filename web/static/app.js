// The brain operator console: a client of the JSON API (/v1).
//
// Rules of this file: text from the API (a model's, a user's, a tool's) is
// inserted with textContent, never as markup. The only markup inserted is
// the HTML that the server's markdown renderer (POST /console/api/markdown)
// returns, which holds no raw HTML and no unsafe link. Hrefs are checked by
// safeHref before use. The API enforces roles; the page only hides what a
// role cannot use.
'use strict';

(function () {
  const STATES = ['READY', 'RUNNING', 'BLOCKED', 'PAUSED', 'DONE', 'FAILED'];
  const POLL_MS = 2000;
  const INBOX_SHOWN = 20; // the waiting messages a process page lists at most
  const TOKEN_KEY = 'brain.token';
  const ROLE_KEY = 'brain.role';
  const SVG = 'http://www.w3.org/2000/svg';
  const store = window.sessionStorage;
  const $ = (id) => document.getElementById(id);

  let open = false; // the API answers without a token
  let listTimer = null;
  let procTimer = null;
  let stream = null; // {abort: AbortController, gen: number}
  let streamGen = 0;
  let current = null; // id of the process shown
  const pending = new Map(); // message id -> queued bubble
  // live is the progress of the turn that runs in the process shown (see
  // showProgress), or null; ended holds the turns whose durable answer or
  // end has landed, whose later progress is stale; progressAt is when the
  // last progress came (performance.now()).
  let live = null;
  const ended = new Set();
  let progressAt = -1;
  const decided = new Map(); // call id -> decision sent, while the process still lists the call
  const drained = new Set(); // message ids already shown from the log

  // --- API --------------------------------------------------------------

  class APIError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  function authHeaders() {
    const h = {};
    const t = store.getItem(TOKEN_KEY);
    if (t) h.Authorization = 'Bearer ' + t;
    return h;
  }

  async function api(method, path, body, extra) {
    const headers = Object.assign(authHeaders(), extra || {});
    const init = { method, headers, cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    return decode(res);
  }

  async function decode(res) {
    let data = null;
    const text = await res.text();
    if (text) {
      try {
        data = JSON.parse(text);
      } catch (e) {
        data = null;
      }
    }
    if (!res.ok) {
      const err = data && data.error ? data.error : {};
      const e = new APIError(res.status, err.code || '', err.message || res.status + ' ' + res.statusText);
      if (res.status === 401) signedOut(store.getItem(TOKEN_KEY) ? e.message : '');
      throw e;
    }
    return data;
  }

  const enc = encodeURIComponent;

  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return Date.now().toString(36) + '-' + Math.random().toString(36).slice(2);
  }

  // --- helpers ----------------------------------------------------------

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, String(attrs[k]));
    return e;
  }

  // safeHref returns h if a link may point at it: http(s) with a host, or a
  // path of this server; else null.
  // procLink links to the page of process id.
  function procLink(id) {
    const a = el('a', '', id);
    a.href = '#/p/' + enc(id);
    return a;
  }

  function safeHref(h) {
    if (typeof h !== 'string' || h === '' || /[\\\u0000-\u001f\u007f]/.test(h)) return null;
    if (/^https?:\/\/[^/]/i.test(h)) return h;
    if (h[0] === '/' && h[1] !== '/') return h;
    return null;
  }

  function link(label, href) {
    const ok = safeHref(href);
    if (!ok) return el('span', '', label);
    const a = el('a', '', label);
    a.href = ok;
    if (ok[0] !== '/') {
      a.target = '_blank';
      a.rel = 'noopener noreferrer nofollow';
    }
    return a;
  }

  function showError(msg) {
    const e = $('error');
    e.textContent = msg || '';
    e.hidden = !msg;
  }

  // count prints a number of tokens short: 950, 12.3k, 4.1M.
  function count(n) {
    if (n < 1000) return String(n);
    if (n < 1e6) return (n / 1e3).toFixed(1) + 'k';
    return (n / 1e6).toFixed(1) + 'M';
  }

  function age(iso) {
    const t = Date.parse(iso);
    if (isNaN(t)) return '';
    return span(Date.now() - t);
  }

  // span prints a duration in milliseconds short: 45s, 12m, 3h05, 2d.
  function span(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm';
    if (s < 86400) return Math.floor(s / 3600) + 'h' + String(Math.floor((s % 3600) / 60)).padStart(2, '0');
    return Math.floor(s / 86400) + 'd';
  }

  function display(v) {
    if (v === undefined || v === null) return '';
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }

  // waitingBadge returns the badge of a process that waits for a person's
  // decision on a tool call, or null.
  function waitingBadge(p) {
    return p.waiting_for === 'approval' ? el('span', 'badge waiting', 'waiting for approval') : null;
  }

  // until says how long until iso: "in 5m", or "passed".
  function until(iso) {
    const t = Date.parse(iso);
    if (isNaN(t)) return '';
    if (t <= Date.now()) return 'passed';
    return 'in ' + span(t - Date.now());
  }

  function role() {
    return open ? 'admin' : store.getItem(ROLE_KEY) || '';
  }

  function setRole(r) {
    if (!open) store.setItem(ROLE_KEY, r);
    applyRole();
  }

  // applyRole hides the operator controls from a user. Until the role is
  // known they are shown; the API refuses what the role cannot do.
  function applyRole() {
    const user = role() === 'user';
    $('p-controls').hidden = user;
    $('steer-form').hidden = user;
    const who = $('who');
    if (open) who.textContent = 'open mode';
    else who.textContent = role() ? 'signed in (' + role() + ')' : 'signed in';
    $('signout').hidden = open;
  }

  // --- views ------------------------------------------------------------

  function stopAll() {
    clearInterval(listTimer);
    clearInterval(procTimer);
    listTimer = procTimer = null;
    stopStream();
    current = null;
  }

  function only(id) {
    for (const s of ['signin', 'list', 'process']) $(s).hidden = s !== id;
  }

  function signedOut(msg) {
    stopAll();
    store.removeItem(TOKEN_KEY);
    store.removeItem(ROLE_KEY);
    $('who').textContent = '';
    $('signout').hidden = true;
    only('signin');
    showError(msg);
  }

  async function route() {
    stopAll();
    showError('');
    const m = /^#\/p\/(.+)$/.exec(location.hash);
    if (m) return showProcess(decodeURIComponent(m[1]));
    return showList();
  }

  // --- process list -----------------------------------------------------

  async function showList() {
    only('list');
    applyRole();
    loadRecipes();
    await refreshList();
    listTimer = setInterval(refreshList, POLL_MS);
  }

  // loadRecipes fills the recipe choices: the one a process starts from,
  // and the list's filter.
  async function loadRecipes() {
    const sel = $('create-recipe');
    if (sel.options.length) return;
    try {
      const data = await api('GET', '/v1/recipes');
      for (const r of data.recipes || []) {
        for (const s of [sel, $('list-recipe')]) {
          const o = el('option', '', r.name);
          o.value = r.name;
          if (r.description) o.title = r.description;
          s.appendChild(o);
        }
      }
    } catch (e) {
      showError('recipes: ' + e.message);
    }
  }

  async function refreshList() {
    let page;
    const recipe = $('list-recipe').value;
    try {
      page = await api('GET', '/v1/processes?limit=1000' + (recipe ? '&recipe=' + enc(recipe) : ''));
    } catch (e) {
      if (e.status !== 401) showError('processes: ' + e.message);
      return;
    }
    if ($('list').hidden || recipe !== $('list-recipe').value) return; // gone, or another filter's answer
    showError('');
    const by = {};
    for (const p of page.processes || []) (by[p.state] = by[p.state] || []).push(p);
    const box = $('states');
    box.textContent = '';
    for (const st of STATES) {
      const ps = by[st] || [];
      const h = el('h2', '');
      h.appendChild(el('span', 'state ' + st, st));
      h.appendChild(document.createTextNode(' ' + ps.length));
      box.appendChild(h);
      if (!ps.length) continue;
      ps.sort((a, b) => Date.parse(b.updated_at) - Date.parse(a.updated_at));
      const t = el('table', 'procs');
      const head = t.createTHead().insertRow();
      for (const c of ['Process', 'Recipe', 'Owner', 'Age', 'Updated', 'Inbox', 'Tokens', '']) head.appendChild(el('th', '', c));
      const body = t.createTBody();
      for (const p of ps) {
        const tr = body.insertRow();
        if (st === 'BLOCKED') tr.className = 'blocked';
        tr.insertCell().appendChild(procLink(p.id));
        tr.insertCell().textContent = p.recipe;
        tr.insertCell().textContent = p.owner || '';
        tr.insertCell().textContent = age(p.created_at);
        tr.insertCell().textContent = age(p.updated_at) + ' ago';
        tr.insertCell().textContent = p.inbox ? p.inbox + ' waiting' : '';
        tr.insertCell().textContent = p.tokens ? count(p.tokens.input) + ' in, ' + count(p.tokens.output) + ' out' : '';
        const notes = [];
        const badge = waitingBadge(p);
        if (st === 'BLOCKED' && !badge) notes.push('waiting for a person');
        if (p.paused_from) notes.push('paused from ' + p.paused_from);
        if (p.parent) notes.push('worker of ' + p.parent);
        const cell = tr.insertCell();
        if (badge) cell.append(badge, notes.length ? ' ' : '');
        cell.append(notes.join(', '));
      }
      box.appendChild(t);
    }
    if (page.next) box.appendChild(el('p', 'muted', 'Only the first page of the list is shown: there are more processes.'));
  }

  async function createProcess(ev) {
    ev.preventDefault();
    const body = { recipe: $('create-recipe').value };
    const input = $('create-input').value.trim();
    if (input) body.input = input;
    try {
      const p = await postOnce('/v1/processes', body);
      $('create-input').value = '';
      location.hash = '#/p/' + enc(p.id);
    } catch (e) {
      showError('start: ' + e.message);
    }
  }

  // --- process page -----------------------------------------------------

  async function showProcess(pid) {
    only('process');
    current = pid;
    disarmDelete();
    $('chat').textContent = '';
    $('raw').textContent = '';
    $('p-title').textContent = pid;
    $('p-state').textContent = '';
    $('p-recipe').textContent = '';
    $('p-family').hidden = true;
    $('p-pipeline').hidden = true;
    $('p-timers').hidden = true;
    $('p-inbox').hidden = true;
    $('p-waiting').hidden = true;
    clearApprovals();
    pending.clear();
    drained.clear();
    clearProgress();
    applyRole();
    if (!(await refreshProcess())) return;
    if (!open && !role()) await probeRole(pid);
    if (current !== pid) return;
    // The raw toggle, clicked while the page loaded, has started the
    // stream already: a second one would show every event twice.
    if (!stream) {
      const raw = $('p-raw').checked && role() !== 'user';
      $('chat').hidden = raw;
      $('raw').hidden = !raw;
      follow(pid, raw ? 'raw' : 'user');
    }
    procTimer = setInterval(refreshProcess, POLL_MS);
  }

  async function refreshProcess() {
    const pid = current;
    if (!pid) return false;
    const asked = performance.now();
    try {
      const [p, workers, timers] = await Promise.all([
        api('GET', '/v1/processes/' + enc(pid)),
        api('GET', '/v1/processes?parent=' + enc(pid) + '&limit=100'),
        api('GET', '/v1/processes/' + enc(pid) + '/timers'),
      ]);
      if (current !== pid) return false;
      const st = $('p-state');
      st.textContent = p.state + (p.paused_from ? ' (from ' + p.paused_from + ')' : '');
      st.className = 'state ' + p.state;
      $('p-recipe').textContent = p.recipe + (p.owner ? ' · ' + p.owner : '') + ' · ' + age(p.created_at) + ' old' +
        (p.tokens ? ' · ' + count(p.tokens.input) + ' tokens in, ' + count(p.tokens.output) + ' out' : '') +
        (p.tokens && p.tokens.day ? ' (' + count(p.tokens.day_total) + ' on ' + p.tokens.day + ')' : '') +
        (p.inbox ? ' · ' + p.inbox + ' message' + (p.inbox === 1 ? '' : 's') + ' waiting in the inbox' : '') +
        (p.events_trimmed ? ' · its oldest ' + p.events_trimmed + ' events deleted (limits.max_log_events)' : '');
      $('p-waiting').hidden = p.waiting_for !== 'approval';
      // Asked after the last progress came, a process that does not run
      // has finished the turn that sent it.
      if (p.state !== 'RUNNING' && live && asked > progressAt) endTurn(live.turn);
      showFamily(p, workers);
      showPipeline(p.pipeline);
      showTimers(pid, timers.timers || []);
      showApprovals(pid, p);
      await showInbox(pid, p.inbox || 0);
      return true;
    } catch (e) {
      if (e.status !== 401) showError('process: ' + e.message);
      return false;
    }
  }

  // showFamily links the process's parent and the workers it started
  // (workers belong to their parent's owner).
  function showFamily(p, workers) {
    const box = $('p-family');
    box.textContent = '';
    if (p.parent) {
      box.appendChild(el('span', '', 'worker of'));
      box.appendChild(procLink(p.parent));
    }
    const ws = workers.processes || [];
    if (ws.length) {
      box.appendChild(el('span', '', 'workers:'));
      for (const w of ws) {
        const s = el('span', 'worker');
        s.appendChild(procLink(w.id));
        s.appendChild(document.createTextNode(' '));
        s.appendChild(el('span', 'state ' + w.state, w.state));
        const badge = waitingBadge(w);
        if (badge) s.append(' ', badge);
        box.appendChild(s);
      }
      if (workers.next) box.appendChild(el('span', '', '…'));
    }
    box.hidden = !p.parent && !ws.length;
  }

  // showPipeline shows where the pipeline of a phased (vogon) process
  // stands: its phases in order, the one it is in marked, and the result
  // of each that passed in its newest run, to unfold.
  function showPipeline(pl) {
    const box = $('p-pipeline');
    box.textContent = '';
    box.hidden = !pl;
    if (!pl) return;
    box.appendChild(el('span', '', pl.phase ? 'phase:' : (pl.since === 'failed' ? 'pipeline failed:' : 'pipeline:')));
    for (const ph of pl.phases || []) {
      const passed = ph.result !== undefined;
      const cls = 'phase' + (ph.name === pl.phase ? ' current' : '') + (passed ? ' passed' : '');
      if (!passed) {
        box.appendChild(el('span', cls, ph.name));
        continue;
      }
      const d = el('details', cls);
      d.appendChild(el('summary', '', ph.name + ' ✓'));
      d.appendChild(el('pre', 'result', JSON.stringify(ph.result, null, 2)));
      box.appendChild(d);
    }
  }

  // showTimers lists the process's timers, the next due first; an
  // operator can cancel one.
  function showTimers(pid, timers) {
    const box = $('p-timers');
    box.textContent = '';
    if (timers.length) box.appendChild(el('span', '', 'timers:'));
    for (const t of timers) {
      const s = el('span', 'timer');
      const due = new Date(Date.parse(t.due)).toLocaleString();
      s.appendChild(el('span', '', (t.cron ? t.cron + ', next ' : '') + due + (t.message ? ': ' + t.message : '')));
      if (role() !== 'user') {
        const b = el('button', 'link', 'cancel');
        b.type = 'button';
        b.dataset.timer = t.id;
        b.title = 'Cancel timer ' + t.id;
        b.addEventListener('click', () => cancelTimer(pid, t.id));
        s.appendChild(b);
      }
      box.appendChild(s);
    }
    box.hidden = !timers.length;
  }

  // showInbox lists, to an operator, the messages waiting for the
  // process's next turn (a paused one keeps them).
  async function showInbox(pid, waiting) {
    const box = $('p-inbox');
    let msgs = [];
    if (waiting && role() !== 'user') {
      try {
        msgs = (await api('GET', '/v1/processes/' + enc(pid) + '/inbox')).messages || [];
      } catch (e) {
        if (e.status === 403) setRole('user');
      }
    }
    if (current !== pid) return;
    box.textContent = '';
    if (msgs.length) box.appendChild(el('span', '', 'waiting:'));
    for (const m of msgs.slice(0, INBOX_SHOWN)) {
      const s = el('span', 'waiting');
      s.appendChild(el('span', 'muted', m.from || m.kind));
      const text = m.content.length > 200 ? m.content.slice(0, 199) + '…' : m.content;
      s.appendChild(document.createTextNode(' ' + text));
      box.appendChild(s);
    }
    if (msgs.length > INBOX_SHOWN) box.appendChild(el('span', 'muted', '+' + (msgs.length - INBOX_SHOWN) + ' more'));
    box.hidden = !msgs.length;
  }

  // --- approvals --------------------------------------------------------

  function clearApprovals() {
    for (const card of [...$('p-approvals').querySelectorAll('.approval')]) card.remove();
    $('p-approvals').hidden = true;
    $('p-approvals-note').hidden = true;
    decided.clear();
  }

  // showApprovals lists the process's tool calls that wait for a person's
  // decision: the tool, its arguments, who may decide and until when, and
  // to those who may, Approve and Reject with an optional reason (needed
  // to reject). A call's card is built once and kept while it waits, so a
  // refresh keeps the reason being typed. A user is shown only the calls
  // she may decide; the others are a note.
  function showApprovals(pid, p) {
    const box = $('p-approvals');
    const calls = p.approvals || [];
    const others = p.waiting_for === 'approval' && !calls.length;
    $('p-approvals-note').hidden = !others;
    const cards = new Map();
    for (const card of [...box.querySelectorAll('.approval')]) cards.set(card.dataset.call, card);
    const waiting = new Set(calls.map((c) => c.call_id));
    for (const [id, card] of cards) {
      if (!waiting.has(id)) {
        card.remove();
        cards.delete(id);
      }
    }
    for (const id of [...decided.keys()]) if (!waiting.has(id)) decided.delete(id);
    for (const c of calls) {
      let card = cards.get(c.call_id);
      if (!card) {
        card = approvalCard(pid, c);
        box.appendChild(card);
      }
      updateApproval(card, c);
    }
    box.hidden = !calls.length && !others;
  }

  function approvalCard(pid, c) {
    const card = el('div', 'approval');
    card.dataset.call = c.call_id;
    const head = el('div', 'head');
    head.appendChild(el('span', 'tool', c.tool || c.name || 'tool'));
    head.appendChild(el('span', 'when'));
    card.appendChild(head);
    // The arguments are text: shown with textContent, never as markup.
    card.appendChild(el('pre', 'args', JSON.stringify(c.arguments === undefined ? {} : c.arguments, null, 2)));
    const form = el('div', 'decide');
    const reason = el('input', 'reason');
    reason.placeholder = 'Reason (optional to approve, needed to reject)';
    reason.setAttribute('aria-label', 'Reason');
    reason.maxLength = 1000; // the API's bound (api.maxReason)
    reason.addEventListener('input', () => reason.classList.remove('needed'));
    form.appendChild(reason);
    for (const [decision, label] of [['approve', 'Approve'], ['reject', 'Reject']]) {
      const b = el('button', decision === 'reject' ? 'danger' : '', label);
      b.type = 'button';
      b.dataset.decision = decision;
      b.addEventListener('click', () => decide(pid, c.call_id, decision, card));
      form.appendChild(b);
    }
    card.appendChild(form);
    card.appendChild(el('span', 'status'));
    return card;
  }

  // updateApproval refreshes what changes while a call waits: how long it
  // has, whether this role may decide it, and a decision already sent.
  function updateApproval(card, c) {
    const who = c.by === 'user' ? 'the user or an operator decides' : 'an operator decides';
    let when = 'asked ' + age(c.requested_at) + ' ago · ' + who;
    if (c.deadline) {
      when += ' · deadline ' + new Date(Date.parse(c.deadline)).toLocaleString() + ' (' + until(c.deadline) + '; then rejected)';
    }
    card.querySelector('.when').textContent = when;
    const sent = decided.get(c.call_id);
    const form = card.querySelector('.decide');
    form.hidden = !!sent || (role() === 'user' && c.by !== 'user');
    for (const e of form.querySelectorAll('button, input')) e.disabled = !!sent || card.classList.contains('busy');
    card.classList.toggle('sent', !!sent);
    card.querySelector('.status').textContent = sent ? (sent === 'approve' ? 'Approved' : 'Rejected') + ': the process goes on.' : '';
  }

  // decide posts a decision on a waiting call, then shows the process as
  // it is now. A call decided meanwhile (409) or that this role may not
  // decide (403) shows the API's message.
  async function decide(pid, callId, decision, card) {
    const input = card.querySelector('input.reason');
    const reason = input.value.trim();
    if (decision === 'reject' && !reason) {
      input.classList.add('needed');
      input.placeholder = 'Why reject it? Say why, then Reject';
      input.focus();
      return;
    }
    const body = { decision };
    if (reason) body.reason = reason;
    card.classList.add('busy');
    for (const e of card.querySelectorAll('button, input')) e.disabled = true;
    try {
      // Sent again after a lost answer, the decision keeps its key: the
      // server takes it once rather than answering 409.
      await postOnce('/v1/processes/' + enc(pid) + '/approvals/' + enc(callId), body);
      decided.set(callId, decision);
      showError('');
    } catch (e) {
      if (e.status !== 401) showError(decision + ' ' + callId + ': ' + e.message);
    } finally {
      card.classList.remove('busy');
      for (const e of card.querySelectorAll('button, input')) e.disabled = decided.has(callId);
    }
    if (current === pid) refreshProcess();
  }

  // refreshSoon refreshes the process page when its log says that its
  // approvals changed, without waiting for the next poll; a request made
  // while one is under way runs after it.
  let refreshing = false;
  let refreshAgain = false;
  async function refreshSoon() {
    if (refreshing) {
      refreshAgain = true;
      return;
    }
    refreshing = true;
    try {
      do {
        refreshAgain = false;
        await refreshProcess();
      } while (refreshAgain);
    } finally {
      refreshing = false;
    }
  }

  // approvalLines says what an approval event records, one line a call:
  // "approval requested: http_fetch {...} (decided by operator)", "approved
  // by operator:bob", "rejected by timeout: not approved within 1h". The
  // chat leaves the arguments out: the call's card shows them.
  function approvalLines(ev, withArgs) {
    if (ev.type === 'approval_requested') {
      return ((ev.approval_requested || {}).calls || []).map((c) => 'approval requested: ' + (c.name || c.tool || 'tool') +
        (withArgs ? ' ' + JSON.stringify(c.arguments === undefined ? {} : c.arguments) : '') + ' (decided by ' + (c.by || 'operator') +
        (c.deadline ? ', deadline ' + new Date(Date.parse(c.deadline)).toLocaleString() : '') + ')');
    }
    if (ev.type === 'approval_decided') {
      const d = ev.approval_decided || {};
      return [(d.decision === 'approve' ? 'approved' : 'rejected') + (ev.by ? ' by ' + ev.by : '') +
        (d.reason ? ': ' + d.reason : '') + ' (call ' + (d.call_id || '?') + ')'];
    }
    return [];
  }

  async function cancelTimer(pid, id) {
    try {
      await api('DELETE', '/v1/processes/' + enc(pid) + '/timers/' + enc(id));
      showError('');
      refreshProcess();
    } catch (e) {
      if (e.status === 403) setRole('user');
      showError('cancel timer: ' + e.message);
    }
  }

  // probeRole learns whether the token is an operator's: the raw view is
  // theirs only.
  async function probeRole(pid) {
    try {
      await api('GET', '/v1/processes/' + enc(pid) + '/events?view=raw&limit=1');
      setRole('operator');
    } catch (e) {
      if (e.status === 403) setRole('user');
    }
  }

  function stopStream() {
    streamGen++;
    if (stream) stream.abort();
    stream = null;
  }

  // follow reads the process's event stream with fetch (EventSource cannot
  // send an Authorization header) and reconnects from the last event id
  // until another stream replaces it.
  async function follow(pid, view) {
    stopStream();
    const gen = streamGen;
    let after = '';
    while (gen === streamGen) {
      const ctl = new AbortController();
      stream = ctl;
      try {
        const headers = authHeaders();
        if (after) headers['Last-Event-ID'] = after;
        const res = await fetch('/v1/processes/' + enc(pid) + '/events/stream?view=' + view,
          { headers, signal: ctl.signal, cache: 'no-store' });
        if (!res.ok) {
          await decode(res).catch((e) => { if (e.status !== 401) showError('events: ' + e.message); });
          if (res.status !== 503) return;
        } else {
          const reader = res.body.getReader();
          const dec = new TextDecoder();
          let buf = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
            let i;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              const frame = buf.slice(0, i);
              buf = buf.slice(i + 2);
              const f = parseFrame(frame);
              if (!f || gen !== streamGen) continue;
              if (f.event === 'progress') { // no id: Last-Event-ID stays on the log
                showProgress(f.data);
                continue;
              }
              const ev = f.data;
              if (ev.id) after = ev.id;
              if (view === 'raw') showRaw(ev);
              else showEvent(ev);
              landed(ev);
            }
          }
        }
      } catch (e) {
        if (e.name === 'AbortError' || gen !== streamGen) return;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  // parseFrame reads a server-sent event: {event, data} with its data
  // parsed, or null for a comment or what does not parse.
  function parseFrame(frame) {
    const data = [];
    let event = '';
    for (const line of frame.split('\n')) {
      if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      else if (line.startsWith('event:')) event = line.slice(6).replace(/^ /, '');
    }
    if (!data.length) return null;
    try {
      return { event, data: JSON.parse(data.join('\n')) };
    } catch (e) {
      return null;
    }
  }

  // --- progress ---------------------------------------------------------

  // While a turn runs, the stream carries its progress (live.Update): the
  // round, the tools that run, the model's text and the answer as they
  // are written, each delta at its byte offset. The page shows the turn's
  // status and the answer growing in the #live bubble, below the log. A
  // delta that does not start where the shown text ends (one was missed)
  // is dropped: what arrived stays. The durable event that lands later
  // supersedes it (see supersedes).
  const utf8 = new TextEncoder();

  function clearProgress() {
    live = null;
    ended.clear();
    progressAt = -1;
    drawProgress();
  }

  function showProgress(u) {
    if (!u || !u.turn || ended.has(u.turn)) return;
    progressAt = performance.now();
    const round = u.round || 0;
    if (!live || live.turn !== u.turn || round > live.round) {
      // A new turn, or round: the round's tools end within it.
      live = { turn: u.turn, round, tools: new Map(), text: part(), answer: part() };
    }
    switch (u.kind) {
      case 'text': grow(live.text, u); break;
      case 'answer': grow(live.answer, u); break;
      case 'tool_started': live.tools.set(u.call_id, u.tool || 'tool'); break;
      case 'tool_finished': live.tools.delete(u.call_id); break;
      default: break; // round_started, and kinds of newer nodes
    }
    drawProgress();
  }

  function part() {
    return { text: '', bytes: 0 };
  }

  // grow adds u's delta to p when it starts where p ends. One at offset 0
  // starts the text again: the model's call was asked again (a retry).
  function grow(p, u) {
    if (!u.delta) return;
    if (!u.offset) {
      p.text = '';
      p.bytes = 0;
    }
    if ((u.offset || 0) !== p.bytes) return;
    p.text += u.delta;
    p.bytes += utf8.encode(u.delta).length;
  }

  function drawProgress() {
    const box = $('live');
    if (!live) {
      box.hidden = true;
      return;
    }
    const status = ['round ' + live.round];
    for (const name of live.tools.values()) status.push(name + ' running');
    const shown = live.answer.text ? live.answer : live.text;
    $('live-status').textContent = (live.answer.text ? 'writing the answer' : 'working') + ' · ' + status.join(' · ');
    const text = $('live-text');
    text.textContent = shown.text; // a model's text: as text, never markup
    text.classList.toggle('aside', shown !== live.answer);
    text.hidden = !shown.text;
    box.hidden = false;
    window.scrollTo(0, document.body.scrollHeight);
  }

  // endTurn drops the progress of turn: its answer or its end landed.
  function endTurn(turn) {
    if (!turn) return;
    ended.add(turn);
    if (live && live.turn === turn) live = null;
    drawProgress();
  }

  // landed lets a durable event supersede the progress it supersedes.
  function landed(ev) {
    const turn = ev.turn || (live && live.turn);
    switch (supersedes(ev)) {
      case 'turn':
        endTurn(turn);
        break;
      case 'text':
        if (live && live.turn === turn) {
          live.text = part();
          live.answer = part();
          drawProgress();
        }
        break;
      default:
        break;
    }
    if (ev.type === 'turn_start' && live && live.turn !== ev.turn) endTurn(live.turn); // a turn starts: the one shown is over
  }

  // supersedes says what a durable event supersedes of the progress of
  // its turn: 'turn' when the turn's answer landed (respond's message,
  // finish_task's result) or the turn ended (a state change out of
  // RUNNING), after which its progress is stale; 'text' when a message of
  // the model's to the user landed, holding the text written so far (the
  // turn may go on: free text beside tools, in turn_end: natural); else ''.
  // `brain logs -f` reads the log by the same rule (cmd/brain/progress.go).
  function supersedes(ev) {
    switch (ev.type) {
      case 'state_change':
        return (ev.state_change || {}).from === 'RUNNING' ? 'turn' : '';
      case 'tool_call_response': {
        const r = ev.tool_call_response || {};
        return !r.is_error && (r.name === 'respond' || r.name === 'finish_task') ? 'turn' : '';
      }
      case 'chat_response': {
        const c = ev.chat_response || {};
        const toUser = !c.audience || !c.audience.length || c.audience.includes('user');
        return (c.variant === 'message' || c.variant === 'structured') && toUser ? 'text' : '';
      }
      default:
        return '';
    }
  }

  function showRaw(ev) {
    const pre = $('raw');
    const lines = approvalLines(ev, true);
    for (const line of lines) pre.appendChild(el('span', 'note', line));
    pre.appendChild(document.createTextNode(JSON.stringify(ev, null, 2) + '\n'));
    if (lines.length) refreshSoon();
  }

  function bubble(cls, meta) {
    const b = el('div', 'msg ' + cls);
    if (meta) b.appendChild(el('div', 'meta', meta));
    $('chat').appendChild(b);
    return b;
  }

  function when(ev) {
    const t = Date.parse(ev.at);
    return isNaN(t) ? '' : new Date(t).toLocaleTimeString();
  }

  function showEvent(ev) {
    switch (ev.type) {
      case 'inbox_message': {
        const m = ev.inbox_message || {};
        drained.add(m.message_id);
        const q = pending.get(m.message_id);
        if (q) {
          q.remove();
          pending.delete(m.message_id);
        }
        const b = bubble('user', (m.from || 'user') + ' · ' + when(ev));
        b.appendChild(document.createTextNode(m.content || ''));
        break;
      }
      case 'chat_response': {
        const c = ev.chat_response || {};
        const b = bubble('assistant', 'assistant · ' + when(ev));
        if (c.variant === 'structured') {
          b.appendChild(el('pre', '', JSON.stringify(c.structured, null, 2)));
        } else {
          markdownInto(b.appendChild(el('div', 'md')), c.text || '');
        }
        sources(b, c.citations);
        break;
      }
      case 'tool_call_response': {
        const r = ev.tool_call_response || {};
        const speaker = (r.name === 'respond' || r.name === 'tell_user') ? 'assistant' : (r.name || 'tool');
        const b = bubble('assistant', speaker + ' · ' + when(ev));
        for (const blk of r.content || []) {
          if (blk.type !== 'text') {
            b.appendChild(el('p', 'muted', '[' + blk.type + ' content]'));
          } else if (blk.mimeType === 'text/markdown') {
            markdownInto(b.appendChild(el('div', 'md')), blk.text || '');
          } else {
            b.appendChild(el('p', '', blk.text || ''));
          }
        }
        sources(b, r.citations);
        break;
      }
      case 'presentation':
        presentation(bubble('assistant', 'assistant · ' + when(ev)), ev.presentation || {});
        break;
      case 'approval_requested':
      case 'approval_decided': {
        const b = bubble('note', (ev.type === 'approval_requested' ? 'approval requested' : 'approval decided') + ' · ' + when(ev));
        for (const line of approvalLines(ev, false)) b.appendChild(el('div', '', line));
        refreshSoon();
        break;
      }
      case 'system_notice': {
        // The user view's short text of a turn that failed or stopped early;
        // the raw view keeps the operator's details.
        const n = ev.system_notice || {};
        const b = bubble('note', 'notice · ' + when(ev));
        b.appendChild(el('div', '', n.text || 'Something went wrong, so this turn ended early.'));
        break;
      }
      case 'phase_change': { // a vogon process moves through its phases
        const p = ev.phase_change || {};
        const b = bubble('note', 'phase ' + (p.reason || '') + ' · ' + when(ev));
        b.appendChild(el('div', '', (p.from || '(start)') + ' → ' + (p.to || '(end)')));
        if (p.result !== undefined) b.appendChild(el('pre', '', JSON.stringify(p.result, null, 2)));
        break;
      }
      default:
        // turn_start and types of newer nodes: nothing to show.
        break;
    }
    window.scrollTo(0, document.body.scrollHeight);
  }

  // markdownInto renders markdown on the server, which returns HTML with no
  // raw HTML and no unsafe link; on failure the text is shown as is.
  async function markdownInto(target, md) {
    target.textContent = md;
    try {
      const res = await fetch('/console/api/markdown', {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ markdown: md }),
      });
      if (!res.ok) return;
      const out = await res.json();
      target.innerHTML = out.html; // sanitized by the server (web/markdown.go)
    } catch (e) {
      // keep the plain text
    }
  }

  function sources(b, citations) {
    if (!citations || !citations.length) return;
    b.appendChild(el('div', 'meta', 'Sources'));
    const ol = el('ol', 'sources');
    for (const c of citations) {
      const s = c.source || {};
      const li = el('li');
      li.appendChild(link(s.title || s.url || 'source', s.url));
      ol.appendChild(li);
    }
    b.appendChild(ol);
  }

  // --- presentations ----------------------------------------------------

  function presentation(b, p) {
    let blocks = p.blocks;
    if (typeof blocks === 'string') {
      try { blocks = JSON.parse(blocks); } catch (e) { blocks = null; }
    }
    if (p.summary) b.appendChild(el('p', 'summary', p.summary));
    if (!Array.isArray(blocks) || !blocks.length) {
      if (p.markdown) markdownInto(b.appendChild(el('div', 'md')), p.markdown);
      return;
    }
    for (const blk of blocks) {
      if (blk.title) b.appendChild(el('h2', '', blk.title));
      switch (blk.kind) {
        case 'metrics': b.appendChild(metrics(blk.items || [])); break;
        case 'table': b.appendChild(table(blk)); break;
        case 'chart': chart(b, blk); break;
        case 'links': b.appendChild(links(blk.items || [])); break;
        case 'actions': b.appendChild(actions(blk.items || [])); break;
        default: break;
      }
    }
  }

  function metrics(items) {
    const box = el('div', 'metrics');
    for (const it of items) {
      const m = el('div', 'metric');
      const v = it.display || display(it.value);
      m.appendChild(it.href ? (() => { const s = el('span', 'value'); s.appendChild(link(v, it.href)); return s; })() : el('span', 'value', v));
      m.appendChild(el('span', 'label', it.label));
      box.appendChild(m);
    }
    return box;
  }

  function table(blk) {
    const t = el('table');
    const cols = blk.columns || [];
    const head = t.createTHead().insertRow();
    for (const c of cols) head.appendChild(el('th', c.align || '', c.label));
    const body = t.createTBody();
    for (const r of blk.rows || []) {
      const tr = body.insertRow();
      cols.forEach((c, i) => {
        const td = tr.insertCell();
        if (c.align) td.className = c.align;
        const shown = (r.display && r.display[c.key] !== undefined) ? r.display[c.key] : display((r.cells || {})[c.key]);
        if (i === 0 && r.href) td.appendChild(link(shown, r.href));
        else td.textContent = shown;
      });
    }
    return t;
  }

  function links(items) {
    const box = el('div', 'links');
    for (const it of items) box.appendChild(link(it.label, it.href));
    return box;
  }

  function actions(items) {
    const box = el('div', 'actions');
    for (const it of items) {
      if (it.prompt) {
        const btn = el('button', '', it.label);
        btn.type = 'button';
        btn.title = it.prompt;
        btn.addEventListener('click', async () => {
          btn.disabled = true;
          if (!(await send(it.prompt))) btn.disabled = false;
        });
        box.appendChild(btn);
      } else {
        box.appendChild(link(it.label, it.href));
      }
    }
    return box;
  }

  function points(blk) {
    return (blk.points || []).map((p) => ({
      label: String(p.label || ''), value: Number(p.value) || 0, display: p.display || display(p.value),
    }));
  }

  function chart(b, blk) {
    const pts = points(blk);
    if (!pts.length) return;
    if (blk.chart_type === 'pie') return pie(b, pts);
    if (blk.chart_type === 'line') return line(b, pts);
    return bars(b, pts);
  }

  function short(s, n) {
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }

  function bars(b, pts) {
    const W = 520, H = 240, L = 10, T = 20, B = 40;
    const max = Math.max(...pts.map((p) => p.value), 0) || 1;
    const step = (W - 2 * L) / pts.length;
    const s = svg('svg', { class: 'chart', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
    s.appendChild(svg('line', { class: 'axis', x1: L, y1: H - B, x2: W - L, y2: H - B }));
    pts.forEach((p, i) => {
      const h = Math.max(0, (p.value / max) * (H - B - T));
      const x = L + i * step + step * 0.15;
      const r = svg('rect', { class: 'c' + (i % 12), x, y: H - B - h, width: step * 0.7, height: h });
      r.appendChild(svg('title', {})).textContent = p.label + ': ' + p.display;
      s.appendChild(r);
      const v = svg('text', { x: x + step * 0.35, y: H - B - h - 4, 'text-anchor': 'middle' });
      v.textContent = p.display;
      s.appendChild(v);
      const l = svg('text', { x: x + step * 0.35, y: H - B + 14, 'text-anchor': 'middle' });
      l.textContent = short(p.label, Math.max(4, Math.floor(step / 7)));
      s.appendChild(l);
    });
    b.appendChild(s);
  }

  function pie(b, pts) {
    const R = 90, C = 100;
    const vals = pts.map((p) => Math.max(0, p.value));
    const total = vals.reduce((a, v) => a + v, 0);
    const s = svg('svg', { class: 'chart', width: 2 * C, height: 2 * C, viewBox: '0 0 ' + 2 * C + ' ' + 2 * C, role: 'img' });
    let a0 = -Math.PI / 2;
    vals.forEach((v, i) => {
      if (v <= 0 || total <= 0) return;
      const frac = v / total;
      let shape;
      if (frac >= 0.9999) {
        shape = svg('circle', { class: 'slice c' + (i % 12), cx: C, cy: C, r: R });
      } else {
        const a1 = a0 + frac * 2 * Math.PI;
        const x0 = C + R * Math.cos(a0), y0 = C + R * Math.sin(a0);
        const x1 = C + R * Math.cos(a1), y1 = C + R * Math.sin(a1);
        const large = frac > 0.5 ? 1 : 0;
        shape = svg('path', {
          class: 'slice c' + (i % 12),
          d: 'M' + C + ',' + C + ' L' + x0.toFixed(2) + ',' + y0.toFixed(2) +
            ' A' + R + ',' + R + ' 0 ' + large + ' 1 ' + x1.toFixed(2) + ',' + y1.toFixed(2) + ' Z',
        });
        a0 = a1;
      }
      shape.appendChild(svg('title', {})).textContent = pts[i].label + ': ' + pts[i].display;
      s.appendChild(shape);
    });
    b.appendChild(s);
    legend(b, pts);
  }

  function line(b, pts) {
    const W = 520, H = 240, L = 30, T = 20, B = 40;
    const vals = pts.map((p) => p.value);
    const max = Math.max(...vals), min = Math.min(0, ...vals);
    const span = max - min || 1;
    const step = pts.length > 1 ? (W - 2 * L) / (pts.length - 1) : 0;
    const s = svg('svg', { class: 'chart', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
    s.appendChild(svg('line', { class: 'axis', x1: L, y1: H - B, x2: W - L, y2: H - B }));
    const xy = pts.map((p, i) => [L + i * step, H - B - ((p.value - min) / span) * (H - B - T)]);
    s.appendChild(svg('polyline', { class: 'line', points: xy.map((q) => q[0].toFixed(1) + ',' + q[1].toFixed(1)).join(' ') }));
    pts.forEach((p, i) => {
      const c = svg('circle', { class: 'c0', cx: xy[i][0], cy: xy[i][1], r: 3 });
      c.appendChild(svg('title', {})).textContent = p.label + ': ' + p.display;
      s.appendChild(c);
      const l = svg('text', { x: xy[i][0], y: H - B + 14, 'text-anchor': 'middle' });
      l.textContent = short(p.label, Math.max(4, Math.floor((step || 80) / 7)));
      s.appendChild(l);
    });
    b.appendChild(s);
  }

  function legend(b, pts) {
    const box = el('div', 'legend');
    pts.forEach((p, i) => {
      const item = el('span');
      item.appendChild(el('span', 'swatch c' + (i % 12)));
      item.appendChild(document.createTextNode(p.label + ' ' + p.display));
      box.appendChild(item);
    });
    b.appendChild(box);
  }

  // --- sending ----------------------------------------------------------

  // A request keeps its idempotency key until the server has taken it, so
  // that sending it again after an error (its answer lost on the way)
  // makes the process or stores the message once; a request is where it
  // goes and what it says.
  const unsentKeys = new Map();
  async function postOnce(path, body) {
    const slot = path + '\n' + JSON.stringify(body);
    if (!unsentKeys.has(slot)) unsentKeys.set(slot, newKey());
    const r = await api('POST', path, body, { 'Idempotency-Key': unsentKeys.get(slot) });
    unsentKeys.delete(slot);
    return r;
  }

  // post sends content to path (messages, steer).
  function post(path, content) {
    return postOnce(path, { content });
  }

  // send posts content as the user's message; the bubble stays "queued"
  // until the process reads it from its inbox.
  async function send(content) {
    const pid = current;
    if (!pid) return false;
    try {
      const r = await post('/v1/processes/' + enc(pid) + '/messages', content);
      // The log may already have shown the message (its event can arrive
      // before this answer): then there is nothing left to queue.
      if (current === pid && !$('p-raw').checked && !drained.has(r.message_id)) {
        const q = bubble('user', 'queued');
        q.appendChild(document.createTextNode(content));
        pending.set(r.message_id, q);
        window.scrollTo(0, document.body.scrollHeight);
      }
      return true;
    } catch (e) {
      showError('message: ' + e.message);
      return false;
    }
  }

  async function onMessage(ev) {
    ev.preventDefault();
    const box = $('message');
    const content = box.value;
    if (!content.trim()) return;
    if (await send(content)) box.value = '';
  }

  async function onSteer(ev) {
    ev.preventDefault();
    const box = $('steer');
    if (!box.value.trim() || !current) return;
    try {
      await post('/v1/processes/' + enc(current) + '/steer', box.value);
      box.value = '';
    } catch (e) {
      if (e.status === 403) setRole('user');
      showError('steer: ' + e.message);
    }
  }

  async function onControl(ev) {
    const action = ev.target.getAttribute('data-action');
    if (!action || !current) return;
    try {
      await api('POST', '/v1/processes/' + enc(current) + '/' + action);
      showError('');
      refreshProcess();
    } catch (e) {
      if (e.status === 403) setRole('user');
      showError(action + ': ' + e.message);
    }
  }

  // Deleting takes two clicks: the first arms the button for a few
  // seconds, the second deletes (a process, its conversation and its
  // workers are gone for good).
  const ARM_MS = 4000;
  let armTimer = null;

  function disarmDelete() {
    clearTimeout(armTimer);
    armTimer = null;
    const b = $('p-delete');
    b.classList.remove('armed');
    b.textContent = 'Delete';
  }

  async function onDelete() {
    const pid = current;
    if (!pid) return;
    const b = $('p-delete');
    if (!armTimer) {
      b.classList.add('armed');
      b.textContent = 'Delete for good?';
      armTimer = setTimeout(disarmDelete, ARM_MS);
      return;
    }
    disarmDelete();
    try {
      await api('DELETE', '/v1/processes/' + enc(pid));
      if (current === pid) location.hash = '#/';
    } catch (e) {
      showError('delete: ' + e.message);
    }
  }

  function onRaw() {
    if (!current) return;
    const raw = $('p-raw').checked;
    $('chat').textContent = '';
    $('raw').textContent = '';
    pending.clear();
    drained.clear();
    clearProgress();
    $('chat').hidden = raw;
    $('raw').hidden = !raw;
    follow(current, raw ? 'raw' : 'user');
  }

  // --- sign-in ----------------------------------------------------------

  async function onSignIn(ev) {
    ev.preventDefault();
    const t = $('token').value.trim();
    if (!t) return;
    store.setItem(TOKEN_KEY, t);
    store.removeItem(ROLE_KEY);
    $('token').value = '';
    showError('');
    try {
      await api('GET', '/v1/processes?limit=1');
      route();
    } catch (e) {
      if (e.status !== 401) showError(e.message);
    }
  }

  // start learns whether the API is open (it answers without a token) or
  // needs a sign-in.
  async function start() {
    $('signin-form').addEventListener('submit', onSignIn);
    $('signout').addEventListener('click', () => signedOut(''));
    $('create-form').addEventListener('submit', createProcess);
    $('list-recipe').addEventListener('change', refreshList);
    $('message-form').addEventListener('submit', onMessage);
    $('steer-form').addEventListener('submit', onSteer);
    $('p-controls').addEventListener('click', onControl);
    $('p-raw').addEventListener('change', onRaw);
    $('p-delete').addEventListener('click', onDelete);
    window.addEventListener('hashchange', route);

    try {
      // Without a token first: an open API answers, and then no sign-in.
      const res = await fetch('/v1/processes?limit=1', { cache: 'no-store' });
      if (res.ok) {
        open = true;
        store.removeItem(TOKEN_KEY);
        store.removeItem(ROLE_KEY);
        route();
        return;
      }
      if (res.status !== 401) {
        await decode(res);
      }
      if (!store.getItem(TOKEN_KEY)) {
        signedOut('');
        return;
      }
      await api('GET', '/v1/processes?limit=1');
      route();
    } catch (e) {
      if (e.status !== 401) showError(e.message);
    }
  }

  document.addEventListener('DOMContentLoaded', start);
})();
