/* Game packs on every page: the siege race, The Princess and Magic Tile, Wiz-War.
   The service sends each audience the pack's own view (snap.pack); this file draws it and
   sends the pack's commands ({"command": "pack", "action": ..., "args": {...}}). Every rule is
   the service's: a refused command comes back with a message naming the field. */
"use strict";

const PACKS = (() => {
  const { el, $, clear, cap, chip } = WT;
  const ELEMENTS = ["moon", "star", "sun", "earth", "water", "fire", "wind"];
  let role = "public";
  let drawnFor = null;
  let choices = null;

  function as() { return role === "host" ? "host" : "player"; }
  function me(snap) { return snap.audience && snap.audience.colour; }

  async function send(action, args, done) {
    const r = await WT.post(as(), { command: "pack", action, args: args || {} });
    WT.setMsg($("pack-msg"), r.ok ? done : r.error, r.ok);
    return r;
  }

  function button(label, attrs, onClick) {
    return el("button", { ...attrs, on: { click: onClick } }, label);
  }

  function num(attrs) { return el("input", { type: "number", ...attrs }); }

  function who(colour) { return el("span", {}, chip(colour), " ", cap(colour)); }

  // What a player typed survives a redraw: the whole view is drawn again whenever the pack's
  // state changes (another player's entry, the host's bonus cards), and a half-filled form
  // must not go blank under the player's fingers. A field is known by its own id/data-*
  // attributes and those of the elements around it (the form of one player's scores).
  const touched = new WeakSet();
  document.addEventListener("input", (e) => { if (e.target.closest && e.target.closest("#pack-body")) touched.add(e.target); });
  document.addEventListener("change", (e) => { if (e.target.closest && e.target.closest("#pack-body")) touched.add(e.target); });

  function fieldKey(node, box) {
    const parts = [];
    for (let n = node; n && n !== box; n = n.parentElement) {
      const own = [...n.attributes].filter((a) => a.name === "id" || a.name.startsWith("data-"))
        .map((a) => `${a.name}=${a.value}`);
      if (own.length || n === node) parts.push(`${n.tagName}[${own.join(",")}]`);
    }
    return parts.join("<");
  }

  function typedIn(box) {
    const out = new Map();
    for (const f of box.querySelectorAll("input, select, textarea")) {
      if (touched.has(f)) out.set(fieldKey(f, box), f.type === "checkbox" ? f.checked : f.value);
    }
    return out;
  }

  // ``focused``: the key of the field that had the focus (null: none); it keeps the focus, so
  // the next keystroke lands in it
  function restoreTyped(box, typed, focused) {
    if (!typed.size && focused === null) return;
    for (const f of box.querySelectorAll("input, select, textarea")) {
      const k = fieldKey(f, box);
      if (k === focused) f.focus();
      if (!typed.has(k)) continue;
      if (f.type === "checkbox") f.checked = typed.get(k); else f.value = typed.get(k);
      touched.add(f);
    }
  }

  // ------------------------------------------------------------------ siege race (seed S2)
  function siege(v, box, snap) {
    const mine = me(snap);
    const can = (p) => role === "host" || mine === p;
    $("pack-title").textContent = `Siege race · round ${v.round} · ${v.rules} rules`;
    const roll = v.roll;
    box.append(el("div", { class: "row", id: "siege-roll" }, roll
      ? [el("span", { class: "big", "data-sum": roll.sum }, `${roll.faces[0]} + ${roll.faces[1]} = ${roll.sum}`),
        el("span", { class: "big", "data-armies": roll.armies },
          ` → ${roll.armies} ${roll.armies === 1 ? "army moves" : "armies move"}`)]
      : el("span", { class: "muted" }, "Press ROLL: 2d6, the sum says how many armies move (G2-DICE-1)")));
    if (v.winner) box.append(el("p", { class: "big" }, `${cap(v.winner)} wins`));
    if (v.my_number) {
      box.append(el("p", { class: "secret", id: "siege-mine" },
        `Your deployment card: ${v.my_number} (keep it to yourself)`));
    }
    if (v.phase === "pick") {
      box.append(el("p", {}, "Picking order: ", ...v.order.map((p) => [who(p), " "])));
      box.append(el("p", { id: "siege-picker" }, who(v.current), " picks a deployment card now",
        el("span", { class: "muted" }, ` (${v.picked.length} of ${v.order.length} picked, 2 set aside unseen)`)));
      if (can(v.current)) {
        box.append(button("Pick a deployment card", { class: "primary", id: "siege-pick" },
          () => send("pick", role === "host" ? { player: v.current } : {}, "Card dealt")));
      }
      if (v.pope && !v.picked.length && can(v.pope)) {
        const inp = el("input", { type: "text", id: "siege-pope", value: v.order.join(", "),
          "aria-label": "picking order set by the Pope" });
        box.append(el("div", { class: "row" }, `${cap(v.pope)} held the Pope (4):`, inp,
          button("Set the order", { id: "siege-pope-send" }, () => send("pope_order",
            { order: inp.value.split(",").map((s) => s.trim()).filter(Boolean) }, "Order set"))));
      }
    } else if (v.phase === "play") {
      if (v.rules === "full") {
        const called = Object.entries(v.revealed).sort((a, b) => a[1] - b[1]);
        box.append(el("p", { id: "siege-called" }, "Called: ",
          ...called.map(([p, n]) => [el("strong", {}, String(n)), " ", chip(p), " "])));
      }
      box.append(el("p", { class: "big", id: "siege-current" }, who(v.current), " plays"));
      box.append(el("p", { class: "reminder" },
        `Start: draw 1 card (2 from an empty hand). End: discard down to ${v.hand_limit} cards (G2-TURN-3).`));
      if (can(v.current)) {
        box.append(button("End turn (DONE)", { class: "primary", id: "siege-done" },
          () => send("end_turn", {}, "Turn ended")));
      }
    }
    const tokens = el("table", { id: "siege-tokens" },
      el("tr", {}, el("th", {}, "Token"), el("th", {}, "In supply"), el("th", {}, "")));
    for (const kind of ["barrier", "mud", "bomb"]) {
      const n = kind === "barrier" ? 3 : 1;
      tokens.append(el("tr", { "data-token": kind }, el("td", {}, cap(kind)),
        el("td", { "data-count": v.supply[kind] }, `${v.supply[kind]} / ${v.box[kind]}`),
        role === "public" ? null : el("td", {},
          button(kind === "barrier" ? "giant barrier (3)" : "place", { "data-place": kind },
            () => send("token", { token: kind, op: "take", n }, `${cap(kind)} placed`)),
          " ",
          button("return 1", { "data-return": kind },
            () => send("token", { token: kind, op: "return", n: 1 }, `${cap(kind)} returned`)))));
    }
    box.append(el("h3", {}, "Tokens (G2-COMP-1)"), tokens);
    if (role === "host" && !v.winner) box.append(winnerRow(v.players, "player", "Army home: "));
  }

  function winnerRow(players, field, label) {
    const sel = el("select", { id: "pack-winner", "aria-label": "winner" },
      ...players.map((p) => el("option", { value: p }, cap(p))));
    return el("div", { class: "row" }, label, sel,
      button("Record the winner", { id: "pack-win" }, () => send("win", { [field]: sel.value }, "Winner recorded")));
  }

  // ------------------------------------------------------------------ The Princess and Magic Tile
  function princess(v, box, snap) {
    const mine = me(snap);
    const can = (p) => role === "host" || mine === p;
    $("pack-title").textContent = "The Princess and Magic Tile";
    const track = el("table", { id: "princess-track" },
      el("tr", {}, el("th", {}, "Player"), el("th", {}, "Space"), el("th", {}, "")));
    for (const p of v.players) {
      const notes = [];
      if (v.carrier === p) notes.push("carries the princess (−2)");
      const place = v.arrivals.indexOf(p);
      if (place >= 0) notes.push(`GOAL #${place + 1}: ${v.goal_scores[p]} points`);
      track.append(el("tr", { class: v.current === p ? "current" : "", "data-player": p },
        el("td", {}, who(p)), el("td", { "data-space": v.positions[p] },
          place >= 0 ? "GOAL" : String(v.positions[p])), el("td", {}, notes.join(" · "))));
    }
    box.append(track);
    box.append(el("p", { class: "muted" },
      v.princess === null ? "The princess is rescued." : `The princess is on space ${v.princess}.`,
      v.passages_open ? " Secret passages 8 → 12 and 10 → 14 are open." : " Passages open once someone reaches 20."));
    if (v.last) {
      box.append(el("p", { id: "princess-last", "data-steps": v.last.declared, "data-end": v.last.end },
        `${cap(v.last.player)}: ${v.last.how} = ${v.last.declared} steps, ${v.last.start} → ${v.last.end}`,
        v.last.penalised ? " (princess −2)" : "", v.last.passage ? " (secret passage)" : ""));
    }
    if (v.final_turns.length) box.append(el("p", { class: "reminder" }, `Last turns: ${v.final_turns.map(cap).join(", ")}`));
    if (v.phase === "play") {
      box.append(el("p", { class: "big" }, who(v.current), "'s turn"));
      if (can(v.current)) {
        const cards = el("div", { class: "row", id: "princess-cards" }, "Completed rune cards (steps):");
        for (let i = 0; i < v.limits.cards; i++) {
          cards.append(num({ min: 1, max: v.limits.card_steps, "data-card": i, "aria-label": `card ${i + 1}` }));
        }
        box.append(cards);
        box.append(button("Declare", { class: "primary", id: "princess-declare", disabled: v.declared },
          () => {
            const steps = [...cards.querySelectorAll("input")].filter((i) => i.value !== "").map((i) => Number(i.value));
            send("declare", { cards: steps }, "Declared");
          }));
        const out = el("input", { type: "checkbox", id: "princess-tiles-out" });
        box.append(el("div", { class: "row" }, el("label", {}, out, " the element tiles ran out (G3-END-2)"),
          button("End turn", { id: "princess-end" }, () => send("end_turn", { tiles_out: out.checked }, "Turn ended"))));
      }
    } else {
      box.append(el("p", { class: "big" }, v.rescued ? "The princess is rescued: score!" : "The witch returned: score!"));
    }
    if (v.phase !== "play") scoring(v, box, can);
  }

  function scoring(v, box, can) {
    for (const p of v.players) {
      if (!can(p)) continue;
      const form = el("div", { class: "row", "data-score": p }, who(p));
      for (const k of ELEMENTS) form.append(el("label", {}, k, num({ min: 0, max: 48, value: 0, "data-el": k })));
      const s1 = num({ min: 0, max: 2, value: 2, "data-spirit": 0, "aria-label": "spirit card 1 uses left" });
      const s2 = num({ min: 0, max: 2, value: 2, "data-spirit": 1, "aria-label": "spirit card 2 uses left" });
      form.append(el("label", {}, "spirit uses left", s1, s2));
      const arrived = v.arrivals.includes(p);
      const tv = arrived ? null : num({ min: -25, max: 25, "data-track": p, placeholder: "as set" });
      if (tv) form.append(el("label", {}, `printed value of space ${v.positions[p]}`, tv));
      form.append(button("Enter", { "data-send-score": p }, () => {
        const tiles = {};
        for (const i of form.querySelectorAll("[data-el]")) tiles[i.dataset.el] = Number(i.value || 0);
        const args = { player: p, tiles, spirit_uses: [Number(s1.value), Number(s2.value)] };
        if (tv && tv.value !== "") args.track_value = Number(tv.value);
        send("score", args, `${cap(p)} entered`);
      }));
      box.append(form);
    }
    if (role === "host") {
      const rows = [0, 1].map((i) => {
        const elSel = el("select", { "data-bonus-el": i }, ...ELEMENTS.map((k) => el("option", { value: k }, k)));
        const most = el("select", { "data-bonus-most": i }, el("option", { value: "most" }, "most"),
          el("option", { value: "fewest" }, "fewest"));
        const pts = num({ min: 0, max: 20, value: 3, "data-bonus-points": i });
        return { row: el("div", { class: "row" }, `Bonus card ${i + 1}:`, most, elSel, "+", pts), elSel, most, pts };
      });
      for (const r of rows) box.append(r.row);
      box.append(button("Reveal bonus cards", { id: "princess-bonus" }, () => send("bonus", {
        cards: rows.map((r) => ({ element: r.elSel.value, most: r.most.value === "most", points: Number(r.pts.value) })),
      }, "Bonus cards set")));
    }
    if (v.bonus && v.bonus.length) {
      // the revealed bonus cards, so each player enters their counts knowing what they score
      box.append(el("p", { id: "princess-bonus-shown" }, "Bonus cards: ",
        v.bonus.map((c) => `${c.most ? "most" : "fewest"} ${c.element} +${c.points}`).join(", ")));
    }
    if (v.sheet) {
      const t = el("table", { id: "princess-sheet" }, el("tr", {}, ...["Player", "Track", "Sky", "Spirit", "Bonus", "Total"]
        .map((h) => el("th", {}, h))));
      for (const r of v.sheet) {
        t.append(el("tr", { class: r.winner ? "current" : "", "data-total": r.total, "data-player": r.player },
          el("td", {}, who(r.player)), el("td", {}, r.track), el("td", {}, r.majority),
          el("td", {}, r.spirit), el("td", {}, r.bonus), el("td", {}, el("strong", {}, r.total))));
      }
      box.append(el("h3", {}, "Scoring sheet (G3-SCORE-1)"), t);
    } else {
      box.append(el("p", { class: "muted" }, `Counts entered: ${v.entered.map(cap).join(", ") || "none yet"}`));
    }
  }

  // ------------------------------------------------------------------ Wiz-War
  function wizwar(v, box, snap) {
    const mine = me(snap);
    const can = (p) => role === "host" || mine === p;
    $("pack-title").textContent = "Wiz-War";
    box.append(el("p", { class: "muted" }, `Turn order (${v.rolled ? "rolled" : "seating"}): `,
      ...v.players.map((p) => [who(p), " "])));
    if (v.d4) box.append(el("p", { class: "big", id: "wizwar-d4", "data-face": v.d4.face }, `d4: ${v.d4.face} → ${v.d4.direction}`));
    if (v.winner) box.append(el("p", { class: "big" }, `${cap(v.winner)} wins`));
    const t = el("table", { id: "wizwar-hp" }, el("tr", {}, el("th", {}, "Wizard"), el("th", {}, "HP"), el("th", {}, "")));
    for (const p of v.players) {
      const out = v.out.includes(p);
      const row = el("tr", { class: v.current === p ? "current" : "", "data-wizard": p },
        el("td", {}, who(p), v.rests[p] ? el("span", { class: "reminder" }, ` resting ${v.rests[p]}`) : null),
        el("td", {}, el("span", { class: out ? "hp out" : "hp", "data-hp": v.hp[p] }, out ? "OUT" : `${v.hp[p]} / ${v.max_hp}`)));
      const acts = el("td", {});
      if (!out && v.phase === "play" && role !== "public") {
        for (const n of [1, 2, 3, 5]) {
          acts.append(button(`−${n}`, { "data-damage": n }, () => send("damage", { wizard: p, amount: n }, `${cap(p)} −${n}`)), " ");
        }
        acts.append(button("+1", { "data-heal": 1 }, () => send("heal", { wizard: p, amount: 1 }, `${cap(p)} +1`)));
        if (v.current !== p && can(v.current) && !v.attack) {
          acts.append(" ", button("fist (1)", { "data-fist": p },
            () => send("damage", { wizard: p, amount: 1, attack: "fist" }, "Fist")));
        }
      }
      row.append(acts);
      t.append(row);
    }
    box.append(t);
    if (v.phase === "play") {
      box.append(el("p", { class: "big", id: "wizwar-current" }, who(v.current), "'s turn"));
      box.append(el("p", { id: "wizwar-move", "data-move": v.movement },
        `Movement: 3${v.move_cards.map((c) => ` + ${c}`).join("")} = ${v.movement} spaces (G4-MOVE-1) · `,
        v.attack ? el("strong", {}, `attack used: ${v.attack}`) : "one attack this turn (G4-ATK-1)"));
      if (can(v.current)) {
        const cards = el("div", { class: "row" }, "Number card for movement:");
        for (const n of [2, 3, 4, 5, 6]) {
          cards.append(button(String(n), { "data-move-card": n }, () => send("move_card", { value: n }, `+${n}`)));
        }
        box.append(cards);
        const wiz = el("select", { id: "wizwar-rest-who" }, ...v.players.filter((p) => !v.out.includes(p))
          .map((p) => el("option", { value: p }, cap(p))));
        const turns = num({ min: 1, max: 20, value: 1, id: "wizwar-rest-turns" });
        box.append(el("div", { class: "row" }, "Forced rest:", wiz, turns, "turn(s)",
          button("Cast", { id: "wizwar-rest" }, () => send("rest", { wizard: wiz.value, turns: Number(turns.value) }, "Rest cast"))));
        box.append(button("End turn (DONE)", { class: "primary", id: "wizwar-done" }, () => send("end_turn", {}, "Turn ended")));
      }
      box.append(el("p", { class: "reminder" },
        `At DONE: discard any, then draw at most ${v.max_draw}, never above ${v.hand_limit} cards (G4-HAND-1).`));
      const obs = el("div", { id: "wizwar-obstacles" });
      for (const o of v.obstacles) {
        obs.append(el("div", { class: "row", "data-obstacle": o.id }, `${cap(o.kind)} #${o.id}: `,
          el("strong", { "data-obstacle-hp": o.hp }, `${o.hp} HP`),
          ...(role === "public" ? [] : [1, 5]).map((n) => button(`−${n}`, {}, () => send("obstacle_damage", { id: o.id, amount: n }, `${o.kind} −${n}`)))));
      }
      if (role !== "public") obs.append(el("div", { class: "row" }, "Attack a:", ...Object.entries(v.obstacle_hp).map(([k, hp]) =>
        button(`${k} (${hp})`, { "data-add-obstacle": k }, () => send("obstacle", { kind: k }, `${cap(k)} tracked`)))));
      box.append(el("h3", {}, "Walls, doors, thornbushes (G4-HP-1)"), obs);
      if (role === "host") box.append(winnerRow(v.players.filter((p) => !v.out.includes(p)), "wizard", "Two treasures home: "));
    }
  }

  const DRAW = { siege, princess, wizwar };

  function render(snap, asRole) {
    role = asRole;
    const v = snap.pack;
    document.body.classList.toggle("pack-game", !!v);
    const section = $("pack");
    if (!section) return;
    section.classList.toggle("hidden", !v);
    const heading = document.querySelector("body[data-page='table'] header.top h1");
    if (heading) heading.textContent = v ? "Table" : "Wandering Towers";  // a pack names itself
    if (!v) { drawnFor = null; return; }
    const key = JSON.stringify(v);
    if (key === drawnFor) return;  // keep what is being typed while only the LEDs change
    drawnFor = key;
    const old = $("pack-body");
    const was = old.dataset.game;
    const typed = typedIn(old);
    const active = document.activeElement;
    const focused = active && active !== old && old.contains(active) ? fieldKey(active, old) : null;
    const box = clear(old);
    box.dataset.game = v.game;
    (DRAW[v.game] || (() => box.append(el("p", {}, `unknown game ${v.game}`))))(v, box, snap);
    if (was === v.game) restoreTyped(box, typed, focused);
  }

  // ------------------------------------------------------------------ host: setup step
  function setupForm(game) {
    const box = clear($("s-pack"));
    const info = (choices || []).find((g) => g.name === game);
    if (!info) return;
    const [lo, hi] = info.players;
    const count = el("select", { id: "sp-players" });
    for (let n = lo; n <= hi; n++) count.append(el("option", { value: n, selected: n === Math.min(hi, Math.max(lo, 3)) }, String(n)));
    const seats = el("div", { class: "row", id: "sp-colours" });
    const drawSeats = () => {
      clear(seats);
      for (let i = 0; i < Number(count.value); i++) {
        const sel = el("select", { "data-seat": i, "aria-label": `colour of seat ${i + 1}` });
        info.colours.forEach((c, j) => sel.append(el("option", { value: c, selected: j === i }, cap(c))));
        seats.append(el("label", {}, i === 0 ? "Start player" : `Seat ${i + 1}`, sel));
      }
    };
    count.addEventListener("change", drawSeats);
    drawSeats();
    box.append(el("fieldset", {}, el("legend", {}, `Players (${lo}-${hi}), clockwise`),
      el("div", { class: "row" }, el("label", {}, "How many ", count)), seats));
    const opts = el("fieldset", {}, el("legend", {}, "Settings (defaults where the rulebook is unclear)"));
    for (const [name, s] of Object.entries(info.settings)) {
      let input;
      if (s.choices) {
        input = el("select", { "data-setting": name }, ...s.choices.map((c) => el("option", { value: c, selected: c === s.default }, c)));
      } else if (typeof s.default === "boolean") {
        input = el("input", { type: "checkbox", "data-setting": name, checked: s.default });
      } else if (typeof s.default === "number") {
        input = num({ "data-setting": name, value: s.default });
      } else {
        input = el("input", { type: "text", "data-setting": name, value: s.default });
      }
      opts.append(el("div", { class: "row" }, el("label", {}, input, " ", s.label)));
    }
    box.append(opts);
  }

  function setupCommand(game) {
    const colours = [...$("s-pack").querySelectorAll("[data-seat]")].map((s) => s.value);
    const pack = {};
    for (const i of $("s-pack").querySelectorAll("[data-setting]")) {
      pack[i.dataset.setting] = i.type === "checkbox" ? i.checked : i.type === "number" ? Number(i.value) : i.value;
    }
    return { command: "setup", game, players: colours.length, colours, pack };
  }

  async function initSetup() {
    const sel = $("s-game");
    if (!sel) return;
    try {
      const resp = await fetch("/api/setup-choices");
      if (resp.ok) choices = (await resp.json()).games || [];
    } catch (err) { choices = []; }
    for (const g of choices || []) {
      if (g.name !== "wandering-towers") sel.append(el("option", { value: g.name }, g.title));
    }
    sel.addEventListener("change", () => {
      const wt = sel.value === "wandering-towers";
      $("s-wt").classList.toggle("hidden", !wt);
      $("s-pack").classList.toggle("hidden", wt);
      if (!wt) setupForm(sel.value);
    });
  }
  if (document.body.dataset.page === "host") initSetup();

  return { render, setupCommand };
})();
