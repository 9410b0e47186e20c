// kparity error index: copy buttons on every page; on the index, the ranked search (search.js over
// the exported index, the same ranking as `kparity explain`) and the filters. The state lives in
// the query string (?q=...&op=...), so a search can be linked to, from file:// too.
(function () {
  'use strict';

  function copyText(text, done) {
    var fallback = function () {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.appendChild(area);
      area.select();
      try { document.execCommand('copy'); done(); } catch (e) { /* nothing to copy to */ }
      document.body.removeChild(area);
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
    else fallback();
  }

  Array.prototype.forEach.call(document.querySelectorAll('.code .copy'), function (button) {
    button.addEventListener('click', function () {
      copyText(button.parentNode.querySelector('code').textContent, function () {
        button.textContent = 'Copied';
        setTimeout(function () { button.textContent = 'Copy'; }, 1500);
      });
    });
  });

  var form = document.getElementById('search');
  var filters = document.getElementById('filters');
  if (!form || !filters) return;

  var box = document.getElementById('q');
  var results = document.getElementById('results');
  var list = document.getElementById('result-list');
  var status = document.getElementById('results-status');
  var count = document.getElementById('count');
  var index = window.KPARITY_SEARCH_INDEX;
  var scorer = window.kparitySearch;
  var FILTERS = ['op', 'tag', 'origin', 'severity', 'status'];
  var LIMIT = 10;

  var rows = Array.prototype.slice.call(document.querySelectorAll('#entries tr.row'));
  var groups = Array.prototype.slice.call(document.querySelectorAll('#entries tbody'));
  var rowById = {};
  rows.forEach(function (row) { rowById[row.getAttribute('data-id')] = row; });

  function chosen() {
    var f = {};
    FILTERS.forEach(function (name) { f[name] = filters.elements[name].value; });
    return f;
  }

  function passes(f, row) {
    if (!row) return true;
    if (f.op && row.getAttribute('data-op') !== f.op) return false;
    if (f.tag && (' ' + row.getAttribute('data-tags') + ' ').indexOf(' ' + f.tag + ' ') < 0) return false;
    if (f.origin && row.getAttribute('data-origin') !== f.origin) return false;
    if (f.severity && row.getAttribute('data-severity') !== f.severity) return false;
    if (f.status && row.getAttribute('data-status') !== f.status) return false;
    return true;
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function renderHits(hits) {
    list.textContent = '';
    hits.forEach(function (hit) {
      var e = hit.entry;
      var li = el('li');
      li.setAttribute('data-id', e.id);
      var headLine = el('div', 'hit-head');
      var link = el('a');
      link.href = 'e/' + e.id + '/index.html';
      link.appendChild(el('code', 'id', e.id));
      link.appendChild(document.createTextNode(' ' + e.slug));
      headLine.appendChild(link);
      headLine.appendChild(el('span', 'badge op', e.op));
      if (e.status !== 'active') headLine.appendChild(el('span', 'badge status', e.status));
      var score = el('span', 'score' + (hit.exact ? ' exact' : ''), hit.score.toFixed(2));
      score.title = hit.exact ? 'exact match (+1) plus the share of the query explained' : 'share of the query explained';
      headLine.appendChild(score);
      li.appendChild(headLine);
      li.appendChild(el('p', 'hit-summary', e.summary || e.message));
      var msg = el('p', 'hit-msg');
      msg.appendChild(el('code', null, e.errorClass + ': ' + e.message));
      li.appendChild(msg);
      li.appendChild(el('p', 'hit-why', hit.exact ? 'Exact match.' : 'Matched words: ' + hit.matched.join(', ')));
      list.appendChild(li);
    });
  }

  function update(pushUrl) {
    var f = chosen();
    var shown = 0;
    rows.forEach(function (row) {
      var ok = passes(f, row);
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    groups.forEach(function (group) {
      group.hidden = !group.querySelector('tr.row:not([hidden])');
    });
    count.textContent = shown === rows.length ? rows.length + ' entries' : shown + ' of ' + rows.length + ' entries';

    var text = box.value;
    if (text.trim() === '') {
      results.hidden = true;
      list.textContent = '';
    } else if (!index || !scorer) {
      results.hidden = false;
      status.textContent = 'The search index did not load (assets/search-index.js); the table below lists every entry.';
    } else {
      var hits = scorer.search(index, text, index.entries.length).filter(function (h) {
        return passes(f, rowById[h.entry.id]);
      }).slice(0, LIMIT);
      renderHits(hits);
      results.hidden = false;
      status.textContent = hits.length === 0
        ? 'No entry matches. Try fewer words, or the message without its values.'
        : hits.length + (hits.length === 1 ? ' match' : ' matches') + ', best first.';
    }
    if (pushUrl) {
      var params = [];
      if (text.trim() !== '') params.push('q=' + encodeURIComponent(text));
      FILTERS.forEach(function (name) { if (f[name]) params.push(name + '=' + encodeURIComponent(f[name])); });
      try { history.replaceState(null, '', params.length ? '?' + params.join('&') : location.pathname); } catch (e) { /* some file:// setups */ }
    }
  }

  function fromUrl() {
    var params = {};
    location.search.replace(/^\?/, '').split('&').forEach(function (pair) {
      if (!pair) return;
      var i = pair.indexOf('=');
      var key = decodeURIComponent(i < 0 ? pair : pair.slice(0, i));
      params[key] = decodeURIComponent((i < 0 ? '' : pair.slice(i + 1)).replace(/\+/g, ' '));
    });
    if (params.q !== undefined) box.value = params.q;
    FILTERS.forEach(function (name) {
      var select = filters.elements[name];
      if (params[name] !== undefined && Array.prototype.some.call(select.options, function (o) { return o.value === params[name]; }))
        select.value = params[name];
    });
  }

  var timer = null;
  box.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(function () { update(true); }, 120);
  });
  box.addEventListener('keydown', function (ev) {
    if (ev.key === 'Enter' && !ev.shiftKey) {
      ev.preventDefault();
      update(true);
    }
  });
  form.addEventListener('submit', function (ev) { ev.preventDefault(); update(true); });
  filters.addEventListener('change', function () { update(true); });
  filters.addEventListener('submit', function (ev) { ev.preventDefault(); });
  filters.addEventListener('reset', function () { setTimeout(function () { update(true); }, 0); });

  fromUrl();
  update(false);
  document.documentElement.setAttribute('data-ready', '1');
})();
