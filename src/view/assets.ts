/**
 * The viewer's only script and stylesheet, served as /app.js and /app.css (the Content-Security-Policy
 * allows scripts and styles from the viewer itself and nothing inline, so no injected markup could run).
 *
 * The script does one thing: on a page rendered with `data-live`, it polls the page's change token and,
 * when it changes, updates the page in place. A run's page (`data-rows`) asks only for what changed: it
 * sends the digests of the rows it shows and gets back the part above the attempts, the page links, and
 * the markup of only the rows it does not have (the others it keeps, in the order given). Other pages
 * (the list of runs, a comparison: bounded, and small) are fetched again and their `<main>` swapped. New
 * markup comes from the viewer (escaped like any page) and is parsed by DOMParser, which runs no script.
 */

import { STYLESHEET } from '../render/styles.js';

export const APP_JS = `'use strict';
(function () {
  var body = document.body;
  var url = body.getAttribute('data-live');
  if (!url) return;
  var rowsUrl = body.getAttribute('data-rows');
  var token = body.getAttribute('data-token');
  var intervalMs = Number(body.getAttribute('data-poll-ms')) || 2000;
  var state = document.getElementById('live-state');
  function show(text) { if (state) state.textContent = text; }
  function parse(markup) { return new DOMParser().parseFromString(markup, 'text/html'); }
  function replace(id, markup) {
    var current = document.getElementById(id);
    var fresh = parse(markup).getElementById(id);
    if (current && fresh) current.replaceWith(document.adoptNode(fresh));
  }
  function updated(next) {
    token = next;
    body.setAttribute('data-token', token);
    show('live · updated ' + new Date().toLocaleTimeString());
  }
  function wholePage(next) {
    return fetch(location.href, { cache: 'no-store' })
      .then(function (response) { return response.text(); })
      .then(function (page) {
        var doc = parse(page);
        var fresh = doc.querySelector('main');
        var current = document.querySelector('main');
        if (fresh && current) current.replaceWith(document.adoptNode(fresh));
        updated(doc.body.getAttribute('data-token') || next);
      });
  }
  function changedRows(next) {
    var tbody = document.querySelector('#attempt-table tbody');
    if (!tbody) return wholePage(next);
    var kept = {};
    var have = [];
    Array.prototype.forEach.call(tbody.rows, function (row) {
      var version = row.getAttribute('data-v');
      if (version) { kept[version] = row; have.push(version); }
    });
    var query = new URLSearchParams(location.search);
    query.set('have', have.join('.'));
    return fetch(rowsUrl + '?' + query.toString(), { cache: 'no-store' })
      .then(function (response) {
        if (!response.ok) throw new Error('status ' + response.status);
        return response.json();
      })
      .then(function (change) {
        replace('run-head', change.head);
        replace('pages', change.pages);
        var rows = change.rows.map(function (entry) {
          if (typeof entry === 'string') return kept[entry];
          return parse('<table><tbody>' + entry.html + '</tbody></table>').querySelector('tr');
        });
        var fresh = document.createElement('tbody');
        rows.forEach(function (row) { if (row) fresh.appendChild(document.adoptNode(row)); });
        tbody.replaceWith(fresh);
        updated(change.token);
      });
  }
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
        return rowsUrl ? changedRows(next.trim()) : wholePage(next.trim());
      })
      .catch(function () { show('live · viewer unreachable'); })
      .then(function () { busy = false; });
  }
  setInterval(tick, intervalMs);
})();
`;

/** The stylesheet the report inlines, served as /app.css. */
export const APP_CSS = STYLESHEET;
