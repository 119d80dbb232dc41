import { Router } from 'express';
import { ASSET_PATHS } from './views/layout.js';

/**
 * The page's one stylesheet and one small script, served from /admin/assets so the content security policy
 * can forbid inline code. Neither holds anything secret: they are served without a login (the login page
 * needs the stylesheet too).
 */

const STYLESHEET = `
:root {
  --ink: #1b1f24; --muted: #4b5563; --line: #d0d7de; --paper: #ffffff; --canvas: #f5f7f9;
  --accent: #0b57d0; --accent-ink: #ffffff; --focus: #b3261e;
  --good: #1e7a3a; --warn: #a15c00; --bad: #b3261e; --neutral: #5b6572; --faint: #9aa4b1;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.5; color: var(--ink);
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; background: var(--canvas); }
.wrap { max-width: 76rem; margin: 0 auto; padding: 0 1rem; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
main:focus { outline: none; }
.skip-link { position: absolute; left: 0.5rem; top: -3rem; background: var(--paper); padding: 0.5rem 1rem; z-index: 10; }
.skip-link:focus { top: 0.5rem; }
.visually-hidden { position: absolute !important; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.site-header { background: var(--paper); border-bottom: 1px solid var(--line); margin-bottom: 1.5rem; }
.header-row { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem 1.5rem; padding-block: 0.75rem; }
.brand { margin: 0; font-weight: 700; }
.brand a { color: var(--ink); text-decoration: none; }
.brand-sub { color: var(--muted); font-weight: 400; }
nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; list-style: none; margin: 0; padding: 0; align-items: center; }
nav a[aria-current="page"] { font-weight: 700; color: var(--ink); }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 1rem; }
h2 { font-size: 1.25rem; margin: 0 0 0.75rem; }
h3 { font-size: 1.05rem; margin: 0 0 0.25rem; }
.crumbs { margin: 0 0 0.5rem; color: var(--muted); }
.card { background: var(--paper); border: 1px solid var(--line); border-radius: 6px; padding: 1rem 1.25rem; margin-bottom: 1.25rem; }
.grid-2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); gap: 1.25rem; }
.grid-2 > .card { margin-bottom: 0; }
.grid-2 + .card, .grid-2 + section { margin-top: 1.25rem; }
.hint { color: var(--muted); font-size: 0.9rem; }
.problem-text { color: var(--bad); }
.next-steps { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.75rem; }
.notice, .problem { border-left: 6px solid; padding: 0.5rem 1rem; margin-bottom: 1rem; background: var(--paper); }
.notice { border-color: var(--good); }
.problem { border-color: var(--bad); }
.notice p, .problem p { margin: 0.25rem 0; }
.badge { display: inline-block; font-size: 0.8rem; font-weight: 600; padding: 0.1rem 0.5rem; border-radius: 999px;
  border: 2px solid currentColor; vertical-align: middle; background: var(--paper); }
.badge-connected { color: var(--good); }
.badge-disconnected, .badge-key_invalid, .badge-pending { color: var(--bad); }
.badge-sandbox { color: var(--warn); border-style: dashed; }
.badge-stale { color: var(--warn); }
.tabs ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; list-style: none; margin: 0 0 1rem; padding: 0;
  border-bottom: 1px solid var(--line); }
.tabs a { display: inline-block; padding: 0.4rem 0.1rem; text-decoration: none; }
.tabs a[aria-current="page"] { font-weight: 700; color: var(--ink); border-bottom: 3px solid var(--accent); }
.list-search { margin: 0.5rem 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.9em; overflow-wrap: anywhere; }
button, .button { font: inherit; display: inline-block; cursor: pointer; padding: 0.45rem 1rem; border-radius: 4px;
  border: 2px solid var(--accent); background: var(--accent); color: var(--accent-ink); text-decoration: none; line-height: 1.3; }
button.secondary, .button.secondary { background: var(--paper); color: var(--accent); }
button.danger, .button.danger { background: var(--bad); border-color: var(--bad); color: #fff; }
.danger-zone { border-color: var(--bad); }
.link-button { background: none; border: none; color: var(--accent); padding: 0; text-decoration: underline; }
.inline-form { display: inline; margin: 0; }
.stack > * + * { margin-top: 0.75rem; }
.field label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
.field .hint { margin: 0.25rem 0 0; }
input[type="text"], input[type="password"] { font: inherit; width: 100%; max-width: 32rem; padding: 0.45rem 0.6rem;
  border: 2px solid var(--neutral); border-radius: 4px; }
input[aria-invalid="true"] { border-color: var(--bad); }
.check { display: inline-flex; gap: 0.5rem; align-items: flex-start; }
.check input { width: 1.1rem; height: 1.1rem; margin-top: 0.2rem; }
.sync-form { display: flex; flex-wrap: wrap; gap: 0.75rem 1.5rem; align-items: center; margin-bottom: 1rem; }
.button-row { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; }
.login { max-width: 28rem; }
.chart { margin: 0; }
.chart figcaption { font-weight: 600; margin-bottom: 0.5rem; }
.chart svg { width: 100%; max-width: 28rem; height: auto; display: block; }
.chart-label, .chart-value { font-size: 18px; fill: var(--ink); font-family: inherit; }
.chart-value { font-variant-numeric: tabular-nums; }
.chart-track { fill: #edf0f3; }
.tone-good { fill: var(--good); } .tone-warn { fill: var(--warn); } .tone-bad { fill: var(--bad); }
.tone-neutral { fill: var(--neutral); } .tone-muted { fill: var(--faint); } .tone-score { fill: var(--accent); }
table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
th, td { text-align: left; vertical-align: top; padding: 0.45rem 0.5rem; border-bottom: 1px solid var(--line); }
thead th { border-bottom: 2px solid var(--ink); }
td.num { font-variant-numeric: tabular-nums; }
progress { width: 8rem; vertical-align: middle; }
.error-list { margin: 0.25rem 0 0; padding-left: 1.1rem; }
.review-item { border-top: 1px solid var(--line); padding-top: 1rem; margin-top: 1rem; }
.review-actions { display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: flex-end; margin-top: 0.75rem; }
.slug-form label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
.slug-row { display: flex; gap: 0.5rem; flex-wrap: wrap; }
.slug-row input { width: 16rem; max-width: 100%; }
.pager { display: flex; gap: 1rem; align-items: center; margin: 0.75rem 0; }
.bulk-form { position: sticky; top: 0; z-index: 5; display: flex; flex-wrap: wrap; gap: 0.75rem 1.5rem; align-items: center;
  background: var(--paper); border: 1px solid var(--line); border-radius: 4px; padding: 0.75rem; margin: 0.75rem 0; }
.review-head { display: flex; gap: 0.75rem; align-items: baseline; }
.review-head h3 { margin: 0; }
.select-box input { margin-top: 0.1rem; }
.plain-list { list-style: none; padding: 0; margin: 0; }
.done-notice { margin: 1rem 0 0; scroll-margin-top: 6rem; }
/* A decision's redirect anchors the next item's first action: room above it for the sticky bulk bar and the message. */
.review-item [id^="act-"] { scroll-margin-top: 17rem; }
.done-row + tr [id^="act-"] { scroll-margin-top: 8rem; }
.done-notice:focus { outline: 3px solid var(--focus); outline-offset: 2px; }
.done-row td { padding: 0; border-bottom: none; }
.plain-list > li + li { margin-top: 0.5rem; }
@media (max-width: 720px) {
  h1 { font-size: 1.35rem; }
  .card { padding: 0.75rem; }
  table.responsive thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.responsive, table.responsive tbody, table.responsive tr, table.responsive th, table.responsive td { display: block; width: 100%; }
  table.responsive tr { border: 1px solid var(--line); border-radius: 4px; margin-bottom: 0.75rem; padding: 0.25rem 0.5rem; }
  table.responsive th, table.responsive td { border: none; padding: 0.2rem 0; }
  table.responsive td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  progress { width: 6rem; }
}
`;

