/* The book's live translator: the trained Korean→English Transformer of
 * Chapters 7 and 8, run in the reader's browser with ONNX Runtime Web.
 *
 * The page carries only this script and its stylesheet. ONNX Runtime Web
 * (its WebAssembly build, single-threaded) and the exported model
 * (transformer_edu/assets/ko_en/onnx: encoder.onnx, decoder.onnx,
 * vocab.json) are fetched from this site, never a CDN, the first time the
 * reader asks for a translation. book/_ext/live_translator.py copies them
 * into _static/live-translator/.
 *
 * Greedy decoding runs the decoder on the whole prefix at each step (no
 * key/value cache), as transformer_edu.export.OnnxTranslator does in Python.
 * The mask switches change the masks fed to the graphs and recompute:
 *   padding off: the source is padded with vocab.pad_extra <pad> tokens (as
 *     in a batch with a longer sentence) and src_mask lets every query
 *     attend to them, in the encoder and in the cross-attention;
 *   causal off: the teacher-forced re-run of the translation (<bos> and the
 *     translation fed at once, as in training) gets a tgt_mask that lets each
 *     position see the later ones.
 */
(() => {
  'use strict';

  const script = document.currentScript;
  const ASSETS = new URL('live-translator/', script ? script.src : document.baseURI);
  const RUNTIME_URL = new URL('ort/ort.wasm.bundle.min.mjs', ASSETS);
  const WASM_URL = new URL('ort/ort-wasm-simd-threaded.wasm', ASSETS);
  const MODEL_URL = new URL('model/', ASSETS);
  const megabytes = (bytes) => `${(Number(bytes) / 1e6).toFixed(1)} MB`;
  const SIZES_NOTE = script && script.dataset.runtimeBytes
    ? `The first translation loads ONNX Runtime Web (${megabytes(script.dataset.runtimeBytes)}) ` +
      `and the model (${megabytes(script.dataset.modelBytes)}) from this site.`
    : 'The first translation loads ONNX Runtime Web and the model from this site.';
  const KNOWN_SHOWN = 8;

  // ------------------------------------------------------------------ state
  const state = {
    loading: null, // the promise of {ort, encoder, decoder, vocab}
    busy: false,
    pending: false,
    lastSentence: null,
    lastRun: null,
    timings: { loadMs: null, firstTranslationMs: null, runs: [] },
  };

  function element(tag, attributes = {}, children = []) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value === false || value === null || value === undefined) continue;
      if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children) node.append(child);
    return node;
  }

  function svgElement(tag, attributes = {}) {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
    return node;
  }

  // -------------------------------------------------------------- the form
  function build(root) {
    const example = root.dataset.example || '';
    const fallback = root.querySelector('.live-translator-fallback');
    if (fallback) fallback.hidden = true;

    const input = element('input', {
      id: 'live-translator-input', type: 'text', lang: 'ko', value: example,
      autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', enterkeyhint: 'go',
      'aria-describedby': 'live-translator-note',
    });
    const run = element('button', { id: 'live-translator-run', type: 'submit', text: 'Translate' });
    const padding = element('input', { id: 'live-translator-padding', type: 'checkbox', checked: true });
    const causal = element('input', { id: 'live-translator-causal', type: 'checkbox', checked: true });
    const form = element('form', { class: 'lt-form', novalidate: true }, [
      element('label', { for: 'live-translator-input', text: 'Korean sentence' }),
      element('div', { class: 'lt-row' }, [input, run]),
      element('p', { id: 'live-translator-note', class: 'lt-note', text: SIZES_NOTE }),
      element('fieldset', { class: 'lt-masks' }, [
        element('legend', { text: 'Masks' }),
        element('label', {}, [padding, ' padding mask (source <pad> keys blocked)']),
        element('label', {}, [causal, ' causal mask (no looking ahead in the decoder)']),
      ]),
    ]);
    const status = element('p', { id: 'live-translator-status', class: 'lt-status', role: 'status',
      'aria-live': 'polite' });
    const output = element('output', { id: 'live-translator-output', lang: 'en',
      for: 'live-translator-input' });
    const effect = element('p', { id: 'live-translator-effect', class: 'lt-effect' });
    const teacher = element('ol', { id: 'live-translator-teacher', class: 'lt-teacher',
      'aria-label': 'Teacher-forced predictions, one per decoder position' });
    const layer = element('select', { id: 'live-translator-layer' });
    const head = element('select', { id: 'live-translator-head' });
    const maps = element('div', { class: 'lt-maps' });
    const result = element('div', { class: 'lt-result', hidden: true }, [
      element('p', { class: 'lt-english' }, [element('span', { text: 'English: ' }), output]),
      effect,
      element('p', { class: 'lt-teacher-title', text: 'Teacher-forced re-run: <bos> and the ' +
        'translation go in at once, as in training; each position predicts the next word ' +
        '(✓ where it is the word that follows):' }),
      teacher,
      element('div', { class: 'lt-selectors' }, [
        element('label', { for: 'live-translator-layer', text: 'Layer ' }), layer,
        element('label', { for: 'live-translator-head', text: 'Head ' }), head,
      ]),
      maps,
      element('p', { class: 'lt-note', text: 'Rows are the queries, columns the keys; white is ' +
        'weight 0, dark blue weight 1, grey a pair the mask blocks. Hover or long-press a cell ' +
        'for its weight.' }),
    ]);
    root.append(form, status, result);

    const ui = { root, input, run, padding, causal, status, output, effect, teacher, layer, head,
      maps, result };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      request(ui, input.value);
    });
    for (const box of [padding, causal]) {
      box.addEventListener('change', () => {
        if (state.lastSentence !== null) request(ui, state.lastSentence);
      });
    }
    for (const select of [layer, head]) {
      select.addEventListener('change', () => { if (state.lastRun) drawMaps(ui, state.lastRun); });
    }
    window.liveTranslator = { state, ui };
  }

  // ------------------------------------------------------- loading the model
  function load() {
    if (!state.loading) {
      state.loading = (async () => {
        const start = performance.now();
        const ort = await import(RUNTIME_URL.href);
        ort.env.wasm.numThreads = 1; // the book is not cross-origin isolated: no threads
        ort.env.wasm.proxy = false;
        ort.env.wasm.wasmPaths = { wasm: WASM_URL.href };
        const options = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
        const [vocab, encoder, decoder] = await Promise.all([
          fetch(new URL('vocab.json', MODEL_URL)).then((response) => {
            if (!response.ok) throw new Error(`vocab.json: HTTP ${response.status}`);
            return response.json();
          }),
          ort.InferenceSession.create(new URL('encoder.onnx', MODEL_URL).href, options),
          ort.InferenceSession.create(new URL('decoder.onnx', MODEL_URL).href, options),
        ]);
        vocab.srcIndex = new Map(vocab.src_itos.map((token, id) => [token, id]));
        prepareTokenizer(vocab);
        window.liveTranslator.tokenize = (text) => tokenize(vocab, text); // for the tests
        state.timings.loadMs = performance.now() - start;
        return { ort, encoder, decoder, vocab };
      })();
      state.loading.catch(() => { state.loading = null; }); // let the reader try again
    }
    return state.loading;
  }

  // --------------------------------------------------------- tokenisation
  // vocab.tokenizer is the rule of transformer_edu.export.tokenizer_json, as data: normalise
  // (NFC), split on the characters Python's str.split() splits on, and for kind "table" replace
  // each word found in `splits` by its two tokens (고양이가 → 고양이 가).
  function prepareTokenizer(vocab) {
    const rule = vocab.tokenizer;
    if (rule.kind !== 'whitespace' && rule.kind !== 'table') {
      throw new Error(`vocab.json has a tokenizer of kind ${rule.kind}, which this page does not know`);
    }
    const escaped = [...rule.whitespace].map((ch) => `\\u{${ch.codePointAt(0).toString(16)}}`).join('');
    rule.separator = new RegExp(`[${escaped}]+`, 'u');
    rule.table = new Map(Object.entries(rule.kind === 'table' ? rule.splits : {}));
    // What a reader may type: written words whose tokens are all known, and the other tokens.
    const parts = new Set(rule.table.size ? [...rule.table.values()].flat() : []);
    const written = [...rule.table.entries()]
      .filter(([, tokens]) => tokens.every((token) => vocab.srcIndex.has(token)))
      .map(([word]) => word);
    vocab.knownWords = [...written,
      ...vocab.src_itos.filter((token) => !token.startsWith('<') && !parts.has(token))];
  }

  function words(vocab, text) {
    const rule = vocab.tokenizer;
    const normal = rule.normalize ? text.normalize(rule.normalize) : text;
    return normal.split(rule.separator).filter(Boolean);
  }

  function wordTokens(vocab, word) {
    return vocab.tokenizer.table.get(word) || [word];
  }

  function tokenize(vocab, text) {
    return words(vocab, text).flatMap((word) => wordTokens(vocab, word));
  }

  function editDistance(a, b) {
    const x = [...a];
    const y = [...b];
    let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
    for (let i = 1; i <= x.length; i += 1) {
      const current = [i];
      for (let j = 1; j <= y.length; j += 1) {
        current[j] = Math.min(previous[j] + 1, current[j - 1] + 1,
          previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
      }
      previous = current;
    }
    return previous[y.length];
  }

  function unknownMessage(vocab, unknown) {
    const known = vocab.knownWords;
    const hints = unknown.map((word) => {
      const sameStart = known.filter((token) => token[0] === word[0]); // the stem comes first
      const close = (sameStart.length ? sameStart : known)
        .map((token) => [editDistance(word, token), token])
        .filter(([distance, token]) => distance <= Math.max(1, Math.floor([...token].length / 2)))
        .sort((p, q) => p[0] - q[0] || (p[1] < q[1] ? -1 : 1))
        .slice(0, 3)
        .map(([, token]) => token);
      return close.length ? `“${word}” (did you mean ${close.join(' or ')}?)` : `“${word}”`;
    });
    const sample = known.filter((token) => !unknown.includes(token)).slice(0, KNOWN_SHOWN);
    return `Unknown word${unknown.length > 1 ? 's' : ''}: ${hints.join(', ')}. The model knows ` +
      `only the ${known.length} words of its training data, such as ${sample.join(', ')}.`;
  }

  // ------------------------------------------------------------ the graphs
  function int64(ort, ids, dims) {
    return new ort.Tensor('int64', BigInt64Array.from(ids, (id) => BigInt(id)), dims);
  }

  function bools(ort, values, dims) {
    return new ort.Tensor('bool', Uint8Array.from(values, (v) => (v ? 1 : 0)), dims);
  }

  function causalValues(length, causal) {
    const values = [];
    for (let i = 0; i < length; i += 1) {
      for (let j = 0; j < length; j += 1) values.push(!causal || j <= i);
    }
    return values;
  }

  function argmaxAllowed(logits, offset, size, never) {
    let best = -1;
    let bestValue = -Infinity;
    for (let v = 0; v < size; v += 1) {
      if (never.has(v)) continue;
      const value = logits[offset + v];
      if (best < 0 || value > bestValue) { best = v; bestValue = value; }
    }
    return best;
  }

  // Attention weights of one (layer, head) as rows, from a (1, N, H, Lq, Lk) tensor.
  function slice(tensor, layer, head) {
    const [, layers, heads, rows, cols] = tensor.dims;
    const start = ((layer * heads) + head) * rows * cols;
    const out = [];
    for (let r = 0; r < rows; r += 1) {
      out.push(Array.from(tensor.data.subarray(start + r * cols, start + (r + 1) * cols)));
    }
    return { layers, heads, rows: out };
  }

  async function translate(model, sentence, usePadding, useCausal) {
    const { ort, encoder, decoder, vocab } = model;
    const ids = vocab.special_ids;
    const never = new Set(vocab.never_generate);
    const sourceIds = [...tokenize(vocab, sentence).map((token) => vocab.srcIndex.get(token)), ids.eos];
    const padded = [...sourceIds, ...Array(vocab.pad_extra).fill(ids.pad)];
    const S = padded.length;
    const srcMaskValues = padded.map((id) => !usePadding || id !== ids.pad);
    const src = int64(ort, padded, [1, S]);
    const srcMask = bools(ort, srcMaskValues, [1, 1, 1, S]);
    const encoded = await encoder.run({ src, src_mask: srcMask });
    const memory = encoded.memory;

    // Greedy decoding: always causal, since a word not yet written cannot be seen.
    const steps = Math.min(vocab.max_steps.per_source_token * sourceIds.length + vocab.max_steps.extra,
      vocab.max_len);
    const V = vocab.tgt_itos.length;
    const tokens = [ids.bos];
    for (let step = 0; step < steps; step += 1) {
      const t = tokens.length;
      const out = await decoder.run({
        tgt: int64(ort, tokens, [1, t]), memory, src_mask: srcMask,
        tgt_mask: bools(ort, causalValues(t, true), [1, 1, t, t]),
      });
      const next = argmaxAllowed(out.logits.data, (t - 1) * V, V, never);
      tokens.push(next);
      if (next === ids.eos) break;
    }
    const generated = tokens.slice(1);
    const ended = generated[generated.length - 1] === ids.eos;
    const english = (ended ? generated.slice(0, -1) : generated).map((id) => vocab.tgt_itos[id]);

    // Teacher-forced re-run: <bos> and the translation at once, with the causal switch.
    const forced = ended ? tokens.slice(0, -1) : tokens;
    const T = forced.length;
    const tgtMaskValues = causalValues(T, useCausal);
    const rerun = await decoder.run({
      tgt: int64(ort, forced, [1, T]), memory, src_mask: srcMask,
      tgt_mask: bools(ort, tgtMaskValues, [1, 1, T, T]),
    });
    const predictions = [];
    for (let t = 0; t < T; t += 1) predictions.push(argmaxAllowed(rerun.logits.data, t * V, V, never));
    const following = [...forced.slice(1), ids.eos];
    return {
      sentence, usePadding, useCausal, english: english.join(' '),
      sourceTokens: padded.map((id) => vocab.src_itos[id]),
      targetTokens: forced.map((id) => vocab.tgt_itos[id]),
      srcMask: srcMaskValues, tgtMask: tgtMaskValues,
      predictions: predictions.map((id) => vocab.tgt_itos[id]),
      following: following.map((id) => vocab.tgt_itos[id]),
      encoderAttention: encoded.encoder_self_attention,
      decoderAttention: rerun.decoder_self_attention,
      crossAttention: rerun.cross_attention,
    };
  }

  // -------------------------------------------------------------- running
  function setStatus(ui, text, kind = 'info') {
    ui.status.textContent = text;
    ui.status.dataset.kind = kind;
  }

  function request(ui, sentence) {
    state.pending = sentence;
    if (!state.busy) drain(ui);
  }

  async function drain(ui) {
    state.busy = true;
    ui.run.disabled = true;
    ui.root.setAttribute('aria-busy', 'true');
    try {
      while (state.pending !== false) {
        const sentence = state.pending;
        state.pending = false;
        try {
          await runOnce(ui, sentence);
        } catch (error) {
          clearResult(ui);
          setStatus(ui, `The translation failed: ${error.message || error}`, 'error');
          ui.root.dataset.state = 'failed';
        }
      }
    } finally {
      state.busy = false;
      ui.run.disabled = false;
      ui.root.setAttribute('aria-busy', 'false');
    }
  }

  function clearResult(ui) {
    state.lastSentence = null;
    state.lastRun = null;
    ui.result.hidden = true;
    ui.output.textContent = '';
  }

  async function runOnce(ui, sentence) {
    if (!sentence.trim()) {
      setStatus(ui, 'Type a Korean sentence first, e.g. 고양이가 생선을 먹었다.', 'error');
      return;
    }
    const first = state.loading === null;
    if (first) setStatus(ui, 'Loading ONNX Runtime Web and the model…');
    let model;
    try {
      model = await load();
    } catch (error) {
      setStatus(ui, `The runtime or the model could not be loaded: ${error.message || error}`, 'error');
      return;
    }
    const { vocab } = model;
    const unknown = [...new Set(words(vocab, sentence).filter(
      (word) => !wordTokens(vocab, word).every((token) => vocab.srcIndex.has(token))))];
    if (unknown.length) {
      clearResult(ui);
      setStatus(ui, unknownMessage(vocab, unknown), 'error');
      ui.root.dataset.state = 'unknown';
      return;
    }
    const count = tokenize(vocab, sentence).length;
    const longest = vocab.max_len - vocab.pad_extra - 1;
    if (count > longest) {
      clearResult(ui);
      setStatus(ui, `That is ${count} tokens; the model reads at most ${longest}.`, 'error');
      ui.root.dataset.state = 'too-long';
      return;
    }
    const usePadding = ui.padding.checked;
    const useCausal = ui.causal.checked;
    const start = performance.now();
    const result = await translate(model, sentence, usePadding, useCausal);
    // Without the padding mask, translate with it too, to say what changed (one run at a time:
    // a session runs one call at once).
    const masked = usePadding ? null : await translate(model, sentence, true, useCausal);
    const ms = performance.now() - start;
    if (state.timings.firstTranslationMs === null) {
      state.timings.firstTranslationMs = state.timings.loadMs + ms;
    }
    state.timings.runs.push(ms);
    result.maskedEnglish = masked ? masked.english : result.english;
    state.lastSentence = sentence;
    state.lastRun = result;
    show(ui, result);
    setStatus(ui, `Translated in ${Math.round(ms)} ms` +
      (first ? ` (loading took ${(state.timings.loadMs / 1000).toFixed(1)} s).` : '.'));
    ui.root.dataset.state = 'done';
    ui.root.dataset.runs = String(state.timings.runs.length);
  }

  // -------------------------------------------------------------- showing
  function show(ui, run) {
    ui.output.textContent = run.english;
    ui.result.hidden = false;
    const padCount = run.sourceTokens.filter((token) => token === '<pad>').length;
    if (!run.usePadding) {
      ui.effect.textContent = run.english === run.maskedEnglish
        ? `Padding mask off: every query may now attend to the ${padCount} <pad> positions too, ` +
          'so the memory changed (see the encoder map), yet the greedy translation did not.'
        : `Padding mask off: every query may now attend to the ${padCount} <pad> positions too, ` +
          `and the translation changed. With the mask it reads “${run.maskedEnglish}”.`;
    } else {
      ui.effect.textContent = `Your sentence ran padded with ${padCount} <pad> tokens, as in a ` +
        'batch with a longer sentence; the padding mask hides them, so the translation is the ' +
        'same as without them.';
    }
    ui.teacher.replaceChildren(...run.predictions.map((word, i) => {
      const right = word === run.following[i];
      return element('li', { class: right ? 'lt-right' : 'lt-wrong',
        text: `${run.targetTokens[i]} → ${word} ${right ? '✓' : `✗ (next is ${run.following[i]})`}` });
    }));
    const { layers, heads } = slice(run.encoderAttention, 0, 0);
    fillSelect(ui.layer, layers, 'layer');
    fillSelect(ui.head, heads, 'head');
    drawMaps(ui, run);
  }

  function fillSelect(select, count, word) {
    if (select.options.length === count) return;
    const keep = Math.min(select.selectedIndex < 0 ? 0 : select.selectedIndex, count - 1);
    select.replaceChildren(...Array.from({ length: count },
      (_, i) => element('option', { value: i, text: `${word} ${i + 1}` })));
    select.selectedIndex = keep;
  }

  function drawMaps(ui, run) {
    const layer = Number(ui.layer.value || 0);
    const head = Number(ui.head.value || 0);
    const root = ui.root;
    const colours = JSON.parse(root.dataset.colours || '["#ffffff","#08306b"]');
    const blocked = root.dataset.blocked || '#d9d9d9';
    const S = run.sourceTokens.length;
    const T = run.targetTokens.length;
    const srcAllowed = Array.from({ length: S }, () => run.srcMask);
    const crossAllowed = Array.from({ length: T }, () => run.srcMask);
    const tgtAllowed = Array.from({ length: T }, (_, i) => run.tgtMask.slice(i * T, (i + 1) * T));
    const which = `layer ${layer + 1}, head ${head + 1}`;
    const specs = [
      ['encoder', `Encoder self-attention (${which})`, run.encoderAttention, srcAllowed,
        run.sourceTokens, run.sourceTokens, 'ko', 'ko'],
      ['decoder', `Decoder self-attention (${which})`, run.decoderAttention, tgtAllowed,
        run.targetTokens, run.targetTokens, 'en', 'en'],
      ['cross', `Cross-attention (${which})`, run.crossAttention, crossAllowed,
        run.targetTokens, run.sourceTokens, 'en', 'ko'],
    ];
    ui.maps.replaceChildren(...specs.map(([id, title, tensor, allowed, rows, cols, rowLang, colLang]) => {
      const weights = slice(tensor, layer, head).rows;
      return heatmap(`live-translator-map-${id}`, title, weights, allowed, rows, cols, rowLang, colLang,
        colours, blocked);
    }));
  }

  function colourAt(colours, value) {
    const x = Math.min(Math.max(value, 0), 1) * (colours.length - 1);
    const i = Math.min(Math.floor(x), colours.length - 2);
    const f = x - i;
    const rgb = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
    const a = rgb(colours[i]);
    const b = rgb(colours[i + 1]);
    return `rgb(${a.map((c, k) => Math.round(c + f * (b[k] - c))).join(',')})`;
  }

  function heatmap(id, title, weights, allowed, rowLabels, colLabels, rowLang, colLang, colours, blocked) {
    const cell = 26;
    // Label lengths in px at 11 px: a Hangul syllable is about as wide as it is high.
    const textWidth = (label) => [...label].reduce((w, ch) => w + (/[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]/
      .test(ch) ? 11.5 : 6.8), 0);
    const longest = (labels) => Math.max(...labels.map(textWidth));
    const rowWidth = 10 + longest(rowLabels);
    const colLength = longest(colLabels); // drawn at -60°: cos 60° across, sin 60° up
    const colHeight = 10 + 0.87 * colLength;
    const width = rowWidth + cell * colLabels.length + Math.max(4, 0.5 * colLength - cell / 2);
    const height = colHeight + cell * rowLabels.length + 4;
    const svg = svgElement('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img',
      'aria-label': `${title}: rows are the queries (${rowLabels.join(' ')}), columns the keys ` +
        `(${colLabels.join(' ')}); darker is more attention, grey is blocked by a mask.` });
    svg.style.maxWidth = `${Math.round(width * 1.15)}px`;
    rowLabels.forEach((label, r) => {
      const text = svgElement('text', { x: rowWidth - 6, y: colHeight + cell * r + cell / 2,
        'text-anchor': 'end', 'dominant-baseline': 'central', class: 'lt-label', lang: rowLang });
      text.textContent = label;
      svg.append(text);
    });
    colLabels.forEach((label, c) => {
      const x = rowWidth + cell * c + cell / 2;
      const text = svgElement('text', { x, y: colHeight - 6, transform: `rotate(-60 ${x} ${colHeight - 6})`,
        'text-anchor': 'start', 'dominant-baseline': 'central', class: 'lt-label', lang: colLang });
      text.textContent = label;
      svg.append(text);
    });
    weights.forEach((row, r) => {
      row.forEach((weight, c) => {
        const open = allowed[r][c];
        const rect = svgElement('rect', { x: rowWidth + cell * c, y: colHeight + cell * r, width: cell - 1,
          height: cell - 1, fill: open ? colourAt(colours, weight) : blocked, 'data-row': r, 'data-col': c,
          'data-weight': weight, 'data-blocked': open ? 'false' : 'true' });
        const tip = svgElement('title');
        tip.textContent = `${rowLabels[r]} → ${colLabels[c]}: ${open ? weight.toFixed(2) : 'blocked'}`;
        rect.append(tip);
        svg.append(rect);
      });
    });
    return element('figure', { id, class: 'lt-map' }, [element('figcaption', { text: title }), svg]);
  }

  // ----------------------------------------------------------------- start
  function init() {
    const root = document.getElementById('live-translator');
    if (root && !root.dataset.ready) {
      root.dataset.ready = 'true';
      build(root);
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
