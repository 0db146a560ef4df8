/* A player's own page: the table plus, when the group allows it, where their trapped wizards
   are. The server decides what this player may see; this page only draws it. */
"use strict";

(() => {
  let me = null;
  let snapNow = null;

  function spellName(id) { return WT.cap(String(id).replace(/_/g, " ")); }

  function place(state, id, pos) {
    if (pos === "castle") return `${id}: inside the raven castle`;
    const h = WT.stackOf(state, pos.space).length;
    if (pos.tier === h) return `${id}: on top of space ${pos.space}` + (h ? ` (on ${h} tower${h > 1 ? "s" : ""})` : "");
    const above = h - pos.tier;
    return `${id}: TRAPPED on space ${pos.space} at tier ${pos.tier}, under ${above} tower${above > 1 ? "s" : ""}`;
  }

  function renderMine(snap) {
    const st = snap.state;
    const mine = WT.clear(WT.$("mine"));
    const others = WT.clear(WT.$("others"));
    const aid = snap.memory_aid;
    WT.$("aid").textContent = {
      off: "Memory aid is off: remember your trapped wizards yourself.",
      own: "Memory aid: you see where your own trapped wizards are.",
      all: "Memory aid: everybody's trapped wizards are shown.",
    }[aid] || "";
    if (!st) return;
    let otherCount = 0;
    for (const [id, pos] of Object.entries(st.wizards || {}).sort()) {
      const colour = WT.colourOf(id);
      if (colour === me) {
        mine.append(WT.el("li", { "data-wizard": id }, WT.chip(colour), " ", place(st, id, pos)));
      } else if (pos !== "castle" && pos.tier < WT.stackOf(st, pos.space).length) {
        others.append(WT.el("li", { "data-wizard": id }, WT.chip(colour), " ", place(st, id, pos)));
        otherCount++;
      }
    }
    WT.$("others-wrap").classList.toggle("hidden", otherCount === 0);
  }

  function renderReports(snap) {
    const st = snap.state;
    const sel = WT.$("spell");
    const spells = (st && st.config && st.config.spells) || [];
    const key = spells.join(",");
    if (sel.dataset.key !== key) {
      WT.clear(sel);
      for (const s of spells) sel.append(WT.el("option", { value: s }, spellName(s)));
      sel.dataset.key = key;
    }
    WT.$("report-spell").disabled = !spells.length;
    const modules = (st && st.config && st.config.modules) || [];
    WT.$("page-row").classList.toggle("hidden", !modules.includes("witch"));
  }

  function show(snap) {
    snapNow = snap;
    WT.$("signin").classList.add("hidden");
    WT.$("main").classList.remove("hidden");
    me = snap.audience && snap.audience.colour;
    const who = WT.clear(WT.$("who"));
    if (me) who.append(WT.chip(me), " ", `${WT.cap(me)}`);
    WT.renderHealth(WT.$("health"), snap);
    WT.renderTurn(WT.$("turn"), snap);
    WT.renderBoard(WT.$("board"), snap);
    WT.renderDice(WT.$("dice"), snap);
    WT.renderPlayers(WT.$("players"), snap);
    renderMine(snap);
    renderReports(snap);
    WT.renderQuestion(WT.$("question"), snap, (q) => q.to === me, answer);
    PACKS.render(snap, "player");
    document.body.dataset.version = String(snap.version);
  }

  async function send(body, done) {
    const r = await WT.post("player", body);
    WT.setMsg(WT.$("msg"), r.ok ? done : r.error, r.ok);
  }

  function answer(q, opt) {
    send({ command: "answer", question: q.id, option: opt.id }, `Answered: ${opt.label}`);
  }

  WT.$("report-spell").addEventListener("click", () => {
    const spell = WT.$("spell").value;
    send({ command: "report_spell", spell }, `Reported: ${spellName(spell)}`);
  });
  WT.$("report-page").addEventListener("click", () => {
    send({ command: "report_page_card" }, "Reported: page card");
  });

  WT.connect("player", show, (kind, text) => {
    WT.showStatus(WT.$("conn"), kind, text);
    if (kind === "auth" && !snapNow) {
      WT.$("signin").classList.remove("hidden");
      WT.$("main").classList.add("hidden");
    }
  });
})();