/** Follows running syncs: polls the runs API every few seconds and updates the progress cells in place. */
const SCRIPT = `'use strict';
(function () {
  var box = document.querySelector('[data-runs-url]');
  if (!box || !box.querySelector('[data-active="true"]')) return;
  var url = box.getAttribute('data-runs-url');
  var fmt = new Intl.NumberFormat('en');
  var states = { listing: 'Listing records', processing: 'Processing', done: 'Done', stopped: 'Stopped' };
  function set(row, field, text) {
    var el = row.querySelector('[data-field="' + field + '"]');
    if (el) el.textContent = text;
  }
  function tick() {
    fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (body) {
        if (!body) return;
        var active = false;
        var finished = false;
        body.runs.forEach(function (run) {
          var row = box.querySelector('[data-run-id="' + CSS.escape(run.id) + '"]');
          if (!row) return;
          var running = run.state === 'listing' || run.state === 'processing';
          if (row.getAttribute('data-active') === 'true' && !running) finished = true;
          row.setAttribute('data-active', running ? 'true' : 'false');
          active = active || running;
          set(row, 'state', states[run.state] + (run.state === 'stopped' && run.stoppedReason ? ': ' + run.stoppedReason : ''));
          set(row, 'records', fmt.format(run.totals.records) + ' of ' + fmt.format(run.recordsListed));
          set(row, 'written', fmt.format(run.totals.written));
          set(row, 'unchanged', fmt.format(run.totals.unchanged));
          set(row, 'failed', fmt.format(run.totals.failed));
          var bar = row.querySelector('[data-field="progress"]');
          if (run.batchesTotal === null) {
            set(row, 'progress-text', fmt.format(run.recordsListed) + ' records listed so far');
          } else if (bar) {
            var total = Math.max(run.batchesTotal, 1);
            var done = run.batchesTotal === 0 ? 1 : Math.min(run.batchesDone, total);
            bar.max = total;
            bar.value = done;
            set(row, 'progress-text', fmt.format(run.batchesDone) + ' of ' + fmt.format(run.batchesTotal) +
              ' batches (' + Math.round((done / total) * 100) + '%)');
          }
        });
        if (finished) {
          var note = box.querySelector('[data-field="finished"]');
          if (note) note.hidden = false;
        }
        if (active) setTimeout(tick, 2000);
      })
      .catch(function () { setTimeout(tick, 5000); });
  }
  setTimeout(tick, 2000);
})();
`;

