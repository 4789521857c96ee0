/* LoopX dashboard: live updates over server-sent events.
 * Written for LoopX; Apache License 2.0 (LICENSE.txt beside this file). No library, no
 * request to any server but the dashboard's own. */
(function () {
  "use strict";
  var status = document.getElementById("live-status");
  var pending = false;

  function say(text, state) {
    if (status) {
      status.textContent = text;
      status.className = "live " + state;
    }
  }

  /* Someone typing into a form: apply the update once they leave the field. */
  function typing() {
    var el = document.activeElement;
    return !!(el && el.form && el.type !== "submit" && (el.value || "") !== "" && el.defaultValue !== el.value);
  }

  function refresh() {
    if (typing()) {
      pending = true;
      return;
    }
    pending = false;
    fetch(location.pathname, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        return response.text().then(function (html) {
          return { ok: response.ok, status: response.status, html: html };
        });
      })
      .then(function (reply) {
        /* An error page (the goal was removed, the state damaged, the dashboard restarted
         * with a new token) is swapped in as well: the owner sees why, not a stale page. */
        var fresh = new DOMParser().parseFromString(reply.html, "text/html");
        var next = fresh.getElementById("live");
        var here = document.getElementById("live");
        if (!next || !here) {
          throw new Error(String(reply.status));
        }
        here.replaceWith(document.importNode(next, true));
        document.title = fresh.title;
        document.body.dataset.fingerprint = fresh.body.dataset.fingerprint || "";
        document.body.dataset.updates = String((Number(document.body.dataset.updates) || 0) + 1);
        document.body.dataset.status = String(reply.status);
        if (reply.ok) {
          say("live", "on");
        } else {
          say("live: " + reply.status, "off");
        }
      })
      .catch(function () {
        say("offline", "off");
      });
  }

  document.addEventListener("focusout", function () {
    if (pending) {
      setTimeout(refresh, 50);
    }
  });

  if (location.search.indexOf("done=") !== -1 && window.history && history.replaceState) {
    history.replaceState(null, "", location.pathname + location.hash);
  }

  if (!window.EventSource) {
    say("static", "off");
    return;
  }
  var source = new EventSource("/events?fp=" + encodeURIComponent(document.body.dataset.fingerprint || ""));
  source.addEventListener("hello", function () {
    say("live", "on");
  });
  source.addEventListener("change", refresh);
  source.onerror = function () {
    say("reconnecting", "off");
  };
})();
