// The book's Plotly: its core (which draws scatter traces) and the two other
// traces the explorers use, bar and heatmap. `.ci/npm` bundles this file with
// esbuild into node_modules/.book/plotly-cartesian.min.js (1.2 MB instead of
// the 1.5 MB of Plotly's cartesian distribution), and book/_ext/book_assets.py
// serves it as _static/plotly-cartesian.min.js. Both packages are pinned in
// package-lock.json.
var Plotly = require("plotly.js/lib/core");

Plotly.register([require("plotly.js/lib/bar"), require("plotly.js/lib/heatmap")]);

module.exports = Plotly;