/**
 * Review at scale: shows the "select all" box of a bulk form and keeps it, and the count beside it, in step
 * with the item checkboxes that belong to that form (their `form` attribute names it). The form's buttons are
 * disabled while nothing is selected (without the script they stay enabled and the server says so instead).
 */
const SELECT_SCRIPT = `'use strict';
(function () {
  document.querySelectorAll('[data-select-all]').forEach(function (all) {
    var formId = all.getAttribute('data-select-all');
    var boxes = Array.prototype.slice.call(
      document.querySelectorAll('input[type="checkbox"][form="' + CSS.escape(formId) + '"]'));
    var count = document.querySelector('[data-selected-count="' + CSS.escape(formId) + '"]');
    var form = document.getElementById(formId);
    var buttons = form ? Array.prototype.slice.call(form.querySelectorAll('button[type="submit"]')) : [];
    function update() {
      var n = boxes.filter(function (b) { return b.checked; }).length;
      buttons.forEach(function (b) { b.disabled = n === 0; });
      all.checked = n > 0 && n === boxes.length;
      all.indeterminate = n > 0 && n < boxes.length;
      if (count) count.textContent = n === 0 ? 'None selected.' : n + ' selected.';
    }
    all.addEventListener('change', function () {
      boxes.forEach(function (b) { b.checked = all.checked; });
      update();
    });
    boxes.forEach(function (b) { b.addEventListener('change', update); });
    var box = all.closest('[data-select-all-box]');
    if (box) box.hidden = false;
    update();
  });
})();
`;

/**
 * After a single decision the page comes back with its message before the next item, anchored at that item's
 * first action, which the browser focuses by itself (so it works without this script). Once the browser has
 * moved to the anchor, this puts the message just below the sticky bulk bar with the focused action still in
 * view, and focuses the action (or the message, when no item follows).
 */
const FOCUS_SCRIPT = `'use strict';
(function () {
  var done = document.querySelector('[data-done-notice]');
  if (!done) return;
  function place() {
    var target = document.getElementById(done.getAttribute('data-focus') || '');
    if (!target) {
      target = done;
      done.setAttribute('tabindex', '-1');
    }
    var bar = document.querySelector('.bulk-form');
    var offset = (bar && getComputedStyle(bar).position === 'sticky' ? bar.getBoundingClientRect().height : 0) + 16;
    window.scrollTo(0, Math.max(0, done.getBoundingClientRect().top + window.scrollY - offset));
    if (target.getBoundingClientRect().bottom > window.innerHeight) target.scrollIntoView({ block: 'nearest' });
    if (document.activeElement !== target) target.focus({ preventScroll: true });
  }
  if (document.readyState === 'complete') setTimeout(place, 0);
  else window.addEventListener('load', function () { setTimeout(place, 0); });
})();
`;

/** The router is mounted at /admin; the page links to the full paths. */
const relative = (path: string) => path.replace(/^\/admin/, '');

/**
 * A running preview's section (`data-preview-refresh`, seconds) is fetched again with its page and put in place
 * until the preview is done; a fetch that fails waits and tries again.
 */
const PREVIEW_SCRIPT = `'use strict';
(function () {
  var section = document.querySelector('[data-preview-refresh]');
  if (!section || !window.DOMParser) return;
  var seconds = Number(section.getAttribute('data-preview-refresh')) || 3;
  function tick() {
    fetch(location.pathname + location.search, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (text) {
        if (text === null) return setTimeout(tick, seconds * 2000);
        var fresh = new DOMParser().parseFromString(text, 'text/html').querySelector('[data-preview-section]');
        if (!fresh) return;
        var current = document.querySelector('[data-preview-section]');
        if (!current) return;
        current.replaceWith(document.importNode(fresh, true));
        if (fresh.hasAttribute('data-preview-refresh')) setTimeout(tick, seconds * 1000);
      })
      .catch(function () { setTimeout(tick, seconds * 2000); });
  }
  setTimeout(tick, seconds * 1000);
})();`;

export function assetsRouter(): Router {
  const router = Router();
  router.get(relative(ASSET_PATHS.css), (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('text/css').send(STYLESHEET);
  });
  router.get(relative(ASSET_PATHS.js), (_req, res) => {
    res
      .set('Cache-Control', 'public, max-age=300')
      .type('text/javascript')
      .send(`${SCRIPT}\n${SELECT_SCRIPT}\n${PREVIEW_SCRIPT}\n${FOCUS_SCRIPT}`);
  });
  return router;
}
