/* Table page: the public view every phone may open. */
"use strict";

(() => {
  function show(snap) {
    WT.renderHealth(WT.$("health"), snap);
    WT.renderTurn(WT.$("turn"), snap);
    WT.renderBoard(WT.$("board"), snap);
    WT.renderDice(WT.$("dice"), snap);
    WT.renderPlayers(WT.$("players"), snap);
    WT.renderLog(WT.$("log"), snap);
    WT.renderQuestion(WT.$("question"), snap, () => false, () => {});
    PACKS.render(snap, "public");
    document.body.dataset.version = String(snap.version);
  }
  WT.connect("public", show, (kind, text) => WT.showStatus(WT.$("conn"), kind, text));
})();
