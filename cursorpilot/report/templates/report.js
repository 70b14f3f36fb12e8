(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("cp-data").textContent);
  var castEl = document.getElementById("cp-cast");
  var player = null;
  // before play is pressed the terminal shows the first decision's moment, not a black box
  var first = data.markers.filter(function (m) { return m.row != null; })[0] || data.markers[0];
  if (castEl && window.AsciinemaPlayer) {
    player = AsciinemaPlayer.create({ data: JSON.parse(castEl.textContent) }, document.getElementById("cp-player"), {
      cols: data.cols, rows: data.rows, preload: true, fit: "width", terminalFontSize: "small", keystrokeOverlay: true,
      markers: data.markers.map(function (m) { return [m.t, m.label]; }),
      poster: first ? "npt:" + first.t : undefined
    });
  }
  function mark(row) {
    document.querySelectorAll(".active").forEach(function (el) { el.classList.remove("active"); });
    if (!row) return;
    document.querySelectorAll('[data-row="' + row + '"]').forEach(function (el) {
      if (el.tagName !== "BUTTON" || !el.classList.contains("seek")) el.classList.add("active");
    });
  }
  function seek(t, row) {
    mark(row);
    if (!player) return Promise.resolve();
    var el = document.getElementById("replay");
    if (el && el.getBoundingClientRect().bottom < 0) el.scrollIntoView({ behavior: "smooth" });
    return player.seek(t).then(function () { return player.pause(); });
  }
  document.addEventListener("click", function (ev) {
    if (ev.target.closest("details, summary, a")) return;
    var el = ev.target.closest("[data-seek]");
    if (el) seek(parseFloat(el.getAttribute("data-seek")), el.getAttribute("data-row"));
  });
  if (player) {
    player.addEventListener("marker", function (ev) {
      var m = data.markers[ev.index];
      if (m && m.row != null) mark(String(m.row));
    });
  }
  window.cpReport = { player: player, seek: seek, markers: data.markers };
})();
