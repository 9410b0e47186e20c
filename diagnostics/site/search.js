// kparity catalog search in the browser: a transcription of kparity::search (diagnostics/src/search.cpp,
// formula in diagnostics/include/kparity/diagnostics/search.hpp) over the index that
// kparity::search_index_json exports. Every constant, the synonym table and the class-prefix regex come
// from the index, so this file holds the arithmetic only; the parity test
// (tests/diagnostics/test_search.cpp) runs it under node and requires the same ranking and scores.
(function (root) {
  'use strict';

  var WS = ' \t\r\n\v\f';

  function trim(s) {
    var b = 0, e = s.length;
    while (b < e && WS.indexOf(s[b]) >= 0) ++b;
    while (e > b && WS.indexOf(s[e - 1]) >= 0) --e;
    return s.slice(b, e);
  }

  function asciiLower(s) {
    return s.replace(/[A-Z]/g, function (c) { return String.fromCharCode(c.charCodeAt(0) + 32); });
  }

  // tokens(): ASCII-lowercase; maximal runs of [a-z0-9_] with outer underscores stripped; a run with
  // inner underscores yields itself and then its parts; synonyms map to their canonical word; words
  // without a letter are dropped; first occurrences only, in order.
  function tokens(index, text) {
    var out = [], seen = Object.create(null);
    var emit = function (w) {
      if (!/[a-z]/.test(w)) return;
      if (Object.prototype.hasOwnProperty.call(index.synonyms, w)) w = index.synonyms[w];
      if (seen[w]) return;
      seen[w] = true;
      out.push(w);
    };
    var runs = asciiLower(text).match(/[a-z0-9_]+/g) || [];
    for (var i = 0; i < runs.length; ++i) {
      var r = runs[i].replace(/^_+/, '').replace(/_+$/, '');
      if (!r) continue;
      var parts = r.split('_').filter(function (p) { return p.length > 0; });
      if (parts.length > 1) emit(r);
      for (var j = 0; j < parts.length; ++j) emit(parts[j]);
    }
    return out;
  }

  // Optimal string alignment distance (adjacent transpositions cost 1).
  function osa(a, b) {
    var n = a.length, m = b.length, d = [];
    for (var i = 0; i <= n; ++i) { d.push(new Array(m + 1)); d[i][0] = i; }
    for (var j = 0; j <= m; ++j) d[0][j] = j;
    for (i = 1; i <= n; ++i) {
      for (j = 1; j <= m; ++j) {
        var cost = a[i - 1] === b[j - 1] ? 0 : 1;
        var v = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2][j - 2] + 1);
        d[i][j] = v;
      }
    }
    return d[n][m];
  }

  function sim(p, q, t) {
    if (q === t) return 1;
    var shorter = Math.min(q.length, t.length);
    if (shorter >= p.prefixMinLength && (t.indexOf(q) === 0 || q.indexOf(t) === 0)) return p.prefix;
    if (shorter >= p.edit1MinLength && Math.abs(q.length - t.length) <= 1 && osa(q, t) === 1) return p.edit1;
    if (shorter >= p.edit2MinLength && Math.abs(q.length - t.length) <= 2 && osa(q, t) === 2) return p.edit2;
    return 0;
  }

  // The forms of a pasted message (Catalog::by_message): the text, its last line, each without
  // quotes and without a leading class or `error[<id>]` prefix.
  function messageForms(index, text) {
    var prefix = new RegExp(index.classPrefix);
    var t = trim(text), base = [t], out = [];
    var nl = t.lastIndexOf('\n');
    if (nl >= 0) base.push(trim(t.slice(nl + 1)));
    var unquote = function (s) {
      var q = s.length >= 2 && (s[0] === '"' || s[0] === "'" || s[0] === '`') && s[s.length - 1] === s[0];
      return q ? trim(s.slice(1, s.length - 1)) : s;
    };
    base.forEach(function (s) {
      for (var pass = 0; pass < 3; ++pass) {
        out.push(s);
        var next = unquote(s);
        var m = prefix.exec(next);
        if (m) next = trim(next.slice(m[0].length));
        if (next === s) break;
        s = next;
      }
    });
    return out;
  }

  function compiled(e) {
    if (!e._re) e._re = new RegExp('^(?:' + e.pattern + ')$');
    return e._re;
  }

  function isExact(index, e, forms, key) {
    if (e.keys.indexOf(key) >= 0) return true;
    for (var i = 0; i < forms.length; ++i)
      if (forms[i] === e.message || compiled(e).test(forms[i])) return true;
    return false;
  }

  function round6(x) { return Math.round(x * 1e6) / 1e6; }

  // Hits best first: {entry, score, exact, matched (query words that met the entry)}.
  function search(index, text, limit) {
    var p = index.params;
    if (limit === undefined) limit = 5;
    var qs = tokens(index, text);
    var forms = messageForms(index, text);
    var key = asciiLower(trim(text));
    var vocab = index.terms, idf = index.idf;
    // s[k][t]: similarity of query word k to vocabulary word t (0 for most pairs).
    var s = [], g = [], gsum = 0;
    for (var k = 0; k < qs.length; ++k) {
      var row = new Float64Array(vocab.length), best = 0;
      for (var t = 0; t < vocab.length; ++t) {
        row[t] = sim(p, qs[k], vocab[t]);
        if (row[t] * idf[t] > best) best = row[t] * idf[t];
      }
      s.push(row);
      g.push(best > 0 ? best : p.unknownWeight);
      gsum += g[k];
    }
    var hits = [];
    index.entries.forEach(function (e, pos) {
      var covered = 0, matched = [];
      for (var k = 0; k < qs.length; ++k) {
        var m = 0;
        for (var i = 0; i < e.terms.length; ++i) {
          var v = s[k][e.terms[i][0]] * e.terms[i][1];
          if (v > m) m = v;
        }
        if (m > 0) matched.push(qs[k]);
        covered += g[k] * m;
      }
      var Q = gsum > 0 ? covered / gsum : 0;
      var num = 0, den = 0;
      for (var j = 0; j < e.msg.length; ++j) {
        var tm = e.msg[j], best = 0;
        for (var k2 = 0; k2 < qs.length; ++k2) if (s[k2][tm] > best) best = s[k2][tm];
        num += idf[tm] * best;
        den += idf[tm];
      }
      var D = den > 0 ? num / den : 0;
      var exact = isExact(index, e, forms, key);
      var raw = (exact ? 1 : 0) + p.queryShare * Q + p.messageShare * D;
      var score = round6(raw * (e.status === 'active' ? 1 : p.inactiveFactor));
      if (score >= p.minScore) hits.push({entry: e, score: score, exact: exact, matched: matched, pos: pos});
    });
    hits.sort(function (a, b) { return b.score - a.score || a.pos - b.pos; });
    return hits.slice(0, limit);
  }

  var api = {search: search, tokens: tokens, osa: osa, messageForms: messageForms};
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.kparitySearch = api;
})(this);
