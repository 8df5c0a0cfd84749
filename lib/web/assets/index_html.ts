/**
 * The page's HTML shell: a header with the search box, and the element the
 * script fills. No inline script or style (the Content-Security-Policy
 * forbids both).
 *
 * @module
 */

/** The HTML of `/`. */
export const INDEX_HTML_TEXT = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>hermes-state</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
</head>
<body>
<header class="top">
  <a class="brand" href="#/">hermes-state</a>
  <nav><a href="#/" data-nav="sessions">Sessions</a><a href="#/usage" data-nav="usage">Usage</a></nav>
  <input id="q" type="search" dir="auto" placeholder="Search messages ( / )" autocomplete="off" spellcheck="false" aria-label="Search messages">
  <span id="live" class="live" title="Live updates: connecting">● connecting</span>
</header>
<p id="status" class="visually-hidden" role="status"></p>
<main id="app"></main>
</body>
</html>
`;
