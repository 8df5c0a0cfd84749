/**
 * The page's script, as a string embedded in the executable. Every stored
 * text reaches the page through `textContent` or a text node, never as
 * markup; links go only inside the page or to its API. ASCII only (a
 * character beyond it is a `\u` escape in a string): Bun's transpiler writes
 * each non-ASCII character of a `String.raw` text as such an escape
 * (oven-sh/bun#8745), so the executable served another script than Deno.
 *
 * @module
 */

/** The script of the session browser (`/assets/app.js`). */
export const APP_JS = String.raw`
// hermes-state session browser. Every stored text reaches the page through
// textContent or a text node, never as markup.
(function () {
  "use strict";

  var BIG = 100000;
  var DEBOUNCE_MS = 180;
  // How long typing must pause before a bare NOT is searched for (see typingDelay).
  var OPERATOR_PAUSE_MS = 1000;
  var HITS_PAGE = 30;
  // The longest session id the API takes (a longer query names no session): MAX_SESSION_ID.
  var MAX_ID = 10000;
  var IMAGE_DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+$/;
  var FENCE = /\x60\x60\x60([^\n\x60]*)\n([\s\S]*?)\x60\x60\x60/g;
  var INLINE = /(\x60[^\x60\n]+\x60|\*\*[^*\n]+\*\*)/;
  var UNREACHABLE = "The server cannot be reached: is hermes-state serve still running? This page tries again when it is back.";
  var INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f]|[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

  var app = document.getElementById("app");
  var input = document.getElementById("q");
  var live = document.getElementById("live");
  // Read out by a screen reader: one short line on what a view drew (the view itself is not a
  // live region: a transcript of thousands of messages would be read out whole).
  var status = document.getElementById("status");
  var config = { allowWrites: false, csrf: "" };
  var searchTimer = 0;
  var inflight = null;
  var selected = -1;
  var refreshTimer = 0;
  var renderedKey = "";
  // Each view the reader goes to gets the next number. An answer carries the number of the view
  // that asked for it: one for a view already left draws nothing and shows no error.
  var viewToken = 0;
  // The number of the view swap last put in place: on leaving an entry, a place is kept only if
  // the entry's own view was drawn (not the one before it, still shown while its answer came).
  var drawnToken = 0;
  // Where the reader was in the history entry they come back to, for the view drawn for it.
  var comingBack = null;
  // The store's change marker each answer was read at (the server's x-hermes-data-version), by
  // the answer (or the list made of it); the markers of the answers the shown view was drawn
  // from; the newest marker the live stream told. A view drawn from an answer read before the
  // stream's marker is drawn again: a write between the two is news that no event brings.
  var readAt = new WeakMap();
  var drawnAt = [];
  var liveVersion = null;
  var checkedKey = "";

  // The sticky header's height, for the style sheet (--top): what is scrolled to stays below it.
  // Kept as it changes (a narrow window wraps the header on two lines).
  var header = document.querySelector(".top");
  function noteHeaderHeight() { document.documentElement.style.setProperty("--top", header.getBoundingClientRect().height + "px"); }
  if (header) {
    noteHeaderHeight();
    if (window.ResizeObserver) new ResizeObserver(noteHeaderHeight).observe(header);
  }

  // -- DOM helpers -------------------------------------------------------
  function el(tag, props) {
    var node = document.createElement(tag);
    if (props) {
      for (var key in props) {
        if (!Object.prototype.hasOwnProperty.call(props, key)) continue;
        var value = props[key];
        if (value === null || value === undefined || value === false) continue;
        if (key === "class") node.className = value;
        else if (key === "text") node.textContent = value;
        else if (key === "href") node.setAttribute("href", safeHref(value));
        else node.setAttribute(key, value === true ? "" : String(value));
      }
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { for (var i = 0; i < child.length; i++) append(node, child[i]); return; }
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  function svg(tag, attrs) {
    var node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (var key in attrs) if (Object.prototype.hasOwnProperty.call(attrs, key)) node.setAttribute(key, String(attrs[key]));
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  // Only links inside this page or to this server's API.
  function safeHref(value) {
    var text = String(value);
    return /^(#|\/api\/)/.test(text) ? text : "#";
  }
  function visible(text) {
    return String(text).replace(INVISIBLE, function (c) {
      var code = c.charCodeAt(0);
      if (code < 32) return String.fromCharCode(0x2400 + code);
      if (code === 127) return "\u2421";
      return "\u27e6U+" + code.toString(16).toUpperCase().padStart(4, "0") + "\u27e7";
    });
  }
  // The stored names of a line (source, model, tool, end reason), the empty ones left out, each
  // with its invisible and direction characters shown: an override in one would turn the rest.
  function shownParts(parts) {
    return parts.filter(Boolean).map(visible);
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  // The parts of a row's line (texts and time elements), a middle dot between each two.
  function dotted(parts) {
    var out = [];
    parts.forEach(function (part, i) { if (i) out.push(" \u00B7 "); out.push(part); });
    return out;
  }

  // -- Formatting --------------------------------------------------------
  function pad2(n) { return String(n).padStart(2, "0"); }
  function fmtTime(seconds) {
    if (typeof seconds !== "number" || !isFinite(seconds)) return "";
    var d = new Date(seconds * 1000);
    return d.getFullYear() + "-" + pad2(d.getMonth() + 1) + "-" + pad2(d.getDate()) + " " + pad2(d.getHours()) + ":" + pad2(d.getMinutes());
  }
  // A time element: the minute in the browser's zone as text (or text, such as "3h ago"), the
  // instant exact in datetime, and the second with the zone it is shown in as a tooltip (logs on
  // the server are compared by it).
  var shownZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  function timeNode(seconds, text) {
    if (typeof seconds !== "number" || !isFinite(seconds)) return el("time", { text: "" });
    var d = new Date(seconds * 1000);
    var offset = -d.getTimezoneOffset();
    var zone = "UTC" + (offset < 0 ? "\u2212" : "+") + pad2(Math.floor(Math.abs(offset) / 60)) + ":" + pad2(Math.abs(offset) % 60);
    var minute = fmtTime(seconds);
    return el("time", { datetime: d.toISOString(), title: minute + ":" + pad2(d.getSeconds()) + " " + zone + (shownZone ? " (" + shownZone + ")" : ""), text: text || minute });
  }
  // A time element for a time that is known, none for one that is not: the parts of a row's line.
  function knownTime(seconds) { return typeof seconds === "number" && isFinite(seconds) ? [timeNode(seconds)] : []; }
  function fmtRelative(seconds) {
    var diff = Date.now() / 1000 - seconds;
    if (diff < 60) return "just now";
    if (diff < 3600) return Math.floor(diff / 60) + "m ago";
    if (diff < 86400) return Math.floor(diff / 3600) + "h ago";
    if (diff < 2 * 86400) return "yesterday";
    if (diff < 7 * 86400) return Math.floor(diff / 86400) + "d ago";
    return fmtTime(seconds).slice(0, 10);
  }
  function fmtCount(n) { return Number(n || 0).toLocaleString("en-US"); }
  function fmtCost(n) { return n === null || n === undefined ? "\u2014" : "$" + Number(n).toFixed(n >= 100 ? 0 : n >= 1 ? 2 : 4); }
  function fmtTokens(n) {
    n = Number(n || 0);
    if (n >= 1e9) return (n / 1e9).toFixed(1) + "B";
    if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
    if (n >= 1e4) return (n / 1e3).toFixed(0) + "k";
    return fmtCount(n);
  }

  // -- Network -----------------------------------------------------------
  function api(path, options) {
    options = options || {};
    var headers = { accept: "application/json" };
    if (options.body !== undefined) { headers["content-type"] = "application/json"; headers["x-hermes-csrf"] = config.csrf; }
    return fetch(path, {
      method: options.method || "GET",
      headers: headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
      credentials: "same-origin",
    }).catch(function (error) {
      // No answer at all (the server stopped, the network is down): said in words, not the
      // browser's "Failed to fetch". The live stream draws the view again once it is back.
      if (error && error.name === "AbortError") throw error;
      throw new Error(UNREACHABLE);
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (!response.ok) {
          var failed = new Error((body && body.error && body.error.message) || ("HTTP " + response.status));
          failed.status = response.status;
          // A write refused (403) with the page's CSRF token: the server was started again since
          // the page loaded, with a new one. Asked once more with the token it gives now.
          if (response.status === 403 && options.body !== undefined && !options.again) {
            return api("/api/config").then(function (c) { config = c; }, function () { throw failed; }).then(function () {
              return api(path, { method: options.method, body: options.body, signal: options.signal, again: true });
            });
          }
          throw failed;
        }
        var version = response.headers.get("x-hermes-data-version");
        if (version !== null && body && typeof body === "object") readAt.set(body, version);
        return body;
      });
    });
  }
  // The marker an answer (or a list made of one) was read at; undefined when none is known.
  function versionOf(answer) { return answer && typeof answer === "object" ? readAt.get(answer) : undefined; }
  // made was made of answer: it was read at answer's marker.
  function madeOf(made, answer) { var v = versionOf(answer); if (v !== undefined && made && typeof made === "object") readAt.set(made, v); return made; }
  // The view shown was drawn from these markers: drawn again at once when the live stream has
  // told another (a write after they were read that no event will bring).
  function drawnFrom(versions) {
    drawnAt = versions.filter(function (v) { return typeof v === "string"; });
    checkDrawn();
  }
  // Draws the view again when a marker it was drawn from is not the live stream's. Once for the
  // same view, markers and stream marker: an answer read after a write the stream has not told
  // yet differs too, and is not asked for again and again (its change event comes anyway).
  function checkDrawn() {
    if (liveVersion === null || !live.classList.contains("on")) return;
    if (!drawnAt.some(function (v) { return v !== liveVersion; })) return;
    var key = liveVersion + "\n" + location.hash + "\n" + drawnAt.join("\n");
    if (key === checkedKey) return;
    checkedKey = key;
    onChange();
  }
  // A view is drawn: when (body[data-ready], what tests and tools wait on) and for which address
  // (body[data-drawn]), so that a wait for a view drawn after a click is not ended by a live
  // update that drew the view before it.
  function markReady() {
    document.body.setAttribute("data-drawn", location.hash);
    document.body.setAttribute("data-ready", String(Date.now()));
  }
  function showError(error) {
    if (error && error.name === "AbortError") return;
    var text = String(error && error.message || error);
    drawnAt = [];
    // The same error found again by a live update stays as it is: an alert drawn anew is read
    // out again by a screen reader at every change of the store.
    var current = app.firstElementChild;
    var same = app.childNodes.length === 1 && current !== null &&
      current.matches(".error[role=alert]") && current.textContent === text;
    if (!same) {
      clear(app);
      app.appendChild(el("p", { class: "error", role: "alert", text: text }));
    }
    // The view asked for is not shown: the title of the one before would name it.
    nameTab("Error");
    markReady();
  }
  // The tab's title names the view it shows: the tabs of one server are told apart, in the tab
  // strip and in the browser's history.
  function nameTab(text) { document.title = text + " \u2014 hermes-state"; }
  // Says what a view drew, once: a live update drawing it again says nothing.
  function announce(text, quiet) { if (!quiet) status.textContent = text; }
  function showsError() { return app.querySelector(".error[role=alert]") !== null; }
  // The callback of an answer for the view numbered token: run only while that view is the one
  // shown, so a late answer (the reader clicked on, or went Back) lands nowhere.
  function whileShown(token, callback) {
    return function (value) { if (token === viewToken) return callback(value); };
  }

  // -- Routing (the hash holds the view and its query: deep links) -------
  function route() {
    var hash = location.hash.replace(/^#/, "") || "/";
    var q = hash.indexOf("?");
    var path = q < 0 ? hash : hash.slice(0, q);
    var params = new URLSearchParams(q < 0 ? "" : hash.slice(q + 1));
    var m = /^\/s\/(.+)$/.exec(path);
    if (m) {
      try { return { view: "session", id: decodeURIComponent(m[1]), params: params }; }
      catch (e) { return { view: "bad", message: "This link's session id is not valid URL encoding: " + m[1], params: params }; }
    }
    // A search without words (a link, a bookmark) is the listing, as clearing the box makes it.
    if (path === "/search" && (params.get("q") || "").trim() !== "") return { view: "search", params: params };
    if (path === "/usage") return { view: "usage", params: params };
    return { view: "sessions", params: params };
  }
  function hashFor(view, params) {
    var query = params && params.toString();
    return "#" + view + (query ? "?" + query : "");
  }
  function sessionHref(id, messageId) {
    return "#/s/" + encodeURIComponent(id) + (messageId ? "?m=" + messageId : "");
  }

  // Draws the view of the address. quiet: the same view again with news (the reader's place
  // kept); place: where the reader was in this history entry, when they come back to it.
  function render(options) {
    var r = route();
    var quiet = options && options.quiet;
    var token = quiet ? viewToken : ++viewToken;
    showQueryOf(r, location.hash !== renderedKey);
    if (options && options.moved) movedToken = token;
    if (!quiet) {
      renderedKey = location.hash;
      comingBack = options && options.place ? { token: token, place: options.place } : null;
    }
    var navs = document.querySelectorAll("[data-nav]");
    for (var i = 0; i < navs.length; i++) navs[i].classList.toggle("active", navs[i].getAttribute("data-nav") === (r.view === "usage" ? "usage" : "sessions"));
    if (r.view === "search") return renderSearch(r.params, quiet, token);
    if (r.view === "session") return renderSession(r.id, r.params, quiet, token);
    if (r.view === "bad") { showError(new Error(r.message)); return Promise.resolve(); }
    if (r.view === "usage") return renderUsage(r.params, quiet, token);
    return renderSessions(r.params, quiet, token);
  }
  // The search box holds the search view's query, and nothing on any other view: going to one
  // (Back from a search included) empties it, though it still has the focus. Else a box with
  // the focus is left as it is: on the search view the reader's typing made the address, and a
  // refresh of another view must not eat the keys they are typing.
  function showQueryOf(r, moved) {
    var typing = document.activeElement === input;
    if (r.view === "search") { if (!typing) input.value = r.params.get("q") || ""; return; }
    if (moved || !typing) input.value = "";
  }
  function placeFor(token) { return comingBack && comingBack.token === token ? comingBack.place : null; }

  // -- Sessions ----------------------------------------------------------
  var sourcesCache = null;
  function sources() {
    if (sourcesCache) return Promise.resolve(sourcesCache);
    return api("/api/sources").then(function (body) { sourcesCache = madeOf(body.sources, body); return sourcesCache; });
  }
  // The files sync ships to a PostgreSQL store (none on a file): a filter appears when there are some.
  var originsCache = null;
  function origins() {
    if (originsCache) return Promise.resolve(originsCache);
    return api("/api/origins").then(function (body) { originsCache = madeOf(body.origins, body); return originsCache; });
  }
  function originSelect(originList, current) {
    if (originList.length === 0) return null;
    var select = el("select", { name: "origin", "aria-label": "Origin" }, el("option", { value: "", text: "All origins" }));
    originList.forEach(function (o) {
      select.appendChild(el("option", { value: o.origin, text: o.origin, title: o.host + ":" + o.path, selected: current === o.origin }));
    });
    var known = originList.some(function (o) { return o.origin === current; });
    if (current && !known) select.appendChild(el("option", { value: current, text: visible(current), selected: true }));
    return select;
  }
  // The source filter. A source the address names that the store has none of (an old link, a
  // typo) is shown chosen all the same, so the empty list below has its reason in view; "All
  // sources" over it would say the list is empty of everything.
  function sourceSelect(sourceList, current) {
    var select = el("select", { name: "source", "aria-label": "Source" }, el("option", { value: "", text: "All sources" }));
    var names = current && sourceList.indexOf(current) < 0 ? sourceList.concat([current]) : sourceList;
    names.forEach(function (name) { select.appendChild(el("option", { value: name, text: visible(name), selected: current === name })); });
    return select;
  }
  // A day picked in the page is the reader's own: the API gets its local midnight in Unix seconds
  // (it reads a bare date as UTC, which moved the bounds by the reader's offset from UTC). "To"
  // takes in its whole day: the bound is the next day's midnight. A day that does not exist
  // (2026-02-30), or one before 1973 (Unix seconds of nine digits at least, as the API reads
  // them), goes as typed, for the API to judge.
  function apiValue(key, value) {
    var day = (key === "from" || key === "to") && /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    if (!day) return value;
    var at = new Date(+day[1], +day[2] - 1, +day[3]);
    var exists = at.getFullYear() === +day[1] && at.getMonth() === +day[2] - 1 && at.getDate() === +day[3];
    if (!exists || at.getTime() < 1e11) return value;
    if (key === "to") at = new Date(+day[1], +day[2] - 1, +day[3] + 1);
    return String(at.getTime() / 1000);
  }
  function renderSessions(params, quiet, token) {
    var query = new URLSearchParams();
    ["source", "origin", "from", "to", "children", "order", "offset"].forEach(function (k) { if (params.get(k)) query.set(k, apiValue(k, params.get(k))); });
    query.set("limit", "50");
    return Promise.all([api("/api/sessions?" + query.toString()), sources(), origins()]).then(whileShown(token, function (results) {
      var body = results[0];
      var view = el("section", { class: "view view-sessions", "aria-label": "Sessions" });
      view.appendChild(filtersForm(params, results[1], results[2]));
      if (body.sessions.length === 0) view.appendChild(el("p", { class: "empty", id: "no-sessions" }, whyNoSessions(params)));
      var list = el("ol", { class: "rows", id: "rows" });
      var byStart = params.get("order") === "started";
      body.sessions.forEach(function (s) { list.appendChild(sessionRow(s, byStart)); });
      view.appendChild(list);
      view.appendChild(pager(params, body));
      var n = body.sessions.length;
      announce(counted(n, "session") + (body.offset ? " from row " + fmtCount(body.offset + 1) : ""), quiet);
      nameTab("Sessions");
      swap(view, quiet);
      drawnFrom(results.map(versionOf));
    })).catch(whileShown(token, showError));
  }
  // The listing's filters (the order is not one: it hides no session).
  var LISTING_FILTERS = ["source", "origin", "from", "to", "children"];
  // An empty listing says why: filters that match nothing (with a way to clear them, and which
  // cannot match: a "To" day before the "From" one), a page past the last row, or no session yet
  // (and how sessions get there).
  function whyNoSessions(params) {
    var filtered = LISTING_FILTERS.some(function (k) { return params.get(k); });
    if (!filtered) {
      if (params.get("offset")) return "No sessions on this page.";
      return ["No sessions yet. A Hermes run that uses this database adds them, and so do ",
        el("code", { text: "hermes-state import" }), " and ", el("code", { text: "hermes-state demo" }), "."];
    }
    var from = params.get("from");
    var to = params.get("to");
    var why = from && to && endsBeforeStart(from, to)
      ? "The end (To " + to + ") is before the start (From " + from + "): no session can match."
      : "No sessions match.";
    var kept = new URLSearchParams(params);
    LISTING_FILTERS.concat(["offset"]).forEach(function (k) { kept.delete(k); });
    return [why, " ", el("a", { href: hashFor("/", kept), id: "clear-filters", text: "Clear the filters" })];
  }
  // Compared as the API gets them (a "To" day ends at the next midnight); periods such as
  // "30d" are the API's to judge.
  function endsBeforeStart(from, to) {
    var start = Number(apiValue("from", from));
    var end = Number(apiValue("to", to));
    return isFinite(start) && isFinite(end) && end <= start;
  }
  function filtersForm(params, sourceList, originList) {
    var source = sourceSelect(sourceList, params.get("source"));
    var origin = originSelect(originList, params.get("origin"));
    var order = el("select", { name: "order", "aria-label": "Order" },
      el("option", { value: "last-active", text: "Last active" }),
      el("option", { value: "started", text: "Started", selected: params.get("order") === "started" }));
    var from = el("input", { type: "date", name: "from", "aria-label": "Started from", value: params.get("from") || "" });
    var to = el("input", { type: "date", name: "to", "aria-label": "Started on or before", value: params.get("to") || "" });
    var children = el("input", { type: "checkbox", name: "children", id: "f-children", checked: params.get("children") === "1" });
    // Export what the filters select (the sessions under them too), streamed by the server: with
    // "Has children", only the sessions that have one, as the listing shows.
    var exportQuery = ["source", "origin", "from", "to", "children"].map(function (k) {
      return params.get(k) ? "&" + k + "=" + encodeURIComponent(apiValue(k, params.get(k))) : "";
    }).join("");
    var exports = el("span", { class: "exports" }, "Export: ", ["html", "md", "jsonl"].map(function (f) {
      return el("a", { href: "/api/export?format=" + f + exportQuery, download: "", text: f.toUpperCase() });
    }));
    var form = el("form", { class: "filters", id: "filters" }, source, origin, order,
      el("label", null, "From ", from), el("label", null, "To ", to),
      el("label", { for: "f-children" }, children, " Has children"), exports);
    form.addEventListener("change", function () {
      var next = new URLSearchParams();
      if (source.value) next.set("source", source.value);
      if (origin && origin.value) next.set("origin", origin.value);
      if (order.value !== "last-active") next.set("order", order.value);
      if (from.value) next.set("from", from.value);
      if (to.value) next.set("to", to.value);
      if (children.checked) next.set("children", "1");
      location.hash = hashFor("/", next);
    });
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    return form;
  }
  // The time a row shows is the one the listing is sorted by, and says which it is.
  function rowTime(s, byStart) {
    var at = byStart ? s.started_at : s.last_active;
    return el("span", null, byStart ? "started " : "active ", timeNode(at, fmtRelative(at)));
  }
  function sessionRow(s, byStart) {
    var title = s.title || s.preview || s.id;
    // On a store that sync fills, the origin first: two hosts' sessions of one id look alike.
    var meta = shownParts([s.origin, s.source, s.model]).concat([rowTime(s, byStart), fmtCount(s.message_count) + " msgs", fmtCost(s.estimated_cost_usd)]);
    return el("li", { class: "row" },
      el("a", { href: sessionHref(s.id), class: "row-link" },
        el("span", { class: "row-title bidi", text: visible(title) }),
        s.title && s.preview ? el("span", { class: "row-preview bidi", text: visible(s.preview) }) : null,
        el("span", { class: "row-meta" }, dotted(meta), s.lineage_root_id ? el("span", { class: "badge", text: "chain" }) : null)));
  }
  function pager(params, body) {
    var nav = el("nav", { class: "pager", "aria-label": "Pages" });
    var offset = body.offset;
    function go(delta) {
      var next = new URLSearchParams(params);
      var value = Math.max(0, offset + delta);
      if (value) next.set("offset", String(value)); else next.delete("offset");
      location.hash = hashFor("/", next);
    }
    var count = body.sessions.length;
    // Past the last row (an old link, a hand-typed offset): back to the first page.
    var beyond = count === 0 && offset > 0;
    var prev = el("button", { type: "button", id: "newer", disabled: offset === 0, text: beyond ? "\u2190 First page" : "\u2190 Newer" });
    prev.addEventListener("click", function () { go(beyond ? -offset : -body.limit); });
    var next = el("button", { type: "button", id: "older", disabled: !body.more, text: "Older \u2192" });
    next.addEventListener("click", function () { go(body.limit); });
    var where = count === 0
      ? (offset > 0 ? "Nothing past row " + fmtCount(offset) : "")
      : count === 1 ? "Row " + fmtCount(offset + 1) : fmtCount(offset + 1) + "\u2013" + fmtCount(offset + count);
    nav.appendChild(prev);
    nav.appendChild(el("span", { class: "muted", id: "pager-where", text: where }));
    nav.appendChild(next);
    return nav;
  }

  // -- Search ------------------------------------------------------------
  // The server sends a snippet as parts, text and match by turns: a ">>>" in a message is text.
  function markedSnippet(parts, fallback, query) {
    var node = el("div", { class: "snippet bidi" });
    if (parts) {
      for (var i = 0; i < parts.length; i++) append(node, i % 2 ? el("mark", { text: visible(parts[i]) }) : visible(parts[i]));
      return node;
    }
    var text = visible(fallback || "");
    var needle = (query || "").replace(/["*]/g, "").trim();
    var at = needle ? text.toLowerCase().indexOf(needle.toLowerCase()) : -1;
    if (at < 0) { node.textContent = text; return node; }
    append(node, [text.slice(0, at), el("mark", { text: text.slice(at, at + needle.length) }), text.slice(at + needle.length)]);
    return node;
  }
  function contextLine(c) {
    var text = typeof c.content === "string" ? c.content : "";
    // A message without text (an assistant that only called tools) says so.
    var shown = text === "" ? noText() : visible(text);
    return el("div", { class: "ctx bidi" }, el("span", { class: "ctx-role", text: c.role }), " ", shown);
  }
  // The context is the previous, the matching and the next message (fewer at a session's
  // ends); the matching one is the middle of three, else the one the snippet comes from.
  function contextParts(hit) {
    var context = hit.context || [];
    var at = -1;
    if (context.length === 3) at = 1;
    else if (context.length === 1) at = 0;
    else if (context.length === 2) {
      var probe = (hit.snippet_parts || []).join("").replace(/^(\.\.\.|\u2026)|(\.\.\.|\u2026)$/g, "").trim().slice(0, 24);
      for (var i = 0; i < 2 && probe; i++) if (String(context[i].content).indexOf(probe) >= 0) at = i;
    }
    return { match: at >= 0 ? context[at] : null, around: context.filter(function (_, i) { return i !== at; }) };
  }
  function hitRow(hit, q) {
    var parts = contextParts(hit);
    var match = parts.match;
    return el("li", { class: "row hit" },
      el("a", { href: sessionHref(hit.session_id, hit.id), class: "row-link" },
        el("span", { class: "row-title bidi", text: visible(hit.title || hit.preview || hit.session_id) }),
        // An untitled session is named by its first words, as in the listing; its id below them.
        !hit.title && hit.preview ? el("span", { class: "row-preview mono hit-id", text: visible(hit.session_id) }) : null,
        el("span", { class: "row-meta" }, dotted(shownParts([hit.role, hit.tool_name, hit.origin, hit.source]).concat(knownTime(hit.timestamp))),
          // A hit on a row the transcript leaves out: marked as the transcript with every row marks it.
          marksOf(hit).map(function (mark) { return [" ", el("span", { class: "mark", text: mark })]; })),
        markedSnippet(hit.snippet_parts, (match && match.content) || "", q),
        parts.around.map(contextLine)));
  }
  // How many hits the search view is to show: as many as the reader had loaded with "More
  // results" when it is drawn again with news or when they come back to it, else one page.
  function hitsWanted(quiet, token) {
    var place = placeFor(token);
    var had = quiet ? app.querySelectorAll(".view-search .hit").length : place ? place.hits : 0;
    return Math.max(HITS_PAGE, had);
  }
  // The first hits of a search, as many as wanted, asked for in pages the server allows; the
  // answer has the shape of one page: its hits, and whether there are more.
  function searchHits(query, wanted, signal) {
    var largest = (config.limits && config.limits.page) || 200;
    var got = { hits: [], more: false, capped: false, versions: [] };
    function nextPage() {
      var page = new URLSearchParams(query);
      page.set("limit", String(Math.min(largest, wanted - got.hits.length)));
      if (got.hits.length) page.set("offset", String(got.hits.length));
      return api("/api/search?" + page.toString(), { signal: signal }).then(function (body) {
        got.hits = got.hits.concat(body.hits);
        got.more = body.more;
        got.capped = !!body.capped;
        got.versions.push(versionOf(body));
        return got.more && body.hits.length > 0 && got.hits.length < wanted ? nextPage() : got;
      });
    }
    return nextPage();
  }
  // The sessions the query names by its exact id or a unique id prefix, as the CLI takes one
  // (on a store that sync fills, also by a host's own id: one session per host holding it), or
  // none: a delegate child is in no listing, and an operator may have only an id from a log.
  function sessionsNamed(q, signal) {
    var typed = q.trim();
    if (typed === "" || typed.length > MAX_ID) return Promise.resolve([]);
    // URLSearchParams, not encodeURIComponent: a lone surrogate in the box must not throw.
    return api("/api/resolve?" + new URLSearchParams({ id: typed }).toString(), { signal: signal }).then(function (body) {
      return madeOf(body.sessions || (body.session ? [body.session] : []), body);
    });
  }
  // Offered above the hits, which it does not replace: the query may be words as well.
  function namedRow(s) {
    var about = s.title || s.preview;
    return el("li", { class: "row named" },
      el("a", { href: sessionHref(s.id), class: "row-link" },
        el("span", { class: "row-title bidi" }, "Session ", el("span", { class: "mono", text: visible(s.id) }), about ? " \u2014 " + visible(about) : null),
        el("span", { class: "row-meta" }, dotted(shownParts([s.source]).concat(knownTime(s.started_at))))));
  }
  function renderSearch(params, quiet, token) {
    var q = params.get("q") || "";
    if (inflight) inflight.abort();
    var controller = new AbortController();
    inflight = controller;
    var query = new URLSearchParams({ q: q, limit: String(HITS_PAGE) });
    if (params.get("source")) query.set("source", params.get("source"));
    if (params.get("origin")) query.set("origin", params.get("origin"));
    var hits = searchHits(query, hitsWanted(quiet, token), controller.signal).catch(function (error) {
      // Longer than a search takes (a long session id pasted): refused by the server, while the
      // session the words name is still offered (said with the refusal below).
      if (error && error.status === 400 && q.length > ((config.limits && config.limits.query) || 1000)) return { hits: [], more: false, versions: [], refused: error.message };
      throw error;
    });
    var named = sessionsNamed(q, controller.signal);
    return Promise.all([hits, sources(), origins(), named]).then(whileShown(token, function (results) {
      var body = results[0];
      if (inflight !== controller) return;
      inflight = null;
      if (body.refused && results[3].length === 0) { showError(new Error(body.refused)); return; }
      var view = el("section", { class: "view view-search", "aria-label": "Search results" });
      var only = sourceSelect(results[1], params.get("source"));
      var from = originSelect(results[2], params.get("origin"));
      var refilter = function () {
        var next = new URLSearchParams({ q: q });
        if (only.value) next.set("source", only.value);
        if (from && from.value) next.set("origin", from.value);
        location.hash = hashFor("/search", next);
      };
      only.addEventListener("change", refilter);
      if (from) from.addEventListener("change", refilter);
      var count = el("span", { id: "hit-count" });
      var noun = el("span", { text: " results" });
      view.appendChild(el("form", { class: "filters" }, only, from,
        el("h2", { class: "subtle" }, count, noun, " for ", el("q", { class: "bidi", text: visible(q) }))));
      var list = el("ol", { class: "rows", id: "rows" });
      var shownHits = 0;
      var more = el("button", { type: "button", class: "more", id: "more-hits", text: "More results" });
      // Past the deepest page the server serves, the hits left are said to be there, not offered.
      var capped = el("p", { class: "note", id: "hits-capped", hidden: true, text: "There are more results than a page can show: add a word, pick a source, or use hermes-state search for the rest." });
      // An alert only once shown (an empty one hidden still reads as an alert to a page's checks).
      var failed = el("p", { class: "note", id: "more-failed", hidden: true });
      function add(page, tell) {
        page.hits.forEach(function (hit) { list.appendChild(hitRow(hit, q)); });
        shownHits += page.hits.length;
        var left = page.more || page.capped;
        count.textContent = fmtCount(shownHits) + (left ? "+" : "");
        noun.textContent = shownHits === 1 && !left ? " result" : " results";
        more.hidden = !page.more;
        capped.hidden = !page.capped;
        failed.hidden = true;
        failed.removeAttribute("role");
        if (tell) status.textContent = count.textContent + noun.textContent + " for " + visible(q);
      }
      // The next hits below these, for as long as the search has more.
      more.addEventListener("click", function () {
        var next = new URLSearchParams(query);
        next.set("offset", String(shownHits));
        // Disabled, the button loses the focus: given back once the hits are in (to the first
        // new hit when they are the last), so the keyboard goes on from where it was.
        var focused = document.activeElement === more;
        more.disabled = true;
        api("/api/search?" + next.toString()).then(whileShown(token, function (page) {
          // A live update drew the results again meanwhile, with a button of their own.
          if (list !== document.getElementById("rows")) return;
          more.disabled = false;
          var first = list.children.length;
          add(page, true);
          var firstNew = list.children[first] && list.children[first].querySelector("a");
          if (focused && !more.hidden) more.focus();
          else if (focused && firstNew) firstNew.focus({ preventScroll: true });
          markReady();
        })).catch(whileShown(token, function (error) {
          // The hits shown stay: the failure is said below them, and the button may be tried again.
          if (list !== document.getElementById("rows")) return;
          more.disabled = false;
          failed.setAttribute("role", "alert");
          failed.textContent = "More results could not be loaded: " + (error && error.message ? error.message : String(error));
          failed.hidden = false;
          markReady();
        }));
      });
      add(body, !quiet);
      nameTab("Search: " + visible(q));
      var named = results[3];
      if (named.length) view.appendChild(el("ol", { class: "rows", id: "named", "aria-label": named.length === 1 ? "Session with this id" : "Sessions with this id" }, named.map(namedRow)));
      view.appendChild(list);
      view.appendChild(more);
      view.appendChild(failed);
      view.appendChild(capped);
      if (body.refused) view.appendChild(el("p", { class: "note", id: "search-refused", text: "The messages were not searched: " + body.refused }));
      else if (body.hits.length === 0) view.appendChild(el("p", { class: "empty", text: named.length ? "No message matches." : "Nothing found." }));
      swap(view, quiet);
      drawnFrom(body.versions.concat(results.slice(1).map(versionOf)));
    })).catch(whileShown(token, showError));
  }
  // How long typing must pause before the query is searched for. A bare NOT is most often on its
  // way to a word (NOTE, NOTHING): searched for at once, its "cannot start with NOT" error would
  // flash over the results while the reader types on. Left alone, it still gets that error.
  function typingDelay(q) { return /^\s*NOT\s*$/.test(q) ? OPERATOR_PAUSE_MS : DEBOUNCE_MS; }
  // Typed: searched for once typing pauses. Not while an input method composes (the pinyin or
  // kana of CJK words on their way): the words are searched for once the reader takes them.
  function onType(e) {
    if (e && e.isComposing) return;
    clearTimeout(searchTimer);
    downFor = null;
    searchTimer = setTimeout(searchTyped, typingDelay(input.value));
  }
  function searchTyped() {
    searchTimer = 0;
    var q = input.value;
    if (q.trim() === "") { if (route().view === "search") location.hash = "#/"; return; }
    var next = new URLSearchParams({ q: q });
    var current = route();
    if (current.view === "search") {
      ["source", "origin"].forEach(function (k) { if (current.params.get(k)) next.set(k, current.params.get(k)); });
    }
    var target = hashFor("/search", next);
    if (route().view === "search") { history.replaceState(history.state, "", target); render(); }
    else location.hash = target;
  }

  // -- Transcript --------------------------------------------------------
  function inline(text, parent) {
    var pieces = text.split(INLINE);
    for (var i = 0; i < pieces.length; i++) {
      var p = pieces[i];
      if (i % 2 === 0) { if (p) parent.appendChild(document.createTextNode(p)); }
      else if (p.charAt(0) === "\x60") parent.appendChild(el("code", { text: p.slice(1, -1) }));
      else parent.appendChild(el("strong", { text: p.slice(2, -2) }));
    }
  }
  function renderText(text, parent) {
    text = visible(text);
    if (text.length > BIG) {
      var pre = el("div", { class: "text big", text: text.slice(0, BIG) });
      var more = el("button", { type: "button", class: "more", text: "Show all " + fmtCount(text.length) + " characters" });
      more.addEventListener("click", function () { pre.textContent = text; more.remove(); });
      parent.appendChild(pre);
      parent.appendChild(more);
      return;
    }
    var last = 0;
    FENCE.lastIndex = 0;
    var match;
    while ((match = FENCE.exec(text)) !== null) {
      if (match.index > last) { var before = el("div", { class: "text" }); inline(text.slice(last, match.index), before); parent.appendChild(before); }
      parent.appendChild(el("pre", null, el("code", { text: match[2] })));
      last = match.index + match[0].length;
    }
    if (last < text.length) { var rest = el("div", { class: "text" }); inline(text.slice(last), rest); parent.appendChild(rest); }
  }
  function renderPart(part, parent) {
    if (typeof part === "string") return renderText(part, parent);
    if (!part || typeof part !== "object" || Array.isArray(part)) { parent.appendChild(el("span", { class: "part-label", text: visible(JSON.stringify(part)) })); return; }
    if (typeof part.text === "string") return renderText(part.text, parent);
    var type = typeof part.type === "string" ? part.type : "part";
    var image = part.image_url;
    var url = typeof image === "string" ? image : image && typeof image.url === "string" ? image.url : null;
    if (url && IMAGE_DATA_URL.test(url)) { var img = el("img", { class: "part-image", alt: type }); img.src = url; parent.appendChild(img); return; }
    parent.appendChild(el("span", { class: "part-label", text: "[" + visible(url ? type + ": " + url.slice(0, 120) : type) + "]" }));
  }
  function renderContent(content, parent) {
    if (content === null || content === undefined) return;
    if (typeof content === "string") return renderText(content, parent);
    (Array.isArray(content) ? content : [content]).forEach(function (p) { renderPart(p, parent); });
  }
  // A tool's JSON output is shown pretty-printed; anything else as text.
  function renderToolContent(content, parent) {
    if (typeof content === "string" && content.length < BIG && /^\s*[\[{]/.test(content)) {
      try { parent.appendChild(el("pre", null, el("code", { text: visible(JSON.stringify(JSON.parse(content), null, 2)) }))); return; } catch (e) { /* not JSON */ }
    }
    renderContent(content, parent);
  }
  function pretty(raw) {
    if (raw === null || raw === undefined) return "";
    if (typeof raw !== "string") return JSON.stringify(raw, null, 2);
    try { return JSON.stringify(JSON.parse(raw), null, 2); } catch (e) { return raw; }
  }
  function toolCalls(calls, results) {
    if (!calls) return [];
    return (Array.isArray(calls) ? calls : [calls]).map(function (call) {
      var record = call && typeof call === "object" ? call : {};
      var fn = record["function"] && typeof record["function"] === "object" ? record["function"] : record;
      var name = typeof fn.name === "string" ? fn.name : "?";
      var result = typeof record.id === "string" ? results.get(record.id) : undefined;
      var args = el("div", null, el("div", { class: "figures", text: "arguments" }), el("pre", null, el("code", { text: visible(pretty(fn.arguments !== undefined ? fn.arguments : fn.input)) })));
      var side = null;
      if (result) {
        side = el("div", null, el("div", { class: "figures" }, "result \u00B7 ", el("a", { href: "#m-" + result.id, class: "jump", "data-jump": result.id, text: "message" })));
        // An empty result says so, as its message does.
        if (hasText(result.content)) renderToolContent(result.content, side);
        else side.appendChild(noText());
      }
      return el("details", { class: "call" }, el("summary", null, "\u2192 " + visible(name)), el("div", { class: "call-grid" }, args, side));
    });
  }
  // The muted note of a message (or a tool result) without text, in place of an empty box.
  function noText() { return el("em", { class: "no-text", text: "(no text)" }); }
  // Whether a message's content shows anything: text other than blanks, or any part.
  function hasText(content) {
    if (content === null || content === undefined) return false;
    if (typeof content === "string") return content.trim() !== "";
    return !Array.isArray(content) || content.length > 0;
  }
  // The marks of a message read with all=1 ([rewound], [compacted], [hidden]), else none.
  function marksOf(m) {
    return Array.isArray(m.marks) ? m.marks.filter(function (mark) { return typeof mark === "string"; }) : [];
  }
  function messageNode(m, results) {
    var head = el("div", { class: "msg-head" }, el("span", { class: "role", text: visible(m.role) }),
      m.tool_name ? el("span", { class: "mono", text: visible(m.tool_name) }) : null,
      timeNode(m.timestamp),
      m.token_count ? el("span", { text: fmtCount(m.token_count) + " tokens" }) : null,
      m.finish_reason && m.finish_reason !== "stop" ? el("span", { text: visible(m.finish_reason) }) : null,
      // With every row shown (all=1): the marks show --all puts on a row Hermes took back or hides.
      marksOf(m).map(function (mark) { return el("span", { class: "mark", text: mark }); }));
    var taken = marksOf(m).length > 0;
    var node = el("article", { class: "msg role-" + String(m.role).replace(/[^a-z_-]/gi, "") + (taken ? " taken-back" : ""), id: "m-" + m.id }, head);
    var reasoning = [m.reasoning, m.reasoning_content].filter(function (r) { return typeof r === "string" && r.trim() !== ""; }).join("\n\n");
    if (reasoning) { var r = el("details", { class: "reasoning" }, el("summary", { text: "Reasoning" })); renderText(reasoning, r); node.appendChild(r); }
    // A tool result without text is a note, not an empty fold.
    if (m.role === "tool" && !hasText(m.content)) node.appendChild(el("div", { class: "content" }, noText()));
    else if (m.role === "tool") {
      var d = el("details", { class: "tool-result" }, el("summary", { text: "Tool result" + (m.tool_name ? " \u00B7 " + visible(m.tool_name) : "") }));
      renderToolContent(m.content, d);
      node.appendChild(d);
    }
    var calls = toolCalls(m.tool_calls, results);
    if (m.role !== "tool") {
      var body = el("div", { class: "content" });
      // A message without text, reasoning or tool calls says so rather than showing an empty box.
      if (!reasoning && calls.length === 0 && !hasText(m.content)) body.appendChild(noText());
      else renderContent(m.content, body);
      node.appendChild(body);
    }
    append(node, calls);
    return node;
  }
  function lineageNode(n, current) {
    var label = n.title || n.id;
    var item = el("li", { class: n.id === current ? "current" : null },
      n.id === current ? el("strong", { class: "bidi", text: visible(label) }) : el("a", { href: sessionHref(n.id), class: "bidi", text: visible(label) }),
      n.relation !== "root" ? el("span", { class: "badge", text: n.relation }) : null,
      el("span", { class: "muted", text: " " + shownParts([n.source, fmtCount(n.message_count) + " msgs", n.end_reason]).join(" \u00B7 ") }));
    if (n.children.length || n.hidden) {
      var ul = el("ul");
      n.children.forEach(function (c) {
        // A long chain is shortened to its ends: the sessions left out between are counted.
        if (c.skipped) ul.appendChild(el("li", { class: "cut", text: "\u22ee " + fmtCount(c.skipped) + " more in the chain" }));
        ul.appendChild(lineageNode(c, current));
      });
      if (n.hidden) ul.appendChild(el("li", { class: "cut", text: "\u2026 " + fmtCount(n.hidden) + " more not shown" }));
      item.appendChild(ul);
    }
    return item;
  }
  function detailsList(s, origin) {
    // The times as time elements, as the messages': the zone they are shown in is their tooltip.
    var started = knownTime(s.started_at);
    var rows = [["ID", s.id], ["Origin", origin], ["Source", s.source], ["Model", s.model], ["Started", started.length ? started : ""],
      ["Ended", s.ended_at ? knownTime(s.ended_at).concat(s.end_reason ? [" (" + visible(s.end_reason) + ")"] : []) : "open"],
      ["Messages", fmtCount(s.message_count) + " \u00B7 " + fmtCount(s.tool_call_count) + " tool calls \u00B7 " + fmtCount(s.api_call_count) + " API calls"],
      ["Tokens", fmtCount(s.input_tokens) + " in \u00B7 " + fmtCount(s.output_tokens) + " out \u00B7 " + fmtCount(s.cache_read_tokens) + " cache read \u00B7 " + fmtCount(s.reasoning_tokens) + " reasoning"],
      ["Cost", fmtCost(s.estimated_cost_usd) + " estimated" + (s.actual_cost_usd !== null && s.actual_cost_usd !== undefined ? " \u00B7 " + fmtCost(s.actual_cost_usd) + " actual" : "")]];
    var dl = el("dl", { class: "details-list" });
    rows.forEach(function (r) {
      if (!r[1]) return;
      dl.appendChild(el("dt", { text: r[0] }));
      dl.appendChild(el("dd", { class: "bidi" }, Array.isArray(r[1]) ? r[1] : visible(String(r[1]))));
    });
    return dl;
  }
  // The way to the rows a newer Hermes rewound, compacted or hides (show --all): a box whose
  // state is the address's all=1, so a link and Back keep it. Offered only when there are some.
  function everyRowToggle(leftOut) {
    var r = route();
    var every = r.params.get("all") === "1";
    if (!every && !(leftOut > 0)) return null;
    var box = el("input", { type: "checkbox", id: "all-messages", checked: every });
    box.addEventListener("change", function () {
      var now = route();
      if (now.view !== "session") return;
      var next = new URLSearchParams(now.params);
      if (box.checked) next.set("all", "1");
      else { next.delete("all"); next.delete("m"); }
      location.hash = hashFor("/s/" + encodeURIComponent(now.id), next);
    });
    var count = leftOut > 0 ? fmtCount(leftOut) + " " : "";
    return el("label", { class: "all-toggle", for: "all-messages" }, box,
      " Also show the " + count + (leftOut === 1 ? "message" : "messages") + " Hermes took back or hides ([rewound], [compacted], [hidden])");
  }
  function actions(s, origin, leftOut) {
    var back = el("a", { class: "back", href: "#/", text: "\u2190 Back" });
    back.addEventListener("click", function (e) { e.preventDefault(); goBack(); });
    var box = el("div", { class: "actions" }, back);
    ["html", "md", "jsonl"].forEach(function (f) {
      box.appendChild(el("a", { class: "button", href: "/api/export?format=" + f + "&session=" + encodeURIComponent(s.id), download: "", text: "Export " + f.toUpperCase() }));
    });
    if (config.allowWrites) {
      var rename = el("button", { type: "button", text: "Rename" });
      rename.addEventListener("click", function () {
        // A synced session's title comes back from its file: said before it changes.
        var kept = origin ? " It came from a synced file (origin " + origin + "): its next change on its host brings back the title its file has." : "";
        var title = prompt("New title (empty clears it)." + kept, s.title || "");
        if (title === null) return;
        api("/api/session/title?id=" + encodeURIComponent(s.id), { method: "PUT", body: { title: title } }).then(function () { render(); }).catch(function (e) { alert(e.message); });
      });
      var del = el("button", { type: "button", class: "danger", text: "Delete" });
      del.addEventListener("click", function () {
        // A synced session comes back from its file: said before it goes.
        var back = origin ? " It came from a synced file (origin " + origin + "): while the file holds it, each sync pass ships it back." : "";
        if (!confirm("Delete session " + s.id + " and its " + s.message_count + " messages? Child sessions are kept." + back)) return;
        api("/api/session?id=" + encodeURIComponent(s.id), { method: "DELETE", body: { confirm: s.id } }).then(leaveDeleted).catch(function (e) { alert(e.message); });
      });
      box.appendChild(rename);
      box.appendChild(del);
    }
    append(box, everyRowToggle(leftOut));
    return box;
  }
  // After a delete, the session's history entry becomes the listing's: Back does not lead to a
  // session that is gone ("not found"), but to the view before it.
  function leaveDeleted() {
    history.replaceState(history.state, "", "#/");
    render({ moved: true });
  }
  // The open transcript: what a live update asks the server for (the messages after the newest
  // one read, while those drawn are all still there) and where it puts them.
  var shown = null;
  function sessionHead(body) {
    var s = body.session;
    var info = el("div", { class: "session-info" }, detailsList(s, body.origin));
    if (body.lineage && (body.lineage.children.length || body.lineage.id !== s.id)) {
      info.appendChild(el("nav", { class: "lineage", "aria-label": "Lineage" }, el("h2", { text: "Lineage" }), el("ul", { class: "tree" },
        body.lineage.older ? el("li", { class: "cut", text: "\u22ee older sessions not shown" }) : null,
        lineageNode(body.lineage, s.id))));
    }
    nameTab(visible(s.title || s.id));
    return [el("h1", { class: "bidi", id: "session-title", tabindex: "-1", text: visible(s.title || s.id) }), actions(s, body.origin, body.left_out), info];
  }
  // Which message made each tool call: its article is drawn again when the call's result comes.
  function noteCalls(m, callers) {
    var calls = Array.isArray(m.tool_calls) ? m.tool_calls : m.tool_calls ? [m.tool_calls] : [];
    calls.forEach(function (call) { if (call && typeof call.id === "string") callers.set(call.id, m); });
  }
  // How many messages a transcript answer holds: a session of thousands is shown a page at a
  // time, the newest first, with a button for the page before (and after, opened at a message).
  function transcriptPage() { return (config.limits && config.limits.transcript) || 5000; }
  function pageButton(earlier, count) {
    var text = (earlier ? "Show earlier messages (" : "Show later messages (") + fmtCount(count) + " more)";
    return el("button", { type: "button", class: "more page-more", id: earlier ? "earlier-messages" : "later-messages", text: text });
  }
  // Notes the calls and results of messages of another page of the transcript shown.
  function noteMessages(mine, messages) {
    messages.forEach(function (m) {
      if (m.role === "tool" && m.tool_call_id) mine.results.set(m.tool_call_id, m);
      noteCalls(m, mine.callers);
    });
  }
  // The page of the transcript before (earlier) or after the messages shown, put in place: above
  // them with the reader kept where they were, or below them.
  function loadPage(mine, earlier, button, token) {
    // Disabled, the button loses the focus: given back to the next button, or to the first
    // message loaded when none is left.
    var focused = document.activeElement === button;
    button.disabled = true;
    var path = "/api/session?id=" + encodeURIComponent(mine.id) + (earlier ? "&before=" + mine.first : "&beyond=" + mine.last) + "&limit=" + transcriptPage() + (mine.all ? "&all=1" : "");
    api(path).then(whileShown(token, function (body) {
      if (shown !== mine || !document.getElementById("messages")) return;
      var list = document.getElementById("messages");
      noteMessages(mine, body.messages);
      var batch = document.createDocumentFragment();
      body.messages.forEach(function (m) { batch.appendChild(messageNode(m, mine.results)); });
      var n = body.messages.length;
      mine.count += n;
      if (earlier) {
        var anchor = list.firstElementChild;
        var top = anchor ? anchor.getBoundingClientRect().top : 0;
        list.insertBefore(batch, list.firstChild);
        if (anchor) window.scrollBy(0, anchor.getBoundingClientRect().top - top);
        if (n) mine.first = body.messages[0].id;
        mine.earlier = body.earlier;
      } else {
        list.appendChild(batch);
        if (n) mine.last = body.messages[n - 1].id;
        mine.later = body.later;
        // Shown up to the newest: live updates add below it from now on.
        if (mine.later === 0) { mine.newest = body.newest; mine.newestAt = body.newest_at; }
      }
      var left = earlier ? mine.earlier : mine.later;
      if (left > 0) {
        var again = pageButton(earlier, left);
        button.replaceWith(again);
        wirePage(mine, earlier, token);
        if (focused) again.focus({ preventScroll: true });
      } else {
        var next = earlier ? list.firstElementChild : list.children[list.children.length - n];
        if (focused && next) { next.setAttribute("tabindex", "-1"); next.focus({ preventScroll: true }); }
        button.remove();
      }
      announce("Shown " + fmtCount(n) + (earlier ? " earlier" : " later") + (n === 1 ? " message" : " messages"));
      markReady();
    })).catch(whileShown(token, function () {
      // The messages shown changed meanwhile (a rewind, a deletion): the transcript drawn again.
      if (shown === mine) refreshView();
    }));
  }
  function wirePage(mine, earlier, token) {
    var button = document.getElementById(earlier ? "earlier-messages" : "later-messages");
    if (button) button.addEventListener("click", function () { loadPage(mine, earlier, button, token); });
  }
  // A long transcript is drawn in batches, one a task: its first messages are seen at once, and
  // the page answers the reader while the rest are drawn below them.
  var FIRST_BATCH = 150;
  var BATCH = 300;
  // How many messages the first batch holds: up to the message the view shows, and enough below
  // it to fill the window.
  function firstBatch(messages, ids) {
    var end = Math.min(messages.length, FIRST_BATCH);
    for (var i = end; i < messages.length; i++) {
      if (ids.indexOf(String(messages[i].id)) >= 0) end = Math.min(messages.length, i + 50);
    }
    return end;
  }
  function drawSession(id, params, quiet, body, token) {
    var every = params.get("all") === "1";
    var target = params.get("m");
    // A link to a message the transcript leaves out (a search hit on one a newer Hermes rewound,
    // compacted or hides): opened with every row shown (all=1), at the message, marked.
    if (target && !quiet && !every && body.left_out > 0 && !body.messages.some(function (m) { return String(m.id) === target; })) {
      var withEvery = new URLSearchParams(params);
      withEvery.set("all", "1");
      history.replaceState(history.state, "", hashFor("/s/" + encodeURIComponent(id), withEvery));
      render({ place: placeFor(token), moved: movedToken === token });
      return;
    }
    // Maps, not objects: a call id may be "toString" or "__proto__".
    var results = new Map();
    var callers = new Map();
    body.messages.forEach(function (m) {
      if (m.role === "tool" && m.tool_call_id) results.set(m.tool_call_id, m);
      noteCalls(m, callers);
    });
    var view = el("section", { class: "view view-session", "aria-label": "Transcript" });
    var head = sessionHead(body);
    head.forEach(function (node) { view.appendChild(node); });
    var list = el("div", { class: "messages", id: "messages" });
    var messages = body.messages;
    var drawn = 0;
    function drawUpTo(end) {
      var batch = document.createDocumentFragment();
      for (; drawn < end; drawn++) batch.appendChild(messageNode(messages[drawn], results));
      list.appendChild(batch);
    }
    var place = placeFor(viewToken);
    // Drawn again with news (folds to open again, the reader's place to keep): all at once.
    drawUpTo(quiet ? messages.length : firstBatch(messages, [target, place && place.anchor && place.anchor.id.slice(2)]));
    if (messages.length === 0) list.appendChild(el("p", { class: "empty", text: "No messages." }));
    var earlier = body.earlier || 0;
    var later = body.later || 0;
    if (earlier > 0) view.appendChild(pageButton(true, earlier));
    view.appendChild(list);
    if (later > 0) view.appendChild(pageButton(false, later));
    var unfinished = drawn < messages.length;
    var total = messages.length + earlier + later;
    announce("Session " + visible(body.session.title || id) + ", " + counted(total, "message"), quiet);
    var restored = swap(view, quiet, unfinished);
    drawnFrom([versionOf(body)]);
    var ends = messages.length ? { first: messages[0].id, last: messages[messages.length - 1].id } : {};
    var mine = shown = { id: id, all: every, newest: body.newest, newestAt: body.newest_at, count: messages.length, first: ends.first, last: ends.last, earlier: earlier, later: later, results: results, callers: callers, head: head, busy: unfinished };
    wirePage(mine, true, token);
    wirePage(mine, false, token);
    // The rest, a batch a task, while this transcript is the one shown; the page is ready (and
    // a live update drawn) once all are there.
    function drawRest() {
      setTimeout(function () {
        if (token !== viewToken || shown !== mine) return;
        drawUpTo(Math.min(messages.length, drawn + BATCH));
        if (drawn < messages.length) return drawRest();
        mine.busy = false;
        markReady();
        if (mine.again) { mine.again = false; renderSession(id, params, true, token); }
      }, 0);
    }
    if (unfinished) drawRest();
    if (target && !quiet) {
      var node = document.getElementById("m-" + target);
      if (node) {
        node.classList.add("target");
        var details = node.querySelectorAll("details.tool-result");
        for (var i = 0; i < details.length; i++) details[i].open = true;
        // Opened from a hit: at the message; come back to: where the reader was, folds open.
        if (restored) scrollToPlace(restored);
        else { layOutAbove(node); node.scrollIntoView({ block: "center" }); }
        // The focus given to the title goes to the message instead: Tab goes on from there.
        if (document.activeElement === head[0]) { node.setAttribute("tabindex", "-1"); node.focus({ preventScroll: true }); }
      } else if (!messages.some(function (m) { return String(m.id) === target; })) {
        // A hit on a message the transcript leaves out (a newer Hermes compacted it into a summary,
        // or rewound it) or one deleted since: said, where the reader looks for it.
        list.parentNode.insertBefore(el("p", { class: "note", id: "target-missing", role: "status" },
          every ? "The message this link opens at is not in the session: it was deleted."
            : "The message this link opens at is not in the transcript: it was deleted."), list);
      }
    }
  }
  function openFolds(node) {
    var folds = node.querySelectorAll("details");
    var open = [];
    for (var i = 0; i < folds.length; i++) open.push(folds[i].open);
    return open;
  }
  function reopenFolds(node, open) {
    var folds = node.querySelectorAll("details");
    for (var i = 0; i < folds.length && i < open.length; i++) if (open[i]) folds[i].open = true;
  }
  // New messages below the drawn ones: the head drawn again (counts, tokens, lineage), a call
  // whose result came drawn again in place, the reader kept at the bottom if they were there.
  function appendToSession(was, body) {
    dropGoneNote();
    var atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 4;
    var head = sessionHead(body);
    var focus = focusToKeep(true);
    was.head.forEach(function (node, i) { node.replaceWith(head[i]); });
    was.head = head;
    if (focus && !app.contains(document.activeElement)) focusIn(app.querySelector(".view"), focus.key);
    var redraw = new Map();
    body.messages.forEach(function (m) {
      if (m.role === "tool" && m.tool_call_id) {
        was.results.set(m.tool_call_id, m);
        var caller = was.callers.get(m.tool_call_id);
        if (caller) redraw.set(caller.id, caller);
      }
      noteCalls(m, was.callers);
    });
    redraw.forEach(function (caller, key) {
      var old = document.getElementById("m-" + key);
      if (!old) return;
      var open = openFolds(old);
      var fresh = messageNode(caller, was.results);
      if (old.classList.contains("target")) fresh.classList.add("target");
      old.replaceWith(fresh);
      reopenFolds(fresh, open);
    });
    var list = document.getElementById("messages");
    var empty = list.querySelector(".empty");
    if (empty && body.messages.length) empty.remove();
    body.messages.forEach(function (m) { list.appendChild(messageNode(m, was.results)); });
    was.newest = body.newest;
    was.newestAt = body.newest_at;
    was.count += body.messages.length;
    if (body.messages.length) {
      was.last = body.messages[body.messages.length - 1].id;
      if (was.first === undefined) was.first = body.messages[0].id;
    }
    // Messages before those shown went (a deletion, a compaction): the button says how many are
    // left, and goes when none is.
    var button = document.getElementById("earlier-messages");
    if (button && typeof body.earlier === "number" && body.earlier !== was.earlier) {
      was.earlier = body.earlier;
      if (body.earlier > 0) button.textContent = pageButton(true, body.earlier).textContent;
      else button.remove();
    }
    if (atBottom && body.messages.length) window.scrollTo(0, document.documentElement.scrollHeight);
    markReady();
    drawnFrom([versionOf(body)]);
  }
  // A transcript opened at an earlier message, later ones not shown: a live change is told by the
  // counts after its last message (limit=0), not by its messages read again. Messages appended
  // after the session's end only make the later button's count grow. When those up to its last
  // message are no longer the ones before it and the ones it shows (a deletion, a rewind, a
  // compaction, before or in it), the transcript is read and drawn again whole (stale).
  function recount(was, body) {
    if (body.earlier !== was.earlier + was.count) { was.stale = true; was.again = true; return; }
    dropGoneNote();
    var head = sessionHead(body);
    var focus = focusToKeep(true);
    was.head.forEach(function (node, i) { node.replaceWith(head[i]); });
    was.head = head;
    if (focus && !app.contains(document.activeElement)) focusIn(app.querySelector(".view"), focus.key);
    was.later = body.later;
    // Those after it went: shown up to the newest, live updates add below it from now on.
    if (was.later === 0) { was.newest = body.newest; was.newestAt = body.newest_at; }
    var button = document.getElementById("later-messages");
    if (button && was.later > 0) button.textContent = pageButton(false, was.later).textContent;
    else if (button) {
      var list = document.getElementById("messages");
      if (document.activeElement === button && list.lastElementChild) { list.lastElementChild.setAttribute("tabindex", "-1"); list.lastElementChild.focus({ preventScroll: true }); }
      button.remove();
    }
    markReady();
    drawnFrom([versionOf(body)]);
  }
  // The transcript shown, of a session deleted while it was read (a live update found it gone):
  // what it held stays in view, for the reader to finish or copy, under a note that says it is
  // gone, with the way to the listing; the tab's title says so too. False when no transcript of
  // it is shown.
  function sessionGone(id) {
    var view = app.querySelector(".view-session");
    if (!view || !shown || shown.id !== id) return false;
    if (!document.getElementById("gone")) {
      var note = el("p", { class: "gone", id: "gone", role: "alert" },
        "This session was deleted (by another program or page): what it held stays shown until you leave. ",
        el("a", { href: "#/", text: "Sessions" }));
      view.insertBefore(note, view.firstChild);
      nameTab("Deleted: " + visible(shown.head[0].textContent));
    }
    drawnAt = [];
    markReady();
    return true;
  }
  // The session is there again (imported again, restored): the note that it is gone goes.
  function dropGoneNote() {
    var note = document.getElementById("gone");
    if (note) note.remove();
  }
  // The most pages of a transcript a reload (or Back) reads again: those the reader had loaded,
  // up to this many, the message they were reading among them.
  var PAGES_KEPT = 4;
  // The part of a transcript's address that asks for the messages a place held (its first one
  // and how many), when they were more than a page: else none (the page asked as usual).
  function windowFor(id, place) {
    var kept = place && place.window;
    if (!kept || kept.id !== id || !(kept.count > transcriptPage()) || !/^\d{1,15}$/.test(String(kept.first))) return "";
    var most = PAGES_KEPT * transcriptPage();
    if (kept.count <= most) return "&from=" + kept.first + "&limit=" + kept.count;
    // More than that: the pages around the message read.
    var reading = place.anchor && /^m-(\d{1,15})$/.exec(place.anchor.id);
    return reading ? "&m=" + reading[1] + "&limit=" + most : "&from=" + kept.first + "&limit=" + most;
  }
  // Which messages a transcript shown holds: its first and last, and how many.
  function pagesShown(mine) { return mine.first + " " + mine.last + " " + mine.count; }
  function renderSession(id, params, quiet, token) {
    // The id goes in the query: a path cannot hold the ids "." and "..".
    var every = params.get("all") === "1";
    var path = "/api/session?id=" + encodeURIComponent(id) + (every ? "&all=1" : "");
    var was = quiet && shown && shown.id === id && shown.all === every && document.getElementById("messages") ? shown : null;
    var target = params.get("m");
    var counting = false;
    // Come back to (a reload, Back) after loading pages: those pages again, bounded.
    var loaded = was ? "" : windowFor(id, placeFor(token));
    if (was) {
      // One update at a time: two asking for the rows after the same one would add them twice.
      if (was.busy) { was.again = true; return Promise.resolve(); }
      was.busy = true;
      // As many as shown, when drawn again whole: the pages the reader loaded stay.
      var size = "&limit=" + Math.max(transcriptPage(), was.count);
      // Opened at an earlier message, with later ones not shown: the counts after it (recount);
      // that part read and drawn again when they tell it changed.
      // With every row shown, a rewind or a compaction changes no count (its rows stay, marked
      // otherwise): the rows shown are read again whole, from the first one.
      counting = was.later > 0 && !was.stale && was.last !== undefined && !was.all;
      if (counting) path += "&beyond=" + was.last + "&limit=0";
      else if (was.later > 0 || was.all) path += (was.first !== undefined ? "&from=" + was.first : "") + size;
      else path += "&after=" + was.newest + "&shown=" + was.count + (was.first !== undefined ? "&first=" + was.first : "") + (typeof was.newestAt === "number" ? "&at=" + encodeURIComponent(was.newestAt) : "") + size;
    } else if (loaded) path += loaded;
    else if (target && /^\d{1,15}$/.test(target)) path += "&m=" + target;
    var asked = was ? pagesShown(was) : "";
    return api(path).then(whileShown(token, function (body) {
      // The transcript was drawn anew meanwhile: these rows may follow another newest one.
      if (was && shown !== was) return;
      // A page was loaded meanwhile (Show earlier or later): the answer, for the messages shown
      // before it (its counts, or a redraw without that page), is asked for again.
      if (was && pagesShown(was) !== asked) { was.again = true; return; }
      if (counting) recount(was, body);
      else if (was && body.appended) appendToSession(was, body);
      else drawSession(id, params, quiet, body, token);
    }), function (error) {
      // The session shown was deleted (by the CLI, another page): its text stays, said gone.
      if (quiet && error && error.status === 404 && token === viewToken && sessionGone(id)) return;
      // The last message shown is gone (a rewind, a compaction): drawn again whole.
      if (!counting || !error || error.status !== 409) throw error;
      if (shown !== was || token !== viewToken) return;
      if (pagesShown(was) === asked) was.stale = true;
      was.again = true;
    }).catch(whileShown(token, showError)).then(function () {
      if (!was) return;
      was.busy = false;
      if (!was.again) return;
      was.again = false;
      if (token === viewToken) renderSession(id, params, true, token);
    });
  }

  // -- Usage -------------------------------------------------------------
  // The top of a chart's axis: four equal steps of 1, 2, 2.5 or 5 times a power of ten (whole
  // steps for counts), so every tick is a round number.
  function niceMax(max, whole) {
    if (!(max > 0)) return whole ? 4 : 1;
    var raw = max / 4;
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 2.5, 5, 10];
    var step = power * 10;
    for (var i = 0; i < steps.length; i++) if (steps[i] * power >= raw) { step = steps[i] * power; break; }
    if (whole) step = Math.max(1, Math.ceil(step));
    return step * 4;
  }
  // A chart's width in the window's pixels, up to 640: its 11 px labels stay 11 px on a phone
  // (drawn 640 wide and shrunk to fit 375 px, they were 6 px high).
  function chartWidth() { return Math.max(280, Math.min(640, window.innerWidth - 32)); }
  function barChart(rows, label, series, title) {
    var width = chartWidth(), height = 220, left = 52, bottom = 28, top = 10;
    var max = 0;
    rows.forEach(function (r) { var sum = 0; series.forEach(function (s) { sum += s.value(r) || 0; }); max = Math.max(max, sum); });
    max = niceMax(max, series[0].whole);
    var chart = svg("svg", { viewBox: "0 0 " + width + " " + height, class: "chart", role: "img", "aria-label": title });
    chart.appendChild(svg("title", {}, title));
    for (var g = 0; g <= 4; g++) {
      var y = top + (height - top - bottom) * (1 - g / 4);
      chart.appendChild(svg("line", { x1: left, x2: width, y1: y, y2: y, class: "grid" }));
      chart.appendChild(svg("text", { x: left - 6, y: y + 4, class: "axis", "text-anchor": "end" }, series[0].format(max * g / 4)));
    }
    var n = Math.max(rows.length, 1);
    var slot = (width - left) / n;
    var bar = Math.max(2, slot * 0.7);
    rows.forEach(function (r, i) {
      var x = left + i * slot + (slot - bar) / 2;
      var base = height - bottom;
      series.forEach(function (s, k) {
        var v = s.value(r) || 0;
        var h = (height - top - bottom) * v / max;
        base -= h;
        chart.appendChild(svg("rect", { x: x, y: base, width: bar, height: Math.max(h, 0), class: "bar s" + k }, svg("title", {}, label(r) + " \u00B7 " + s.name + ": " + s.format(v))));
      });
      // One label for every 80 px at most: 8 on a chart 640 wide.
      if (i % Math.ceil(n / Math.floor(width / 80)) === 0) {
        var text = String(label(r));
        if (/^\d{4}-\d{2}-\d{2}$/.test(text)) text = text.slice(5);
        chart.appendChild(svg("text", { x: x + bar / 2, y: height - 8, class: "axis", "text-anchor": "middle" }, text.length > 14 ? text.slice(0, 13) + "\u2026" : text));
      }
    });
    var legend = el("div", { class: "legend" });
    series.forEach(function (s, k) { legend.appendChild(el("span", { class: "key s" + k, text: s.name })); });
    return el("figure", { class: "chart-box" }, el("figcaption", { text: title }), chart, legend);
  }
  function usageTable(rows, keyName, none) {
    var table = el("table", { class: "usage-table" },
      el("thead", null, el("tr", null, [keyName, "Sessions", "Tokens in / out", "Cost"].map(function (h) { return el("th", { text: h }); }))));
    var tbody = el("tbody");
    rows.forEach(function (r) {
      tbody.appendChild(el("tr", null, el("td", { class: "bidi", text: visible(r.key === null ? (none || "(none)") : r.key) }),
        el("td", { text: fmtCount(r.sessions) }), el("td", { text: fmtTokens(r.input_tokens) + " / " + fmtTokens(r.output_tokens) }),
        el("td", { text: fmtCost(r.estimated_cost_usd) })));
    });
    table.appendChild(tbody);
    return el("div", { class: "table-box" }, table);
  }
  // "1 session", "2 sessions", "1,204 messages".
  function counted(n, noun) { return fmtCount(n) + " " + noun + (n === 1 ? "" : "s"); }
  // Days, weeks or months without sessions are shown as empty bars, so the time axis is even.
  // Up to FILLED_MOST bars: a longer span (all time, per day, over years) shows the periods with
  // sessions only, the newest among them (filled, it was cut at the cap, its newest days left out).
  var FILLED_MOST = 1000;
  function fillPeriods(rows, by) {
    if (rows.length < 2 || (by !== "day" && by !== "week" && by !== "month")) return rows;
    var byKey = {};
    rows.forEach(function (r) { byKey[r.key] = r; });
    var out = [];
    var at = new Date(rows[0].key + (by === "month" ? "-01" : "") + "T00:00:00Z");
    var last = rows[rows.length - 1].key;
    for (var i = 0; i < FILLED_MOST; i++) {
      var key = at.toISOString().slice(0, by === "month" ? 7 : 10);
      out.push(byKey[key] || { key: key, sessions: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, estimated_cost_usd: null });
      if (key >= last) return out;
      if (by === "month") at.setUTCMonth(at.getUTCMonth() + 1); else at.setUTCDate(at.getUTCDate() + (by === "week" ? 7 : 1));
    }
    return rows;
  }
  // Days, weeks and months of the reader's own time zone; UTC once the server has not known it.
  var usageZone = shownZone;
  function renderUsage(params, quiet, token) {
    var since = params.get("since") || "30d";
    // The time axis groups by day, week or month (the selector's choices); anything else is a day.
    var by = params.get("by");
    if (by !== "week" && by !== "month") by = "day";
    var only = params.get("origin") || "";
    var zone = usageZone;
    var q = function (group) { return "/api/usage?by=" + group + "&since=" + encodeURIComponent(since) + (zone ? "&tz=" + encodeURIComponent(zone) : "") + (only ? "&origin=" + encodeURIComponent(only) : ""); };
    return Promise.all([api(q(by)), api(q("model")), api(q("source")), origins()]).then(function (res) {
      // A store that sync fills: its origins too (the files of the hosts).
      if (res[3].length === 0) return res;
      return api(q("origin")).then(function (byOrigin) { return res.concat([byOrigin]); });
    }).then(whileShown(token, function (res) {
      var view = el("section", { class: "view view-usage", "aria-label": "Usage" });
      nameTab("Usage");
      var period = el("select", { "aria-label": "Period", name: "since" });
      [["7d", "Last 7 days"], ["30d", "Last 30 days"], ["90d", "Last 90 days"], ["365d", "Last year"], ["all", "All time"]].forEach(function (o) {
        period.appendChild(el("option", { value: o[0], text: o[1], selected: o[0] === since }));
      });
      var group = el("select", { "aria-label": "Group by", name: "by" });
      ["day", "week", "month"].forEach(function (g) { group.appendChild(el("option", { value: g, text: "Per " + g, selected: g === by })); });
      // On a store that sync fills: one origin's usage.
      var origin = originSelect(res[3], only);
      var form = el("form", { class: "filters" }, period, group, origin);
      form.addEventListener("change", function () {
        var next = new URLSearchParams({ since: period.value, by: group.value });
        if (origin && origin.value) next.set("origin", origin.value);
        location.hash = hashFor("/usage", next);
      });
      view.appendChild(form);
      // No session in the period: said, where empty charts would show axes up to "$0.0000".
      if (res[0].rows.length === 0) {
        view.appendChild(el("p", { class: "empty", id: "usage-none", text: "No usage in this period." }));
        announce("Usage: no usage in this period", quiet);
        swap(view, quiet);
        drawnFrom(res.map(versionOf));
        return;
      }
      var tokens = [
        { name: "input", value: function (r) { return r.input_tokens; }, format: fmtTokens, whole: true },
        { name: "output", value: function (r) { return r.output_tokens; }, format: fmtTokens },
      ];
      var cost = [{ name: "estimated cost", value: function (r) { return r.estimated_cost_usd || 0; }, format: fmtCost }];
      var key = function (r) { return r.key === null ? "(none)" : visible(r.key); };
      var total = res[0].rows.reduce(function (a, r) { return a + r.input_tokens + r.output_tokens; }, 0);
      var totalCost = res[0].rows.reduce(function (a, r) { return a + (r.estimated_cost_usd || 0); }, 0);
      announce("Usage: " + fmtCount(total) + " tokens", quiet);
      view.appendChild(el("p", { class: "totals", text: fmtCount(total) + " tokens \u00B7 " + fmtCost(totalCost) + " estimated \u00B7 " + counted(res[0].rows.reduce(function (a, r) { return a + r.sessions; }, 0), "session") }));
      var periods = fillPeriods(res[0].rows, by);
      view.appendChild(el("div", { class: "usage-pair charts", id: "usage-time" }, barChart(periods, key, tokens, "Tokens per " + by), barChart(periods, key, cost, "Cost per " + by)));
      view.appendChild(el("details", { class: "usage-detail" }, el("summary", { text: "Table per " + by + " \u00B7 " + res[0].time_zone }), usageTable(res[0].rows, by)));
      view.appendChild(el("div", { class: "usage-pair" }, barChart(res[1].rows, key, tokens, "Tokens per model"), usageTable(res[1].rows, "model")));
      view.appendChild(el("div", { class: "usage-pair" }, barChart(res[2].rows, key, tokens, "Tokens per source"), usageTable(res[2].rows, "source")));
      if (res[4]) {
        var originKey = function (r) { return r.key === null ? "(not synced)" : r.key; };
        view.appendChild(el("div", { class: "usage-pair", id: "usage-origin" }, barChart(res[4].rows, originKey, tokens, "Tokens per origin"), usageTable(res[4].rows, "origin", "(not synced)")));
      }
      swap(view, quiet);
      drawnFrom(res.map(versionOf));
    })).catch(whileShown(token, function (error) {
      if (zone && /^tz: /.test(String(error && error.message))) {
        usageZone = "";
        return renderUsage(params, quiet, token);
      }
      showError(error);
    }));
  }

  // -- Page swap, keyboard, live updates ---------------------------------
  // A folded part is named by its place (message, kind, position), so a live refresh can
  // open again what the reader had opened.
  function foldKey(node) {
    var article = node.closest("article");
    var siblings = article ? article.querySelectorAll("details") : app.querySelectorAll("details");
    return (article ? article.id : "view") + ":" + Array.prototype.indexOf.call(siblings, node);
  }
  // Puts view in place of the one shown. Drawn again with news (quiet), the reader keeps their
  // place; a view they come back to puts them where they were (and returns that place); any
  // other starts at the top.
  function swap(view, quiet, unfinished) {
    var focus = focusToKeep(quiet);
    var here = quiet ? placeNow() : null;
    var place = quiet ? null : placeFor(viewToken);
    var opened = {};
    if (quiet) {
      var was = app.querySelectorAll("details[open]");
      for (var i = 0; i < was.length; i++) opened[foldKey(was[i])] = true;
    }
    clear(app);
    app.appendChild(view);
    if (quiet) {
      var now = app.querySelectorAll("details");
      for (var j = 0; j < now.length; j++) if (opened[foldKey(now[j])]) now[j].open = true;
      scrollToPlace(here);
      markSelected();
    }
    else { selected = -1; scrollToPlace(place || { scroll: 0 }); }
    if (focus) focusIn(view, (place && place.focus) || focus.key);
    drawnToken = viewToken;
    if (!quiet) downWaited();
    document.body.setAttribute("data-view", route().view);
    if (!unfinished) markReady();
    return place;
  }
  // The focus, when a view is drawn in place of the one that has it (on a filter, a row, a pager
  // button) or after the reader moved with nothing focused (Back, Escape): it goes to the same
  // control in the new view, to where the reader was in an entry they come back to, else to the
  // view's heading. Never left on the page's top, from where Tab starts over.
  var movedToken = 0;
  function focusToKeep(quiet) {
    var at = document.activeElement;
    if (at && at !== document.body && app.contains(at)) return { key: focusKey(at, quiet) };
    return !quiet && movedToken === viewToken && (!at || at === document.body) ? { key: null } : null;
  }
  // How to find a control again in a view drawn anew: its id or its name; a link by its address
  // only in the same view drawn again (another view may link the same place elsewhere).
  function focusKey(node, sameView) {
    if (node.id) return "#" + CSS.escape(node.id);
    if (node.name) return node.tagName.toLowerCase() + "[name=\"" + CSS.escape(node.name) + "\"]";
    var href = node.tagName === "A" && node.getAttribute("href");
    return sameView && href ? "a[href=\"" + CSS.escape(href) + "\"]" : null;
  }
  function focusIn(view, key) {
    var target = key ? app.querySelector(key) : null;
    if (target) target.focus({ preventScroll: true });
    if (target && document.activeElement === target) return;
    var heading = view.querySelector("h1[tabindex]") || view;
    if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: true });
  }
  // Where the reader is: the scroll offset, and in a transcript the message at the top of the
  // window and where it starts. A message out of view is drawn only once scrolled to (the CSS's
  // content-visibility), its height guessed until then: in a transcript drawn anew the same
  // offset would show another message, the same message at the same place does not.
  function placeNow() {
    var list = app.querySelectorAll("#messages > article");
    var low = 0, high = list.length - 1, first = -1;
    while (low <= high) {
      var middle = (low + high) >> 1;
      if (list[middle].getBoundingClientRect().bottom > 0) { first = middle; high = middle - 1; } else low = middle + 1;
    }
    var anchor = first < 0 ? null : { id: list[first].id, top: list[first].getBoundingClientRect().top };
    return { scroll: window.scrollY, anchor: anchor };
  }
  function scrollToPlace(place) {
    var node = place.anchor && document.getElementById(place.anchor.id);
    if (node) layOutAbove(node);
    window.scrollTo(0, place.scroll);
    if (node) window.scrollBy(0, node.getBoundingClientRect().top - place.anchor.top);
  }
  // Lays out a transcript's message and those above it up to twice the window's height, before
  // the page is scrolled to it: the messages in view then have their real heights, and those
  // that get theirs later are above them (the browser's scroll anchoring keeps the view still).
  function layOutAbove(node) {
    var height = 0;
    for (var at = node; at && height < 2 * window.innerHeight; at = at.previousElementSibling) {
      at.classList.add("laid-out");
      height += at.getBoundingClientRect().height;
    }
  }
  function rows() { return app.querySelectorAll(".row"); }
  function markSelected(stay) {
    var list = rows();
    for (var i = 0; i < list.length; i++) list[i].classList.toggle("selected", i === selected);
    if (list[selected] && !stay) list[selected].scrollIntoView({ block: "nearest" });
  }
  // The row the keys move to (j and k, or the arrows from the search box or a row) gets the
  // focus on its link: the next arrow, Enter, Tab and a screen reader go on from there.
  function selectRow(index) {
    var list = rows();
    if (list.length === 0) return;
    selected = Math.max(0, Math.min(list.length - 1, index));
    var link = list[selected].querySelector("a");
    if (link) link.focus({ preventScroll: true });
    markSelected();
  }
  // The row holding node (a row's link the reader reached), or -1.
  function rowOf(node) {
    var row = node && node.closest && node.closest(".row");
    return row ? Array.prototype.indexOf.call(rows(), row) : -1;
  }
  // A row reached with Tab (or given the focus back) is the selected one: j and k go on from it.
  // Not scrolled to: Tab scrolls by itself, and a view come back to is where the reader left it.
  app.addEventListener("focusin", function (e) {
    var at = rowOf(e.target);
    if (at < 0 || at === selected) return;
    selected = at;
    markSelected(true);
  });
  // Back only to an entry of this page (a deep link opened fresh has none before it).
  function goBack() {
    if (history.state && history.state.hermesDepth > 0) history.back();
    else location.hash = "#/";
  }
  // A key that is part of an input method's composition (the arrows choosing among CJK
  // candidates, Enter taking one, Escape giving it up): the input method's, not the page's.
  function composing(e) { return e.isComposing || e.keyCode === 229; }
  document.addEventListener("keydown", function (e) {
    if (composing(e)) return;
    var typing = e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT" || e.target.tagName === "TEXTAREA");
    if (e.key === "Escape") {
      if (typing) { e.target.blur(); return; }
      if (route().view === "sessions") return;
      goBack();
      return;
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "/") { e.preventDefault(); input.focus(); input.select(); return; }
    var list = rows();
    // The arrows move between rows once on one; elsewhere they scroll the page.
    var onRow = rowOf(e.target) >= 0;
    var down = e.key === "j" || (e.key === "ArrowDown" && onRow);
    var up = e.key === "k" || (e.key === "ArrowUp" && onRow);
    if (down || up) {
      if (list.length === 0) return;
      e.preventDefault();
      // Up from the first row: back to the search box, where ArrowDown came from.
      if (e.key === "ArrowUp" && selected === 0) { input.focus(); return; }
      selectRow(down ? selected + 1 : selected - 1);
    } else if (e.key === "Enter" && list[selected] && !e.target.closest("a, button, summary")) {
      // Only with nothing else to press: a link or a button with the focus (a row's link, a
      // pager button, an export) is what Enter presses.
      var link = list[selected].querySelector("a");
      if (link) location.hash = link.getAttribute("href");
    }
  });
  input.addEventListener("input", onType);
  input.addEventListener("compositionend", onType);
  input.addEventListener("keydown", function (e) {
    if (composing(e)) return;
    if (e.key === "Enter") { clearTimeout(searchTimer); searchTyped(); }
    if (e.key === "ArrowDown") downFromBox(e);
  });
  // ArrowDown from the search box goes to the first row of the results of what the box holds.
  // Typed but not searched for yet: searched for at once (as Enter does); its results not drawn
  // yet: the first of them gets the focus once they are, not a row of the view still shown.
  function downFromBox(e) {
    if (searchTimer) { clearTimeout(searchTimer); searchTyped(); }
    if (location.hash !== renderedKey || drawnToken !== viewToken) { e.preventDefault(); downFor = location.hash; return; }
    if (rows().length) { e.preventDefault(); selectRow(0); }
  }
  // The address whose view ArrowDown from the search box waits for (see downFromBox), or null.
  var downFor = null;
  // A view drawn anew: the first row gets the focus when ArrowDown waited for this view and the
  // reader is still in the search box.
  function downWaited() {
    var wanted = downFor === location.hash && document.activeElement === input;
    downFor = null;
    if (wanted && rows().length) selectRow(0);
  }
  // A download the server refuses (an export with a session id no export can carry) fails in
  // the browser's downloads without a reason: the page asks the server too, and says why.
  app.addEventListener("click", function (e) {
    var link = e.target && e.target.closest && e.target.closest("a[download]");
    if (link) checkDownload(link, viewToken);
  });
  function checkDownload(link, token) {
    var href = link.getAttribute("href");
    fetch(href, { method: "HEAD", credentials: "same-origin" }).then(function (head) {
      if (head.ok) return;
      return fetch(href, { headers: { accept: "application/json" }, credentials: "same-origin" }).then(function (response) {
        // Whole by now (the file changed meanwhile): the download itself is the answer.
        if (response.ok) { if (response.body) response.body.cancel(); return; }
        return response.json().catch(function () { return {}; }).then(whileShown(token, function (body) {
          var message = (body && body.error && body.error.message) || ("HTTP " + response.status);
          downloadRefused(link, "The download failed: " + message);
        }));
      });
    }).catch(function () {});
  }
  function downloadRefused(link, message) {
    var holder = link.closest("form, .actions") || link.parentNode;
    var old = holder.parentNode.querySelector(".export-error");
    if (old) old.remove();
    holder.insertAdjacentElement("afterend", el("p", { class: "export-error", role: "alert", text: visible(message) }));
  }
  app.addEventListener("click", function (e) {
    var jump = e.target && e.target.closest && e.target.closest("[data-jump]");
    if (!jump) return;
    e.preventDefault();
    var node = document.getElementById("m-" + jump.getAttribute("data-jump"));
    if (node) { layOutAbove(node); node.scrollIntoView({ block: "center" }); }
  });
  // Each entry of this page knows how many of the page's own come before it (for Esc), and has a
  // name of its own (hermesEntry) its place is kept under.
  function newEntryName() { return Date.now().toString(36) + "." + Math.random().toString(36).slice(2); }
  // The name of the history entry shown, given one when it has none (an entry made before).
  function entryName() {
    var state = history.state || {};
    if (typeof state.hermesEntry === "string") return state.hermesEntry;
    var named = { hermesDepth: typeof state.hermesDepth === "number" ? state.hermesDepth : 0, hermesEntry: newEntryName() };
    history.replaceState(named, "");
    return named.hermesEntry;
  }
  var entry = entryName();
  var depth = typeof history.state.hermesDepth === "number" ? history.state.hermesDepth : 0;
  // Where the reader was in each entry of this page, by its name (with its depth): Back (or
  // Forward) to an entry puts them there again, with the search hits they had loaded, and so does
  // a reload of the page (they are kept in the tab's sessionStorage too). The page does it
  // itself, as it draws a view only once its answer comes, after the browser would have scrolled.
  var PLACES_KEY = "hermes-state-places";
  var places = readPlaces();
  if ("scrollRestoration" in history) history.scrollRestoration = "manual";
  function readPlaces() {
    try {
      var kept = JSON.parse(sessionStorage.getItem(PLACES_KEY) || "{}");
      return kept && typeof kept === "object" && !Array.isArray(kept) ? kept : {};
    } catch (e) { return {}; }
  }
  // Storage refused (full, turned off): the places stay in this page's memory only.
  function keepPlaces() {
    try { sessionStorage.setItem(PLACES_KEY, JSON.stringify(places)); } catch (e) { /* memory only */ }
  }
  function placeOf(name) { return Object.prototype.hasOwnProperty.call(places, name) ? places[name] : null; }
  function leavePlace() {
    // The entry's own view not drawn yet (the reader moved on before it came): no place to keep.
    if (drawnToken !== viewToken || showsError()) { delete places[entry]; keepPlaces(); return; }
    var place = placeNow();
    place.hits = app.querySelectorAll(".view-search .hit").length;
    var at = document.activeElement;
    place.focus = at && app.contains(at) ? focusKey(at, true) : null;
    // The messages a transcript shows (the pages the reader loaded), for windowFor.
    if (shown && app.querySelector(".view-session") && shown.first !== undefined) place.window = { id: shown.id, first: shown.first, count: shown.count };
    place.depth = depth;
    places[entry] = place;
    keepPlaces();
  }
  // A new entry replaces those that were Forward of the one left, and their places.
  function forgetPlacesFrom(first) {
    for (var name in places) if (!(places[name] && places[name].depth < first)) delete places[name];
    keepPlaces();
  }
  window.addEventListener("hashchange", function () {
    leavePlace();
    var revisited = history.state && typeof history.state.hermesDepth === "number";
    if (revisited) { depth = history.state.hermesDepth; entry = entryName(); }
    else { depth += 1; entry = newEntryName(); history.replaceState({ hermesDepth: depth, hermesEntry: entry }, ""); forgetPlacesFrom(depth); }
    render({ place: revisited ? placeOf(entry) : null, moved: true });
  });
  // Leaving the page (a reload, another site): where the reader was is kept for their return.
  window.addEventListener("pagehide", function () { if (renderedKey === location.hash) leavePlace(); });

  // One stream for all the tabs of this server: a browser keeps six connections per server over
  // HTTP/1.1, and a seventh tab holding its own would never load. The tab that holds the lock
  // reads the stream and passes its events on to the others; when it goes, the lock (and the
  // stream) passes to another tab.
  function onChange() {
    clearTimeout(refreshTimer);
    sourcesCache = null;
    originsCache = null;
    refreshTimer = setTimeout(refreshView, 250);
  }
  // The view drawn again with the store's news. One that shows an error (the file could not be
  // read, the session was not there yet) is drawn anew, as when first opened.
  function refreshView() {
    if (location.hash !== renderedKey) return;
    render({ quiet: !showsError() });
  }
  // Whether the live stream has been on, and went off since: the server may have been started
  // again, with other settings (read-only now, another page size).
  var liveWasOn = false;
  var liveDropped = false;
  function liveOn(on, failed) {
    if (on && liveDropped) readConfigAgain();
    if (on) { liveWasOn = true; liveDropped = false; } else if (liveWasOn) liveDropped = true;
    live.classList.toggle("on", on);
    live.classList.toggle("failed", !on && !!failed);
    // Said in words, not by the colour alone: a stopped server shows "offline".
    live.textContent = on ? "\u25cf live" : failed ? "\u25cf failed" : "\u25cf offline";
    live.title = on ? "Live: updates as the file changes" : failed ? "The server cannot read the store; retrying" : "Live updates disconnected; retrying";
  }
  // The server's settings read again (the live stream came back): what depends on them (Rename
  // and Delete, the transcript's page size) is drawn again when they changed.
  function readConfigAgain() {
    api("/api/config").then(function (c) {
      var changed = JSON.stringify([c.allowWrites, c.limits]) !== JSON.stringify([config.allowWrites, config.limits]);
      config = c;
      if (changed) onChange();
    }).catch(function () { /* unreachable again: read on the next return */ liveDropped = true; });
  }
  // How long a lost live stream waits before it asks again: soon after the first loss (a server
  // started again is back within a second), twice as long after each further one, up to 3 s (a
  // server gone for good, or one refusing streams, is not asked more often than that).
  var LIVE_RETRY_FIRST_MS = 250;
  var LIVE_RETRY_MAX_MS = 3000;
  function connectLive() {
    if (!window.EventSource) return;
    var channel = window.BroadcastChannel ? new BroadcastChannel("hermes-state-live") : null;
    var source = null;
    var retry = 0;
    var retryMs = LIVE_RETRY_FIRST_MS;
    var release = null;
    var waiting = null;
    // liveVersion: the newest version of the data heard of, from this tab's stream or the
    // leader's: a stream that (re)starts on another one missed a change while none was open.
    function tell(kind) { if (channel) channel.postMessage({ kind: kind, version: liveVersion }); }
    function told(e) { try { return JSON.parse(e.data).version; } catch (error) { return null; } }
    function lead() {
      source = new EventSource("/api/events");
      source.addEventListener("hello", function (e) {
        var now = told(e);
        var missed = liveVersion !== null && now !== liveVersion;
        liveVersion = now;
        retryMs = LIVE_RETRY_FIRST_MS;
        liveOn(true);
        // A view that got an error while no stream was open (the server stopped, then started
        // again) is asked for again, even when the data did not change meanwhile.
        tell(missed ? "change" : "on");
        // A view drawn from an answer read before a write the stream starts after is drawn again.
        if (missed || showsError()) onChange();
        else checkDrawn();
      });
      source.addEventListener("change", function (e) { liveVersion = told(e); liveOn(true); onChange(); tell("change"); });
      // The server cannot read the store (a database gone): not live until it can again.
      source.addEventListener("failure", function () { liveOn(false, true); tell("failed"); });
      // The store answers again: a view that got an error meanwhile is asked for again.
      source.addEventListener("recovered", function (e) { liveVersion = told(e); liveOn(true); onChange(); tell("recovered"); });
      source.onerror = function () {
        liveOn(false);
        tell("off");
        // Asked for again here, not by the browser: it waits the server's fixed retry time after a
        // dropped stream, and gives up for good after an error status (a 503: too many streams
        // open, a proxy's answer).
        if (!source) return;
        source.close();
        source = null;
        retry = setTimeout(function () { retry = 0; if (!source) lead(); }, retryMs);
        retryMs = Math.min(retryMs * 2, LIVE_RETRY_MAX_MS);
      };
    }
    function stop() {
      if (retry) { clearTimeout(retry); retry = 0; }
      if (waiting) { waiting.abort(); waiting = null; }
      if (source) { source.close(); source = null; }
      if (release) { release(); release = null; }
    }
    if (channel) {
      channel.onmessage = function (e) {
        var kind = e.data && e.data.kind;
        if (e.data && e.data.version !== null && e.data.version !== undefined) liveVersion = e.data.version;
        if (kind === "change" || kind === "recovered" || (kind === "on" && showsError())) { liveOn(true); onChange(); }
        else if (kind === "on" || kind === "off" || kind === "failed") { liveOn(kind === "on", kind === "failed"); checkDrawn(); }
        // A tab that just opened asks whether the stream is up.
        else if (kind === "ask" && source) tell(source.readyState === 1 ? "on" : "off");
      };
    }
    function elect() {
      if (!channel || !navigator.locks) { lead(); return; }
      waiting = new AbortController();
      navigator.locks.request("hermes-state-live", { signal: waiting.signal }, function () {
        waiting = null;
        lead();
        return new Promise(function (done) { release = done; });
      }).catch(function () { /* given up when the page went away */ });
      tell("ask");
    }
    elect();
    // Leaving the page closes the stream and hands the lead over at once.
    window.addEventListener("pagehide", stop);
    window.addEventListener("pageshow", function (e) { if (e.persisted) elect(); });
  }

  api("/api/config").then(function (c) { config = c; }).catch(function () {}).then(function () {
    // A reload (or a return from another site) puts the reader where they were.
    render({ place: placeOf(entry) });
    connectLive();
  });
})();
`;
