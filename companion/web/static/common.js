/* Wandering Towers table companion: shared page code (connection, board drawing, panels).
   Plain browser JavaScript, no libraries, no build step. Everything shown comes from the
   service's snapshot; nothing here decides game rules. */
"use strict";

const WT = (() => {
  const SVGNS = "http://www.w3.org/2000/svg";
  const LETTER = { blue: "B", yellow: "Y", red: "R", green: "G", orange: "O", purple: "P" };
  const FILL = {
    blue: "#1f5fd1", yellow: "#f2c200", red: "#d1242f",
    green: "#1a7f37", orange: "#ef7b16", purple: "#8250df",
  };
  const DARK_TEXT = { yellow: true, orange: true };
  const POLL_MS = 1500;

  // ---------------------------------------------------------------- DOM helpers
  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v;
      else if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  function sv(tag, attrs, ...kids) {
    const node = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === "text") node.textContent = v;
      else if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
      else node.setAttribute(k, String(v));
    }
    for (const kid of kids.flat()) if (kid) node.append(kid);
    return node;
  }

  function $(id) { return document.getElementById(id); }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  function cap(s) { return s ? s.charAt(0).toUpperCase() + s.slice(1) : ""; }

  // "blue-2" (an id) or "blue-a" (a wizard the page may not follow: a label in reading order)
  function colourOf(wizardId) { return String(wizardId).replace(/-[0-9a-z]+$/, ""); }

  /* A wizard as the page names it: its id, or only its colour for a wizard the camera sees
     but the tracker has not placed yet. */
  function wizardName(wizardId) { return /-seen\d+$/.test(wizardId) ? colourOf(wizardId) : wizardId; }

  function chip(colour, text) {
    return el("span", { class: `chip c-${colour}`, title: cap(colour),
      "aria-label": cap(colour) }, text || LETTER[colour] || "?");
  }

  function setMsg(node, text, ok) {
    node.textContent = text || "";
    node.className = "msg " + (text ? (ok ? "ok" : "err") : "");
  }

  // ---------------------------------------------------------------- talking to the server
  function csrfToken() {
    for (const part of document.cookie.split(";")) {
      const [k, v] = part.trim().split("=");
      if (k === "wt_csrf") return decodeURIComponent(v || "");
    }
    return "";
  }

  /* A page's commands reach the companion one at a time, in the order they were given: the
     next is sent when the previous one is answered. Sent at once, "two dice" and then "roll"
     tapped quickly could arrive the other way round (each request has its own server thread)
     and the die card would wipe the roll. */
  let sending = Promise.resolve();
  function post(as, body) {
    const turn = sending.then(() => postNow(as, body));
    sending = turn.catch(() => undefined);
    return turn;
  }

  async function postNow(as, body) {
    let resp;
    try {
      resp = await fetch(`/api/command?as=${encodeURIComponent(as)}`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
        body: JSON.stringify(body),
      });
    } catch (err) {
      return { ok: false, status: 0, error: "the companion is not reachable" };
    }
    let data = {};
    try { data = await resp.json(); } catch (err) { data = {}; }
    if (!resp.ok) return { ok: false, status: resp.status, error: data.error || resp.statusText };
    return { ok: true, status: resp.status, data };
  }

  /* Live snapshots: Server-Sent Events first; polling /api/state with an ETag while the
     event stream is down, and back to a stream as soon as the server has a slot again. Polling
     always fetches the latest snapshot, so a page converges to the current state whatever it
     missed in between. onSnapshot(snap) gets every newer snapshot (a snapshot of another
     epoch is newer whatever its version: the companion restarted without its last version);
     onStatus(kind, text) gets "live" | "poll" | "down" | "auth". */
  const RETRY_MS = 2000;       // first wait before streaming again after a refusal
  const RETRY_MAX_MS = 30000;  // longest wait between attempts
  function connect(as, onSnapshot, onStatus) {
    let version = -1;
    let epoch = null;
    let etag = null;
    let pollTimer = null;
    let retryTimer = null;
    let retryMs = RETRY_MS;
    let es = null;
    let signedOut = false;
    // this page's own id: a reconnect of this page replaces its old stream on the server
    const tab = Math.random().toString(36).slice(2, 12) || "tab";

    function deliver(snap) {
      if (!snap || typeof snap.version !== "number") return;
      const sameEpoch = epoch === null || snap.epoch === epoch;
      if (sameEpoch && snap.version < version) return;
      version = snap.version;
      epoch = snap.epoch;
      onSnapshot(snap);
    }

    async function pollOnce() {
      try {
        const headers = etag ? { "If-None-Match": etag } : {};
        const resp = await fetch(`/api/state?as=${encodeURIComponent(as)}`,
          { headers, cache: "no-store", credentials: "same-origin" });
        if (resp.status === 304) { onStatus(es && es.readyState === 1 ? "live" : "poll"); return; }
        if (resp.status === 401) {
          const data = await resp.json().catch(() => ({}));
          onStatus("auth", data.error || "not signed in");
          signedOut = true;
          stopPolling();
          if (es) es.close();
          return;
        }
        if (!resp.ok) { onStatus("down", `server answered ${resp.status}`); return; }
        etag = resp.headers.get("ETag");
        deliver(await resp.json());
        onStatus(es && es.readyState === 1 ? "live" : "poll");
      } catch (err) {
        onStatus("down", "the companion is not reachable");
      }
    }

    function startPolling() {
      if (pollTimer || signedOut) return;
      pollOnce();
      pollTimer = setInterval(pollOnce, POLL_MS);
    }
    function stopPolling() { if (pollTimer) { clearInterval(pollTimer); pollTimer = null; } }

    /* The stream is closed for good (refused with 503, or its slot given to a new phone):
       poll meanwhile and open a new stream after `ms` (with jitter, so pages do not all come
       back at once); each refusal doubles the wait up to RETRY_MAX_MS. */
    function retryLater(ms) {
      if (es) es.close();
      startPolling();
      if (retryTimer || signedOut) return;
      const wait = ms * (0.75 + Math.random() * 0.5);
      retryTimer = setTimeout(() => { retryTimer = null; openStream(); }, wait);
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    }

    function openStream() {
      if (signedOut) return;
      es = new EventSource(`/events?as=${encodeURIComponent(as)}&tab=${tab}`);
      es.addEventListener("snapshot", (ev) => {
        try { deliver(JSON.parse(ev.data)); } catch (err) { /* a torn message: wait for the next */ }
      });
      es.addEventListener("evicted", (ev) => {
        let s = 20;
        try { s = Number(JSON.parse(ev.data).retry_s) || s; } catch (err) { /* keep 20 s */ }
        retryLater(s * 1000);
      });
      es.onopen = () => { stopPolling(); retryMs = RETRY_MS; onStatus("live"); };
      es.onerror = () => {
        // the browser retries by itself unless the answer was not a stream (readyState 2)
        if (es.readyState === 2) retryLater(retryMs);
        else startPolling();
      };
    }

    if (typeof EventSource === "undefined") { startPolling(); return { refresh: pollOnce }; }
    openStream();
    return { refresh: pollOnce };
  }

  function showStatus(node, kind, text) {
    const labels = { live: "live", poll: "polling", down: "offline", auth: "not signed in" };
    node.textContent = labels[kind] || kind;
    node.className = "conn " + (kind === "auth" ? "down" : kind);
    if (text) node.title = text;
  }

  // ---------------------------------------------------------------- board layout
  const layoutCache = new Map();
  async function layoutFor(state) {
    const track = (state && state.track) || { length: 16, special: {} };
    const special = Object.entries(track.special || {}).map(([s, k]) => `${s}:${k}`).join(",");
    const key = `${track.length}|${special}`;
    if (!layoutCache.has(key)) {
      const url = `/api/layout?length=${track.length}&special=${encodeURIComponent(special)}`;
      const resp = await fetch(url);
      if (!resp.ok) throw new Error("no board layout");
      layoutCache.set(key, await resp.json());
    }
    return layoutCache.get(key);
  }

  // ---------------------------------------------------------------- reading a state
  function spaceKind(state, space) {
    const track = state.track || {};
    const special = (track.special || {})[String(space)];
    if (special) return special;
    return (track.raven_crest || []).includes(space) ? "crest-space" : "plain-space";
  }

  function stackOf(state, space) {
    return ((state.stacks || {})[String(space)]) || [];
  }

  function towerKind(state, id) {
    const t = (state.towers || {})[id];
    if (t && t.kind) return t.kind;
    if (/^R\d/.test(id)) return "crest";
    if (/^P\d/.test(id)) return "plain";
    if (id === "MT") return "magic";
    return "unknown";
  }

  function wizardsAt(state, space) {
    const h = stackOf(state, space).length;
    const visible = [];
    const hidden = [];
    for (const [id, pos] of Object.entries(state.wizards || {})) {
      if (!pos || typeof pos !== "object" || pos.space !== space) continue;
      if (pos.tier === h) visible.push(id); else hidden.push([id, pos.tier]);
    }
    visible.sort();
    hidden.sort((a, b) => a[1] - b[1]);
    return { visible, hidden };
  }

  function pieceAt(piece, space) { return piece && typeof piece === "object" && piece.space === space; }

  /* The board to draw. While the snapshot is "checking", the camera has read a still board the
     tracker has not worked out yet (snap.seen): the towers, their top roofs, the wizards on top,
     the castle and the tokens are drawn as the camera saw them; what the camera cannot see
     (trapped wizards, wizards in the castle, whose turn, potions) stays the tracker's until it
     has caught up. A trapped wizard is kept only where the camera still sees towers above it.
     A space the camera did not read (withheld as unsure: not in snap.seen) is never drawn
     empty: it keeps the tracker's belief (towers, wizards, castle, tokens) and is marked
     "not read" (state._seenSpaces lists the spaces read). */
  function boardState(snap) {
    const state = snap && snap.state;
    const seen = snap && snap.checking && snap.seen;
    if (!state || !seen || !seen.spaces) return state;
    const towers = Object.assign({}, state.towers || {});
    const stacks = {};
    const wizards = {};
    const hidden = {};
    const heights = {};
    let castle = null, witch = null, raven = null, n = 0;
    for (const [key, sp] of Object.entries(seen.spaces)) {
      const space = Number(key);
      const h = Math.max(0, Number(sp.towers) || 0);
      heights[space] = h;
      const ids = [];
      for (let i = 0; i < h; i++) {
        const id = `seen-${space}-${i}`;
        towers[id] = { kind: i === h - 1 ? sp.top : "unknown" };
        ids.push(id);
      }
      stacks[key] = ids;
      for (const [colour, count] of Object.entries(sp.wizards || {})) {
        for (let k = 0; k < count; k++) wizards[`${colour}-seen${n++}`] = { space, tier: h };
      }
      if (sp.castle) castle = { space, tier: h };
      if (sp.witch) witch = { space, tier: h };
      if (sp.raven) raven = { space, tier: h };
    }
    const read = (space) => Object.prototype.hasOwnProperty.call(seen.spaces, String(space));
    for (const [key, ids] of Object.entries(state.stacks || {})) {
      if (!read(key)) stacks[key] = ids;  // not read: the tracker's stack
    }
    for (const [id, pos] of Object.entries(state.wizards || {})) {
      if (pos === "castle") { wizards[id] = pos; continue; }
      if (!pos || typeof pos !== "object") continue;
      if (!read(pos.space) || pos.tier < (heights[pos.space] || 0)) wizards[id] = pos;
    }
    for (const [key, count] of Object.entries(state.hidden || {})) {
      if (!read(key) || heights[Number(key)]) hidden[key] = count;
    }
    const kept = (piece) => (piece && typeof piece === "object" && !read(piece.space) ? piece : null);
    castle = castle || kept(state.castle);
    witch = witch || kept(state.witch);
    raven = raven || kept(state.raven);
    return Object.assign({}, state, { towers, stacks, wizards, hidden, castle, witch, raven,
      _seenSpaces: Object.keys(seen.spaces).map(Number) });
  }

  // ---------------------------------------------------------------- the board as SVG
  // a space's content, relative to its centre (user units; one space is about 100 wide)
  const WZ_SLOTS = [[-20, -4], [0, -4], [20, -4], [-20, 17], [0, 17], [20, 17]];

  function wizardMark(x, y, colour, r, cls, title) {
    const g = sv("g", {});
    g.append(sv("circle", { cx: x, cy: y, r, fill: FILL[colour] || "#999", class: cls }));
    g.append(sv("text", { x, y: y + 0.5, class: "wz-letter", "font-size": Math.round(r * 1.25),
      fill: DARK_TEXT[colour] ? "#1d1a16" : "#fff", text: LETTER[colour] || "?" }));
    if (title) g.append(sv("title", { text: title }));
    return g;
  }

  function castleShape(x, y) {
    const w = 44, h = 38, top = y - h / 2, left = x - w / 2;
    const d = `M${left} ${top + h} V${top + 9} h6 v-9 h8 v9 h8 v-9 h8 v9 h8 v-9 h6 v${h} Z`;
    return sv("g", {}, sv("path", { d, class: "castle" }),
      sv("text", { x, y: y + 12, class: "castle-label", "text-anchor": "middle", text: "castle" }),
      sv("title", { text: "the raven castle" }));
  }

  function describeSpace(state, space, kind, stack, wz) {
    const parts = [`Space ${space}`];
    if (kind !== "plain-space") parts.push(kind.replace("-space", " space"));
    if (stack.length) parts.push(`${stack.length} tower${stack.length > 1 ? "s" : ""}, ` +
      `${towerKind(state, stack[stack.length - 1])} roof on top`);
    if (pieceAt(state.castle, space)) parts.push("raven castle");
    if (wz.visible.length) parts.push("on top: " + wz.visible.map(wizardName).join(", "));
    if (wz.hidden.length) parts.push("trapped " + wz.hidden.map(([id, t]) => `${id} (tier ${t})`).join(", "));
    return parts.join(" · ");
  }

  /* Draw the loop of spaces into <svg> node. opts.onPick(space) makes spaces tappable,
     opts.picked marks one. Trapped wizards are drawn only when the snapshot holds them. */
  async function renderBoard(svg, snap, opts) {
    opts = opts || {};
    const state = boardState(snap);
    svg.classList.toggle("checking", !!(state && snap.checking));
    if (!state) {
      svg._wtTicket = (svg._wtTicket || 0) + 1;
      clear(svg);
      svg.setAttribute("viewBox", "0 0 400 80");
      svg.append(sv("text", { x: 200, y: 45, "text-anchor": "middle", class: "num",
        text: "No game yet: the host sets one up." }));
      return;
    }
    const ticket = (svg._wtTicket = (svg._wtTicket || 0) + 1);
    const layout = await layoutFor(state);
    if (ticket !== svg._wtTicket) return;  // a newer snapshot is being drawn
    clear(svg);
    svg.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "the track with towers and wizards");
    svg.append(sv("defs", {},
      sv("pattern", { id: "webpattern", width: 12, height: 12, patternUnits: "userSpaceOnUse" },
        sv("rect", { width: 12, height: 12, fill: "#dcdcdc" }),
        sv("path", { d: "M0 0 L12 12 M12 0 L0 12", stroke: "#888", "stroke-width": 1 }))));
    for (const sp of layout.spaces) {
      const { space, x, y } = sp;
      const kind = spaceKind(state, space);
      const stack = stackOf(state, space);
      const wz = wizardsAt(state, space);
      const unread = !!state._seenSpaces && !state._seenSpaces.includes(space);
      const g = sv("g", { "data-space": space });
      const cls = ["space", kind];
      if (unread) { cls.push("unread"); g.setAttribute("data-unread", "1"); }
      if (opts.onPick) cls.push("pickable");
      if (opts.picked === space) cls.push("picked");
      const outline = sp.outline || [[x - 46, y - 46], [x + 46, y - 46], [x + 46, y + 46], [x - 46, y + 46]];
      g.append(sv("polygon", { points: outline.map((p) => p.join(",")).join(" "), class: cls.join(" ") }));
      g.append(sv("title", { text: describeSpace(state, space, kind, stack, wz) +
        (unread ? " · not read by the camera: as the companion last knew it" : "") }));
      if (kind === "crest-space" && !stack.length) {
        g.append(sv("path", { class: "crestmark",
          d: `M${x + 20} ${y - 42} h18 v11 q0 11 -9 15 q-9 -4 -9 -15 Z` }));
      }
      if (kind === "fountain" || kind === "web") {
        g.append(sv("text", { x, y: y + 44, "text-anchor": "middle", class: "num",
          text: kind === "fountain" ? "fountain" : "web" }));
      }
      g.append(sv("text", { x: x - 44, y: y - 29, class: "num", text: space }));
      if (unread) {
        g.append(sv("text", { x: x - 20, y: y - 29, class: "num unread-mark", text: "?" },
          sv("title", { text: "not read by the camera" })));
      }
      if (stack.length) {
        const top = towerKind(state, stack[stack.length - 1]);
        const shadows = Math.min(stack.length - 1, 3);
        for (let i = shadows; i >= 1; i--) {
          g.append(sv("rect", { x: x - 32 + 4 * i, y: y - 22 - 4 * i, width: 64, height: 52,
            rx: 8, class: "tower unknown" }));
        }
        g.append(sv("rect", { x: x - 32, y: y - 22, width: 64, height: 52, rx: 8,
          class: `tower ${top}` }));
        if (top === "magic") {
          g.append(sv("text", { x, y: y - 8, "text-anchor": "middle", class: "num", text: "✦" }));
        }
        g.append(sv("circle", { cx: x + 32, cy: y - 28, r: 14, fill: "#fff", stroke: "#3a3127",
          "stroke-width": 2.5 }));
        g.append(sv("text", { x: x + 32, y: y - 21, "text-anchor": "middle", class: "height",
          text: stack.length }));
      }
      if (pieceAt(state.castle, space)) g.append(castleShape(x, y + 2));
      wz.visible.slice(0, 6).forEach((id, i) => {
        const [dx, dy] = WZ_SLOTS[i];
        g.append(wizardMark(x + dx, y + dy, colourOf(id), 11, "wz", `${wizardName(id)} on top`));
      });
      // trapped wizards this page may show: a dashed row below the stack (tier in the title)
      const unsure = (snap.state && snap.state.trapped_unsure) || {};
      wz.hidden.slice(0, 4).forEach(([id, tier], i) => {
        const maybe = unsure[colourOf(id)] ? " (one of several places, not sure)" : "";
        g.append(wizardMark(x - 33 + 21 * i, y + 43, colourOf(id), 10,
          "wz hidden-wz" + (maybe ? " unsure" : ""), `${id} trapped at tier ${tier}${maybe}`));
      });
      if (wz.hidden.length > 4) {
        const extra = wz.hidden.length - 4;
        const ux = x - 37 + 21 * 3;
        g.append(sv("rect", { x: ux - 6, y: y + 33, width: 30, height: 20, rx: 10, fill: "#fff",
          stroke: "#3a3127", "stroke-dasharray": "3 2" }));
        g.append(sv("text", { x: ux + 9, y: y + 48, "text-anchor": "middle", class: "num",
          "font-size": 15, text: `+${extra}` }));
      }
      if (pieceAt(state.witch, space) && state.witch.tier === stack.length) {
        g.append(sv("circle", { cx: x - 36, cy: y + 4, r: 9, class: "token-witch" }));
        g.append(sv("text", { x: x - 36, y: y + 4.5, class: "token-label", text: "W" }));
      }
      if (pieceAt(state.raven, space)) {
        g.append(sv("rect", { x: x + 27, y: y + 8, width: 18, height: 14, rx: 3,
          class: "token-raven" }));
        g.append(sv("text", { x: x + 36, y: y + 15.5, class: "token-label", text: "Rv" }));
      }
      if (opts.onPick) {
        g.addEventListener("click", () => opts.onPick(space));
        g.setAttribute("tabindex", "0");
        g.setAttribute("role", "button");
        g.addEventListener("keydown", (ev) => { if (ev.key === "Enter") opts.onPick(space); });
      }
      svg.append(g);
    }
    // the open middle of the loop: whose turn it is, readable from across the table
    const turn = (state.turn || {}).player;
    if (turn && !(state.game || {}).over) {
      const cx = layout.width / 2, cy = layout.height / 2;
      svg.append(sv("g", { class: "centre" },
        wizardMark(cx, cy - 22, turn, 26, "wz", `${turn}'s turn`),
        sv("text", { x: cx, y: cy + 30, "text-anchor": "middle", class: "centre-text",
          text: `${cap(turn)}'s turn` })));
    }
  }

  // ---------------------------------------------------------------- panels
  function renderTurn(node, snap) {
    clear(node);
    const st = snap.state;
    if (!st) { node.append(el("span", {}, "Waiting for the host to set up a game")); return; }
    const game = st.game || {};
    if (game.over) {
      const res = game.result || {};
      const winners = (res.winners || []).map(cap).join(" and ");
      node.append(el("span", {}, winners ? `Game over: ${winners} won` : "Game over"));
      return;
    }
    const turn = st.turn || {};
    const who = turn.player;
    node.append(chip(who), el("span", {}, `${cap(who)}'s turn`));
    const bits = [];
    if (typeof turn.cards_used === "number") bits.push(`card ${Math.min(turn.cards_used + 1, 2)} of 2`);
    if (turn.redrawn) bits.push("redrew");
    if (game.remaining_turns !== null && game.remaining_turns !== undefined) {
      bits.push(`last round: ${game.remaining_turns} turn(s) after this`);
    }
    if (bits.length) node.append(el("span", { class: "sub" }, bits.join(" · ")));
  }

  function potionsText(p) {
    const out = [];
    for (let i = 0; i < (p.full || 0); i++) out.push(el("span", { class: "potion-full", title: "full" }, "●"));
    for (let i = 0; i < (p.empty || 0); i++) out.push(el("span", { class: "potion-empty", title: "empty" }, "○"));
    for (let i = 0; i < (p.spent || 0); i++) out.push(el("span", { class: "potion-spent", title: "spent on a spell" }, "×"));
    return out;
  }

  function renderPlayers(node, snap) {
    clear(node);
    const st = snap.state;
    if (!st) return;
    const current = (st.turn || {}).player;
    const head = el("tr", {}, el("th", {}, "Player"), el("th", {}, "Potions"),
      el("th", { title: "wizards inside the raven castle" }, "In castle"));
    const hasFeathers = st.feathers && Object.keys(st.feathers).length;
    if (hasFeathers) head.append(el("th", {}, "Feathers"));
    node.append(head);
    const inCastle = {};
    for (const [id, pos] of Object.entries(st.wizards || {})) {
      if (pos === "castle") inCastle[colourOf(id)] = (inCastle[colourOf(id)] || 0) + 1;
    }
    for (const pl of st.players || []) {
      const colour = pl.colour || pl.id;
      const p = (st.potions || {})[colour] || {};
      // the camera cannot tell a card from a spell: the counts the tracker still holds, each
      // shown, "or" between them, never one of them as certain
      const unsure = (st.potions_unsure || {})[colour];
      const counts = unsure && unsure.length > 1 ? unsure : [p];
      const said = counts.map((q) => `${q.full || 0} full, ${q.empty || 0} empty, ${q.spent || 0} spent`);
      const shown = [];
      counts.forEach((q, i) => {
        if (i) shown.push(el("span", { class: "potion-or" }, " or "));
        shown.push(...potionsText(q));
      });
      const row = el("tr", { class: colour === current ? "current" : null, "data-player": colour },
        el("td", {}, chip(colour), " ", cap(colour)),
        el("td", { class: counts.length > 1 ? "potions unsure" : "potions", title: said.join(" or ") },
          shown),
        el("td", {}, String(inCastle[colour] || 0)));
      if (hasFeathers) row.append(el("td", {}, String(st.feathers[colour] || 0)));
      node.append(row);
      // trapped wizards the tracker holds several stories of (not yet asked: a lifted tower
      // will tell): every placement, "or" between them, never one of them as certain
      const trapped = (st.trapped_unsure || {})[colour];
      if (trapped && trapped.length > 1) {
        const said = trapped.map((alt) => alt.length
          ? alt.map((p) => `space ${p.space} (tier ${p.tier})`).join(", ") : "none");
        node.append(el("tr", { class: "trapped-unsure", "data-player": colour },
          el("td", { colspan: hasFeathers ? 4 : 3 },
            `${cap(colour)} trapped under a tower: ${said.join(" or ")}`)));
      }
    }
  }

  function renderDice(node, snap) {
    clear(node);
    const d = snap.dice;
    const value = d && d.value;
    node.append(el("span", { class: "die" + (value ? "" : " none"), "aria-label": "last die" },
      value ? String(value) : "–"));
    if (d && d.rolls && d.rolls.length) {
      const rest = d.final ? "kept" : `${Math.max((d.mode || 1) - d.rolls.length, 0)} reroll(s) left`;
      node.append(el("span", { class: "rolls" }, `rolls ${d.rolls.join(" → ")} · ${rest}`));
    } else if (d && d.mode) {
      node.append(el("span", { class: "rolls" }, `card with ${d.mode} ${d.mode > 1 ? "dice" : "die"}: roll`));
    } else {
      node.append(el("span", { class: "rolls" }, "no roll yet"));
    }
  }

  function renderHealth(node, snap) {
    const h = snap.health || {};
    node.textContent = h.line || "";
    node.className = "health" + (h.ok === false ? " bad" : "");
    if (snap.checking && snap.state) {
      node.prepend(el("span", { class: "checking", id: "checking", role: "status",
        title: "the board as the camera sees it; the companion is still checking the move" },
        "checking…"), " ");
    }
    document.body.dataset.checking = snap.checking ? "1" : "0";
  }

  function renderLog(node, snap) {
    clear(node);
    const lines = (snap.log || []).slice(-12).reverse();
    for (const line of lines) node.append(el("li", {}, line));
    if (!lines.length) node.append(el("li", { class: "muted" }, "nothing yet"));
  }

  /* The open question; buttons only when canAnswer(question) says so. */
  function renderQuestion(section, snap, canAnswer, onAnswer) {
    const q = snap.question;
    section.classList.toggle("hidden", !q);
    const body = section.querySelector(".qbody");
    clear(body);
    if (!q) return;
    if (q.to) body.append(el("p", { class: "muted" }, chip(q.to), ` for ${cap(q.to)}`));
    body.append(el("p", { "data-question": q.id }, q.text));
    if (canAnswer(q)) {
      const row = el("div", { class: "choices" });
      for (const opt of q.options || []) {
        row.append(el("button", { class: "primary", "data-option": opt.id,
          on: { click: () => onAnswer(q, opt) } }, opt.label));
      }
      body.append(row);
    } else {
      body.append(el("p", { class: "muted" },
        q.to ? `Waiting for ${cap(q.to)} to answer on their phone.` : "Waiting for the host."));
    }
  }

  // the seven pips of the LED die (hardware PIPS order) on a 3x3 grid
  const PIP_CELLS = { top_left: 0, top_right: 2, middle_left: 3, centre: 4, middle_right: 5,
    bottom_left: 6, bottom_right: 8 };

  /* The LED panel as the hardware layer publishes it (VirtualPanel.snapshot): pips by name,
     one LED per seat, the attention LED. */
  function renderPanel(node, snap) {
    clear(node);
    const panel = snap.panel;
    if (!panel || typeof panel !== "object") {
      node.append(el("span", { class: "muted" }, "no LED panel"));
      return;
    }
    const lit = new Array(9).fill(false);
    for (const [name, on] of Object.entries(panel.pips || {})) {
      if (name in PIP_CELLS) lit[PIP_CELLS[name]] = !!on;
    }
    const pips = el("span", { class: "pips", title: "the LED die", "data-pips": lit.filter(Boolean).length });
    for (const on of lit) pips.append(el("i", { class: on ? "on" : "" }));
    node.append(pips);
    for (const seat of panel.seats || []) {
      node.append(el("span", { class: `led ${seat.on ? "on" : ""}`, "data-led": `seat-${seat.colour}` },
        el("i", {}), chip(seat.colour)));
    }
    const att = panel.attention || {};
    node.append(el("span", { class: `led ${att.on ? "blink" : ""}`, "data-led": "attention" },
      el("i", {}), "look at your phone"));
  }

  return {
    LETTER, el, sv, $, clear, cap, chip, colourOf, boardState, setMsg, post, connect, showStatus,
    renderBoard, renderTurn, renderPlayers, renderDice, renderHealth, renderLog,
    renderQuestion, renderPanel, wizardsAt, stackOf, spaceKind,
  };
})();
