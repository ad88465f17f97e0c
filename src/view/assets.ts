/**
 * The viewer's only script and stylesheet, served as /app.js and /app.css (the Content-Security-Policy
 * allows scripts and styles from the viewer itself and nothing inline, so no injected markup could run).
 *
 * The script does one thing: on a page rendered with `data-live`, it polls the page's change token and,
 * when it changes, fetches the same URL again and swaps the page's `<main>`. The new markup comes from the
 * viewer (escaped like any page) and is parsed by DOMParser, which runs no script.
 */

import { STYLESHEET } from '../render/styles.js';

export const APP_JS = `'use strict';
(function () {
  var body = document.body;
  var url = body.getAttribute('data-live');
  if (!url) return;
  var token = body.getAttribute('data-token');
  var intervalMs = Number(body.getAttribute('data-poll-ms')) || 2000;
  var state = document.getElementById('live-state');
  function show(text) { if (state) state.textContent = text; }
  show('live');
  var busy = false;
  function tick() {
    if (busy) return;
    busy = true;
    fetch(url, { cache: 'no-store' })
      .then(function (response) {
        if (!response.ok) throw new Error('status ' + response.status);
        return response.text();
      })
      .then(function (next) {
        if (next.trim() === token) return;
        return fetch(location.href, { cache: 'no-store' })
          .then(function (response) { return response.text(); })
          .then(function (page) {
            var doc = new DOMParser().parseFromString(page, 'text/html');
            var fresh = doc.querySelector('main');
            var current = document.querySelector('main');
            if (fresh && current) current.replaceWith(document.adoptNode(fresh));
            token = doc.body.getAttribute('data-token') || next.trim();
            body.setAttribute('data-token', token);
            show('live · updated ' + new Date().toLocaleTimeString());
          });
      })
      .catch(function () { show('live · viewer unreachable'); })
      .then(function () { busy = false; });
  }
  setInterval(tick, intervalMs);
})();
`;

/** The stylesheet the report inlines, served as /app.css. */
export const APP_CSS = STYLESHEET;
