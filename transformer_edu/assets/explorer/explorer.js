/* The browser side of transformer_edu.figures.explorer.Explorer.
 *
 * One file, two ways in:
 * - The book: book/_ext/book_assets.py serves this file as _static/explorers.js
 *   (deferred, with a data-tse-explorers attribute) on the pages that hold an
 *   explorer. It mounts every explorer of the page and, once one comes within
 *   two screens of the view, loads plotly-cartesian.min.js from its folder.
 * - Jupyter and Colab: each explorer's HTML inlines this file and calls
 *   TSEExplorers.inline(id, css, plotlyUrl), which loads Plotly from its CDN
 *   (or uses the page's window.Plotly). Where scripts do not run at all, the
 *   explorer's fallback text stays on show.
 *
 * An explorer's element holds its controls (real <button>, <input type=range>
 * and <select> elements, written by Python), one empty plot box per panel, a
 * live summary and a <script type="application/json" class="tse-data"> with:
 *   controls: [{name, start}]            start index of each control
 *   panels:   [{h}]                      plot height in px
 *   parts:    [...]                      every distinct trace look, trace
 *                                        data and layout once
 *   states:   {"i.j": {s, p: [{t, d, l, n}]}}
 *             keyed by the controls' indices: the summary s and, per panel,
 *             its title t, its traces d as [look part id, data part id] pairs
 *             (a trace is the look's keys plus the data's: x, y, z, text …),
 *             layout part id l and the part id n of the layout changes for
 *             narrow plots (or null).
 */
