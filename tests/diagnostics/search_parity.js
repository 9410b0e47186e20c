// Runs the site's search script (diagnostics/site/search.js) under node for test_search.cpp:
//   node search_parity.js <search.js> <index.json> <queries.json> <limit>
// prints, per query, the hits as [{id, score, exact}] (a JSON array of arrays).
'use strict';
const fs = require('fs');
const [scorerPath, indexPath, queriesPath, limit] = process.argv.slice(2);
const scorer = require(require('path').resolve(scorerPath));
const index = JSON.parse(fs.readFileSync(indexPath, 'utf8'));
const queries = JSON.parse(fs.readFileSync(queriesPath, 'utf8'));
const out = queries.map((q) =>
  scorer.search(index, q, Number(limit)).map((h) => ({id: h.entry.id, score: h.score, exact: h.exact})));
process.stdout.write(JSON.stringify(out));
