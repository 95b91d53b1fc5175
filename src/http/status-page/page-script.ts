import { SafeHtml } from './safe-html.js';

/**
 * The page's only script (inline, allowed by the CSP nonce). Every 15 s it fetches the page again and swaps in
 * the data sections, but leaves alone any section where a person is busy (a field has focus, a comment is
 * typed, a silence form is open), so a half-typed comment is never lost. It also remembers the name typed in
 * a silence form (localStorage) to fill the next one. The page works without it: forms post and redirect.
 */
export const PAGE_SCRIPT = new SafeHtml(`
(function () {
  'use strict';
  var INTERVAL_MS = 15000;
  var NAME_KEY = 'transfer-watch.author';
  var stateLine = document.getElementById('refresh-state');
  function busy(section) {
    var active = document.activeElement;
    if (active && active !== document.body && section.contains(active)) return true;
    if (section.querySelector('details[open]')) return true;
    var comments = section.querySelectorAll('input[name=comment]');
    for (var i = 0; i < comments.length; i++) if (comments[i].value !== '') return true;
    return false;
  }
  function fillAuthors() {
    var name = '';
    try { name = localStorage.getItem(NAME_KEY) || ''; } catch (e) { name = ''; }
    var fields = document.querySelectorAll('input[name=author]');
    for (var i = 0; i < fields.length; i++) if (fields[i].value === '') fields[i].value = name;
  }
  document.addEventListener('submit', function (ev) {
    var author = ev.target && ev.target.querySelector ? ev.target.querySelector('input[name=author]') : null;
    if (author) { try { localStorage.setItem(NAME_KEY, author.value); } catch (e) { /* private mode */ } }
  });
  function refresh() {
    return fetch(location.pathname, { cache: 'no-store', credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.text();
      })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, 'text/html');
        var paused = [];
        var sections = document.querySelectorAll('[data-section]');
        for (var i = 0; i < sections.length; i++) {
          var el = sections[i];
          var next = doc.querySelector('[data-section="' + el.getAttribute('data-section') + '"]');
          if (!next) continue;
          if (busy(el)) { paused.push(el.getAttribute('data-section')); continue; }
          el.replaceWith(document.importNode(next, true));
        }
        fillAuthors();
        var when = new Date().toLocaleTimeString([], { timeZoneName: 'short' });
        stateLine.textContent = 'Updated ' + when + (paused.length ? '; not refreshing ' + paused.join(', ') + ' while you use it.' : '.');
      })
      .catch(function (err) {
        stateLine.textContent = 'Refresh failed (' + err.message + '); retrying in 15 s.';
      });
  }
  fillAuthors();
  window.transferWatchRefresh = refresh;
  setInterval(refresh, INTERVAL_MS);
})();
`);