(function () {
  "use strict";
  if (window.TSEExplorers) {
    return;
  }

  var NARROW_PX = 480;
  var CONFIG = { responsive: true, displayModeBar: false, scrollZoom: false };
  var HANGUL = /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]+/g;
  var plotlyPromise = null;

  function clone(value) {
    return JSON.parse(JSON.stringify(value));
  }

  function merge(target, changes) {
    Object.keys(changes).forEach(function (key) {
      var value = changes[key];
      if (value && typeof value === "object" && !Array.isArray(value) &&
          target[key] && typeof target[key] === "object" && !Array.isArray(target[key])) {
        merge(target[key], value);
      } else {
        target[key] = value;
      }
    });
    return target;
  }

  /* Set an element's text, marking each run of Hangul as Korean. */
  function setText(element, text) {
    element.textContent = "";
    var last = 0;
    var match;
    HANGUL.lastIndex = 0;
    while ((match = HANGUL.exec(text)) !== null) {
      if (match.index > last) {
        element.appendChild(document.createTextNode(text.slice(last, match.index)));
      }
      var span = document.createElement("span");
      span.lang = "ko";
      span.textContent = match[0];
      element.appendChild(span);
      last = match.index + match[0].length;
    }
    if (last < text.length) {
      element.appendChild(document.createTextNode(text.slice(last)));
    }
  }

  function loadPlotly(url) {
    if (window.Plotly) {
      return Promise.resolve(window.Plotly);
    }
    if (plotlyPromise) {
      return plotlyPromise;
    }
    plotlyPromise = new Promise(function (resolve, reject) {
      var amd = typeof window.requirejs === "function" && typeof window.define === "function";
      if (amd) { /* the classic Jupyter notebook */
        window.requirejs.config({ paths: { tse_plotly: url.replace(/\.js$/, "") } });
        window.requirejs(["tse_plotly"], function (Plotly) {
          window.Plotly = window.Plotly || Plotly;
          resolve(window.Plotly);
        }, reject);
        return;
      }
      var script = document.createElement("script");
      script.src = url;
      script.async = true;
      script.onload = function () {
        if (window.Plotly) {
          resolve(window.Plotly);
        } else {
          reject(new Error("no Plotly in " + url));
        }
      };
      script.onerror = function () {
        reject(new Error("could not load " + url));
      };
      document.head.appendChild(script);
    });
    return plotlyPromise;
  }

  /* Run `start` once `root` comes within about two screens of the view. */
  function whenNear(root, start) {
    if (!window.IntersectionObserver) {
      start();
      return;
    }
    var observer = new IntersectionObserver(function (entries) {
      if (entries.some(function (entry) { return entry.isIntersecting; })) {
        observer.disconnect();
        start();
      }
    }, { rootMargin: "200% 0px" });
    observer.observe(root);
  }

  function mount(root, plotlyUrl, lazy) {
    if (!root || root.tseMounted) {
      return;
    }
    root.tseMounted = true;
    var spec = JSON.parse(root.querySelector("script.tse-data").textContent);
    var index = spec.controls.map(function (control) { return control.start; });
    var fallback = root.querySelector(".tse-fallback");
    var controls = root.querySelector(".tse-controls");
    var panels = root.querySelector(".tse-panels");
    var summary = root.querySelector(".tse-summary");
    var plots = Array.prototype.slice.call(root.querySelectorAll(".tse-plot"));
    var titles = Array.prototype.slice.call(root.querySelectorAll(".tse-panel-title"));
    var Plotly = null;
    var narrow = [];

    [controls, panels, summary].forEach(function (element) {
      if (element) {
        element.hidden = false;
      }
    });
    if (fallback) {
      fallback.hidden = true;
    }

    function draw() {
      var state = spec.states[index.join(".")];
      if (summary) {
        setText(summary, state.s);
      }
      state.p.forEach(function (panel, i) {
        if (titles[i]) {
          setText(titles[i], panel.t);
        }
        if (!Plotly) {
          return;
        }
        var layout = clone(spec.parts[panel.l]);
        narrow[i] = plots[i].clientWidth < NARROW_PX;
        if (narrow[i] && panel.n !== null) {
          merge(layout, clone(spec.parts[panel.n]));
        }
        layout.height = spec.panels[i].h;
        layout.autosize = true;
        var data = panel.d.map(function (pair) {
          var trace = clone(spec.parts[pair[0]]);
          var values = clone(spec.parts[pair[1]]);
          Object.keys(values).forEach(function (key) {
            trace[key] = values[key];
          });
          return trace;
        });
        Plotly.react(plots[i], data, layout, CONFIG);
      });
    }

    function choose(control, value) {
      index[control] = value;
      root.querySelectorAll('button[data-tse-control="' + control + '"]').forEach(function (button) {
        button.setAttribute("aria-pressed", String(Number(button.dataset.tseIndex) === value));
      });
      root.querySelectorAll('input[data-tse-control="' + control + '"]').forEach(function (input) {
        var shown = input.parentNode.querySelector(".tse-value");
        var text = input.dataset.tseLabels ? JSON.parse(input.dataset.tseLabels)[value] : String(value);
        input.value = String(value);
        input.setAttribute("aria-valuetext", text);
        if (shown) {
          setText(shown, text);
        }
      });
      draw();
    }

    root.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-tse-control]");
      if (button && root.contains(button)) {
        choose(Number(button.dataset.tseControl), Number(button.dataset.tseIndex));
      }
    });
    ["input", "change"].forEach(function (type) {
      root.addEventListener(type, function (event) {
        var element = event.target;
        if (element.matches && element.matches("input[data-tse-control], select[data-tse-control]")) {
          var control = Number(element.dataset.tseControl);
          var value = Number(element.value);
          if (index[control] !== value) {
            choose(control, value);
          }
        }
      });
    });

    draw();
    var drawPlots = function () {
      loadPlotly(plotlyUrl).then(plotted, failed);
    };
    if (lazy) {
      whenNear(root, drawPlots);
    } else {
      drawPlots();
    }

    function plotted(loaded) {
      Plotly = loaded;
      root.classList.add("tse-drawn");
      draw();
      if (window.ResizeObserver) {
        new ResizeObserver(function () {
          var changed = plots.some(function (plot, i) {
            return (plot.clientWidth < NARROW_PX) !== narrow[i];
          });
          if (changed) {
            draw();
          }
        }).observe(root);
      }
    }

    function failed(error) {
      root.classList.add("tse-failed");
      if (fallback) {
        fallback.hidden = false;
        fallback.appendChild(document.createTextNode(" (Plotly did not load: " + error.message + ")"));
      }
    }
  }

  /* Jupyter and Colab: style and mount one explorer, Plotly from plotlyUrl. */
  function inline(id, css, plotlyUrl) {
    if (css && !document.getElementById("tse-explorer-css")) {
      var style = document.createElement("style");
      style.id = "tse-explorer-css";
      style.textContent = css;
      document.head.appendChild(style);
    }
    mount(document.getElementById(id), plotlyUrl, false);
  }

  window.TSEExplorers = { version: 1, mount: mount, inline: inline, loadPlotly: loadPlotly };

  /* The book: mount every explorer of the page; Plotly (1.5 MB) is loaded
     after the first paint, once an explorer comes near the view. */
  var me = document.currentScript;
  if (me && me.hasAttribute("data-tse-explorers")) {
    var plotlyUrl = new URL("plotly-cartesian.min.js", me.src).href;
    var start = function () {
      document.querySelectorAll(".tse-explorer").forEach(function (root) {
        mount(root, plotlyUrl, true);
      });
    };
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", start);
    } else {
      start();
    }
  }
})();
