/* Host page: set up a game, answer the tracker's questions, correct a space, undo, the dice
   and the virtual LED panel, camera calibration and the join codes. The service validates
   every command; this page only collects the host's choices. */
"use strict";

(() => {
  const { el, $, clear, cap } = WT;
  let snapNow = null;
  let picked = null;
  let tab = "game";
  let setupBuiltFor = null;
  let cameraTimer = null;

  async function send(body, done) {
    const r = await WT.post("host", body);
    WT.setMsg($("msg"), r.ok ? (r.data.message || done) : r.error, r.ok);
    return r;
  }

  // ------------------------------------------------------------ tabs
  function showTab(name) {
    tab = name;
    for (const b of $("tabs").querySelectorAll("button")) b.classList.toggle("active", b.dataset.tab === name);
    for (const p of document.querySelectorAll("[data-panel]")) p.classList.toggle("hidden", p.dataset.panel !== name);
    if (name === "codes") loadCodes();
    if (name === "setup" && snapNow) buildSetup(snapNow, true);
    if (cameraTimer) { clearInterval(cameraTimer); cameraTimer = null; }
    if (name === "calibrate") { refreshCamera(); cameraTimer = setInterval(refreshCamera, 2000); }
  }
  for (const b of $("tabs").querySelectorAll("button")) b.addEventListener("click", () => showTab(b.dataset.tab));

  // ------------------------------------------------------------ game tab
  function onPick(space) {
    picked = space;
    const st = snapNow && snapNow.state;
    if (!st) return;
    const stack = WT.stackOf(st, space);
    const wz = WT.wizardsAt(st, space);
    $("correct-title").textContent = `Correct space ${space}`;
    $("c-towers").value = String(stack.length);
    const topKind = stack.length ? (st.towers && st.towers[stack[stack.length - 1]] || {}).kind : WT.spaceKind(st, space);
    $("c-top").value = topKind || "plain-space";
    $("c-castle").checked = !!(st.castle && st.castle.space === space);
    const box = clear($("c-wizards"));
    const counts = {};
    for (const id of wz.visible) counts[WT.colourOf(id)] = (counts[WT.colourOf(id)] || 0) + 1;
    for (const pl of st.players || []) {
      const c = pl.colour || pl.id;
      box.append(el("label", {}, WT.chip(c), el("input", { type: "number", min: 0, max: 6,
        value: counts[c] || 0, "data-colour": c, "aria-label": `${c} wizards on top` })));
    }
    $("correct").classList.remove("hidden");
    WT.renderBoard($("board"), snapNow, { onPick, picked });
    $("correct").scrollIntoView({ block: "nearest" });
  }

  $("c-cancel").addEventListener("click", () => {
    picked = null;
    $("correct").classList.add("hidden");
    if (snapNow) WT.renderBoard($("board"), snapNow, { onPick, picked });
  });
  $("c-send").addEventListener("click", async () => {
    if (picked === null) return;
    const wizards = {};
    for (const inp of $("c-wizards").querySelectorAll("input")) {
      const n = Number(inp.value);
      if (n) wizards[inp.dataset.colour] = n;
    }
    const r = await send({ command: "correct_space", space: picked, towers: Number($("c-towers").value),
      top: $("c-top").value, wizards, castle: $("c-castle").checked }, `Space ${picked} corrected`);
    if (r.ok) { picked = null; $("correct").classList.add("hidden"); }
  });

  for (const b of document.querySelectorAll("[data-dice-mode]")) {
    b.addEventListener("click", () => send({ command: "dice_mode", dice: Number(b.dataset.diceMode) },
      `Die card with ${b.dataset.diceMode} dice`));
  }
  $("roll").addEventListener("click", () => send({ command: "roll" }, "Rolled"));
  $("keep").addEventListener("click", () => send({ command: "keep" }, "Kept"));
  $("end-turn").addEventListener("click", () => send({ command: "end_turn" }, "Turn ended"));
  $("undo").addEventListener("click", () => send({ command: "undo" }, "Undone"));

  function renderDiceButtons(snap) {
    const d = snap.dice || {};
    const playing = snap.phase === "playing";
    for (const b of document.querySelectorAll("[data-dice-mode]")) {
      b.classList.toggle("primary", Number(b.dataset.diceMode) === d.mode && !d.final);
      b.disabled = !playing;
    }
    $("roll").disabled = !playing || (d.rolls && d.rolls.length >= (d.mode || 1) && !d.final);
    $("keep").disabled = !playing || !(d.rolls && d.rolls.length) || d.final;
    $("end-turn").disabled = !playing;
  }

  // ------------------------------------------------------------ setup tab
  function radios(box, name, values, current, labeller) {
    clear(box);
    for (const v of values) {
      box.append(el("label", {}, el("input", { type: "radio", name, value: v, checked: v === current }),
        labeller ? labeller(v) : cap(v)));
    }
  }

  function buildColours(setup, n, chosen) {
    const allowed = (setup.choices.allowed_colours || {})[String(n)] || [];
    const box = clear($("s-colours"));
    for (let seat = 0; seat < n; seat++) {
      const sel = el("select", { "data-seat": seat, "aria-label": `colour of seat ${seat + 1}` });
      const want = chosen[seat] || allowed[seat];
      for (const c of allowed) sel.append(el("option", { value: c, selected: c === want }, `${WT.LETTER[c]} · ${cap(c)}`));
      box.append(el("label", {}, seat === 0 ? "Start player" : `Seat ${seat + 1}`, sel));
    }
    $("s-colour-rule").textContent = `${n} player${n > 1 ? "s" : ""}: ${allowed.map(cap).join(", ")} ` +
      "(only colours with enough wizards, R-COMP-2).";
    const teamOk = (setup.choices.team_players || []).includes(n);
    $("s-teams").disabled = !teamOk;
    if (!teamOk) $("s-teams").checked = false;
  }

  let choices = null;
  async function loadChoices() {
    try {
      const resp = await fetch("/api/setup-choices");
      if (resp.ok) choices = await resp.json();
    } catch (err) { choices = null; }
    if (choices && snapNow) buildSetup(snapNow, true);
  }
  loadChoices();

  function currentSettings(snap) {
    const host = snap.host || {};
    return host.settings || host.setup || null;
  }

  function buildSetup(snap, force) {
    const current = currentSettings(snap);
    if (!current || !choices) return;
    const setup = { ...current, choices };
    const key = JSON.stringify(current);
    if (!force && setupBuiltFor === key) return;
    setupBuiltFor = key;
    const ch = choices;
    const sp = clear($("s-players"));
    for (const n of ch.players) sp.append(el("option", { value: n, selected: n === setup.players }, n === 1 ? "1 (solo)" : String(n)));
    buildColours(setup, setup.players, setup.colours || []);
    $("s-teams").checked = !!setup.teams;
    radios($("s-variant"), "variant", ch.variants, setup.variant,
      (v) => v === "master" ? "Master wizard" : "Base game");
    const mods = clear($("s-modules"));
    for (const m of ch.modules) {
      mods.append(el("label", {}, el("input", { type: "checkbox", value: m,
        checked: (setup.modules || []).includes(m) }), cap(m.replace(/_/g, " "))));
    }
    const spells = clear($("s-spells"));
    for (const s of ch.spells) {
      spells.append(el("label", {}, el("input", { type: "checkbox", value: s,
        checked: (setup.spells || []).includes(s) }), cap(s.replace(/_/g, " "))));
    }
    $("s-spells-default").checked = !setup.spells;
    $("s-spells").classList.toggle("hidden", !setup.spells);
    radios($("s-aid"), "aid", ch.memory_aid, setup.memory_aid, (v) => ({
      off: "Off", own: "Own wizards", all: "Everybody's" }[v] || v));
    const opts = clear($("s-options"));
    for (const [name, info] of Object.entries(ch.options || {})) {
      const value = (setup.options || {})[name] ?? info.default;
      const label = info.label || name;
      let input;
      if (typeof info.default === "boolean") {
        input = el("input", { type: "checkbox", "data-option": name, checked: !!value });
      } else if (typeof info.default === "number" || info.default === null) {
        input = el("input", { type: "number", "data-option": name, value: value ?? "",
          placeholder: "none" });
      } else {
        input = el("input", { type: "text", "data-option": name, value: value ?? "" });
      }
      opts.append(el("div", { class: "row" }, el("label", {}, input, label)));
    }
  }

  $("s-spells-default").addEventListener("change", () => {
    $("s-spells").classList.toggle("hidden", $("s-spells-default").checked);
  });

  $("s-players").addEventListener("change", () => {
    if (choices) buildColours({ choices }, Number($("s-players").value), []);
  });

  $("setup-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const game = $("s-game").value;
    if (game !== "wandering-towers") {  // a game pack: packs.js collects its setup step
      const r = await send(PACKS.setupCommand(game), "New game started");
      if (r.ok) showTab("game");
      return;
    }
    const n = Number($("s-players").value);
    const colours = [...$("s-colours").querySelectorAll("select")].map((s) => s.value);
    const checked = (box) => [...box.querySelectorAll("input:checked")].map((i) => i.value);
    const options = {};
    for (const inp of $("s-options").querySelectorAll("[data-option]")) {
      if (inp.type === "checkbox") options[inp.dataset.option] = inp.checked;
      else if (inp.type === "number") options[inp.dataset.option] = inp.value === "" ? null : Number(inp.value);
      else options[inp.dataset.option] = inp.value;
    }
    const variant = ($("s-variant").querySelector("input:checked") || {}).value || "base";
    const aid = ($("s-aid").querySelector("input:checked") || {}).value || "own";
    const body = { command: "setup", players: n, colours, variant, teams: $("s-teams").checked,
      modules: checked($("s-modules")), memory_aid: aid, options,
      spells: $("s-spells-default").checked ? null : checked($("s-spells")) };
    const r = await send(body, "New game started");
    if (r.ok) { showTab("game"); }
  });

  // ------------------------------------------------------------ calibration tab
  function refreshCamera() {
    const img = $("camera");
    img.src = `/camera.jpg?t=${Date.now()}`;
  }
  $("camera").addEventListener("error", () => {
    $("cal-status").textContent = "No camera frame yet.";
  });
  $("cal-board").addEventListener("click", () => send({ command: "calibrate_board" }, "Board markers found"));
  $("cal-profile").addEventListener("click", () => send({ command: "calibrate_profile" }, "Wizard colours learned"));
  $("cal-reset").addEventListener("click", () => send({ command: "calibrate_reset" }, "Calibration forgotten"));
  $("cal-check").addEventListener("click", async () => {
    $("cal-check").disabled = true;
    try {
      const r = await send({ command: "calibrate_check" }, "Camera checked");
      if (!r.ok) return;
      const d = r.data;
      const list = clear($("cal-advice"));
      const advice = d.advice && d.advice.length ? d.advice : ["All good: the camera sees the board well."];
      for (const line of advice) list.append(el("li", {}, line));
      const f = d.figures || {};
      const parts = [];
      if (f.marker_cell_px != null) parts.push(`markers: ${f.marker_cell_px} px per cell`);
      if (f.edge_px != null) parts.push(`marker edges: ${f.edge_px} px`);
      if (f.white_grey != null) parts.push(`marker white: grey ${f.white_grey}`);
      if (f.board_fill != null) parts.push(`board fills ${Math.round(100 * f.board_fill)} % of the width`);
      $("cal-figures").textContent = parts.join(" · ");
      if (d.image) { $("cal-check-img").src = d.image; $("cal-check-img").classList.remove("hidden"); }
    } finally {
      $("cal-check").disabled = false;
    }
  });

  function renderCalibration(snap) {
    const parts = [];
    if (snap.camera) parts.push(`camera: ${snap.camera}`);
    const cal = (snap.host && snap.host.calibration) || {};
    for (const [k, v] of Object.entries(cal)) parts.push(`${k}: ${v}`);
    $("cal-status").textContent = parts.join(" · ");
  }

  // ------------------------------------------------------------ join codes
  async function loadCodes() {
    const box = clear($("qr"));
    let data;
    try {
      const resp = await fetch("/api/qr", { cache: "no-store", credentials: "same-origin" });
      data = await resp.json();
      if (!resp.ok) throw new Error(data.error || resp.statusText);
    } catch (err) {
      box.append(el("p", { class: "msg err" }, String(err.message || err)));
      return;
    }
    const parser = new DOMParser();
    const add = (code, title, chipColour) => {
      // segno's inline SVG has no xmlns: the HTML parser puts it in the SVG namespace
      const doc = parser.parseFromString(code.svg, "text/html");
      const node = document.importNode(doc.body.firstElementChild, true);
      box.append(el("div", { class: "qr", "data-qr": code.label },
        el("div", {}, chipColour ? WT.chip(chipColour) : null, " ", el("strong", {}, title)),
        node, el("div", { class: "muted" }, code.url)));
    };
    add(data.table, "Table (everyone)");
    for (const p of data.players) add(p, cap(p.label), p.label);
    add(data.host, "Host (keep private)");
  }

  async function reissue(who) {
    const r = await send({ command: "reissue_tokens", who }, `New join links for ${who}`);
    if (r.ok && r.data.host_link) { window.location.assign(r.data.host_link); return; }
    if (r.ok && tab === "codes") loadCodes();
  }
  function buildReissue(snap) {
    const box = $("reissue");
    const colours = ((snap.host || {}).settings || {}).colours || [];
    const want = ["players", ...colours, "host"].join(",");
    if (box.dataset.built === want) return;
    box.dataset.built = want;
    clear(box);
    box.append(el("button", { "data-reissue": "players", on: { click: () => reissue("players") } },
      "New links for all players"));
    for (const c of colours) {
      box.append(el("button", { "data-reissue": c, on: { click: () => reissue(c) } },
        WT.chip(c), ` New link for ${cap(c)}`));
    }
    box.append(el("button", { "data-reissue": "host", class: "danger",
      on: { click: () => reissue("host") } }, "New host link"));
  }

  // ------------------------------------------------------------ a damaged journal
  function renderJournal(snap) {
    const j = (snap.host || {}).journal;
    $("journal").classList.toggle("hidden", !j);
    if (!j) return;
    $("journal-line").textContent = j.line;
    $("journal-accept").classList.toggle("hidden", !j.game);
    $("journal-new").textContent = `Start a new game (the damaged journal is kept as ${j.kept_name})`;
  }
  $("journal-accept").addEventListener("click", () => send({ command: "accept_journal" }, "The salvaged game goes on"));
  $("journal-new").addEventListener("click", () => showTab("setup"));

  // ------------------------------------------------------------ every snapshot
  function show(snap) {
    snapNow = snap;
    $("signin").classList.add("hidden");
    $("main").classList.remove("hidden");
    WT.renderHealth($("health"), snap);
    WT.renderTurn($("turn"), snap);
    WT.renderBoard($("board"), snap, { onPick, picked });
    WT.renderDice($("dice"), snap);
    renderDiceButtons(snap);
    WT.renderPanel($("panel"), snap);
    WT.renderPlayers($("players"), snap);
    WT.renderLog($("log"), snap);
    WT.renderQuestion($("question"), snap, () => true,
      (q, opt) => send({ command: "answer", question: q.id, option: opt.id }, `Answered: ${opt.label}`));
    renderCalibration(snap);
    renderJournal(snap);
    buildReissue(snap);
    PACKS.render(snap, "host");
    if (tab !== "setup") buildSetup(snap, false);
    if (snap.phase === "setup" && !snap.state && tab === "game" && !document.body.dataset.version) showTab("setup");
    document.body.dataset.version = String(snap.version);
  }

  WT.connect("host", show, (kind, text) => {
    WT.showStatus($("conn"), kind, text);
    if (kind === "auth" && !snapNow) {
      $("signin").classList.remove("hidden");
      $("main").classList.add("hidden");
    }
  });
})();
