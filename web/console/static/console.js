// Sundial's console script. It only adds comfort; every page reads and
// every form works without it.
(function () {
  "use strict";

  // Times: the page writes UTC; show the viewer's zone, to the second
  // and naming the zone, and keep UTC on hover. A grid's column heads
  // (data-hm) show the time of day alone, the zone said once in the
  // caption.
  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) { return; }
      var hm = el.getAttribute("data-hm");
      if (hm) {
        el.textContent = d.toLocaleString(undefined, hm === "day" ?
          { weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" } :
          { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
        return;
      }
      el.textContent = d.toLocaleString(undefined, {
        month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit",
        hourCycle: "h23", timeZoneName: "short"
      });
    });
    root.querySelectorAll(".zone").forEach(function (el) {
      var zone = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" }).formatToParts(new Date())
        .filter(function (p) { return p.type === "timeZoneName"; })[0];
      if (zone) { el.textContent = zone.value; }
    });
  }

  // A grid opens on its newest slots, at its right end, where a narrow
  // window would otherwise hide them.
  function newestInView(root) {
    root.querySelectorAll(".gridwrap").forEach(function (el) { el.scrollLeft = el.scrollWidth; });
  }

  // Every action asks to confirm what it will do.
  document.addEventListener("submit", function (ev) {
    var msg = ev.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) { ev.preventDefault(); }
  });

  // A quiet poll: the list is fetched again while the tab is visible and
  // nobody is typing in it, and swapped in place.
  function refresh() {
    var live = document.getElementById("live");
    if (!live || document.hidden) { return Promise.resolve(false); }
    var a = document.activeElement;
    if (a && live.contains(a) && /INPUT|SELECT|TEXTAREA/.test(a.tagName)) { return Promise.resolve(false); }
    return fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) { return false; }
        var next = new DOMParser().parseFromString(html, "text/html").getElementById("live");
        if (!next) { return false; }
        live.replaceWith(next);
        localTimes(next);
        newestInView(next);
        return true;
      })
      .catch(function () { return false; });
  }

  // Tests call it to refresh now rather than wait for the poll.
  window.sundialRefresh = refresh;

  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    newestInView(document);
    var secs = parseInt(document.body.getAttribute("data-refresh"), 10);
    if (secs > 0) { setInterval(refresh, secs * 1000); }
  });
})();
