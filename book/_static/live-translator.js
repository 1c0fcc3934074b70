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
 * key/value cache), as transformer_edu.translation.export.OnnxTranslator does in Python.
 * The mask switches change the masks fed to the graphs and recompute:
 *   padding off: the source is padded with vocab.pad_extra <pad> tokens (as
 *     in a batch with a longer sentence) and src_mask lets every query
 *     attend to them, in the encoder and in the cross-attention;
 *   causal off: the teacher-forced re-run of the translation (<bos> and the
 *     translation fed at once, as in training) gets a tgt_mask that lets each
 *     position see the later ones.
 *
 * A sentence of known words that the toy grammar's parser cannot read (고양이가 먹었다: 먹다 needs an
 * object) is still translated, under a note that says it lies outside the grammar the model learned,
 * and why: grammarProblem checks it against vocab.grammar (transformer_edu.data.grammar_spec) as
 * transformer_edu.data.grammar_problem does, with the same messages.
 */
(() => {
  'use strict';

  const script = document.currentScript;
  const ASSETS = new URL('live-translator/', script ? script.src : document.baseURI);
  const RUNTIME_URL = new URL('ort/ort.wasm.bundle.min.mjs', ASSETS);
  const WASM_URL = new URL('ort/ort-wasm-simd-threaded.wasm', ASSETS);
  const MODEL_URL = new URL('model/', ASSETS);
  const megabytes = (bytes) => `${(Number(bytes) / 1e6).toFixed(1)} MB`;

  // The demo's own words, in the page's language: the Korean edition (<html lang="ko">) shows them
  // in Korean. The grammar's reasons (grammarProblem) are transformer_edu.data.grammar_problem's
  // messages, in English in both editions, as Python prints them.
  const KOREAN = (document.documentElement.lang || '').startsWith('ko');
  const WORDS = KOREAN ? {
    sizes: (runtime, model) => `첫 번역 때 이 사이트에서 ONNX Runtime Web(${runtime})과 모델(${model})을 ` +
      '내려받습니다.',
    sizesUnknown: '첫 번역 때 이 사이트에서 ONNX Runtime Web과 모델을 내려받습니다.',
    translate: '번역',
    sentence: '한국어 문장',
    masks: '마스크',
    padding: ' 패딩 마스크(소스의 <pad> 키 차단)',
    causal: ' 인과 마스크(디코더가 앞을 미리 보지 못하게 함)',
    teacherList: '교사 강요 예측, 디코더 위치마다 하나',
    english: '영어: ',
    teacherTitle: '교사 강요 재실행: 학습 때처럼 <bos>와 번역을 한꺼번에 넣고, 각 위치가 다음 단어를 ' +
      '예측합니다(다음 단어와 같으면 ✓):',
    layer: '층 ',
    head: '헤드 ',
    mapsNote: '행은 쿼리, 열은 키입니다. 흰색은 가중치 0, 진한 파란색은 가중치 1, 회색은 마스크가 막은 ' +
      '쌍입니다. 칸에 마우스를 올리거나 길게 누르면 가중치가 보입니다.',
    failed: (error) => `번역하지 못했습니다: ${error}`,
    outside: '모델이 배운 문법 밖의 문장입니다: ',
    outsideTail: (problem) => `${problem}. 그래도 번역은 하지만, 모델이 배운 것 중 이 문장을 다루는 것이 ` +
      '없으므로 아래 번역은 추측입니다.',
    empty: '먼저 한국어 문장을 입력하십시오. 예: 고양이가 생선을 먹었다.',
    loading: 'ONNX Runtime Web과 모델을 불러오는 중…',
    loadFailed: (error) => `런타임이나 모델을 불러오지 못했습니다: ${error}`,
    tooLong: (count, longest) => `토큰이 ${count}개입니다. 모델은 최대 ${longest}개까지 읽습니다.`,
    done: (ms, loadSeconds) => `${ms} ms 만에 번역했습니다` +
      (loadSeconds === null ? '.' : `(불러오기 ${loadSeconds} s).`),
    paddingOffSame: (pads) => `패딩 마스크를 껐습니다. 이제 모든 쿼리가 <pad> 위치 ${pads}개도 볼 수 ` +
      '있으므로 메모리는 바뀌었지만(인코더 맵 참고), 그리디 번역은 바뀌지 않았습니다.',
    paddingOffChanged: (pads, masked) => `패딩 마스크를 껐습니다. 이제 모든 쿼리가 <pad> 위치 ${pads}개도 ` +
      `볼 수 있고, 번역이 바뀌었습니다. 마스크가 있으면 “${masked}”입니다.`,
    paddingOn: (pads) => `입력한 문장은 더 긴 문장과 함께 배치에 든 것처럼 <pad> 토큰 ${pads}개를 붙여 ` +
      '실행했습니다. 패딩 마스크가 이 토큰들을 가리므로 번역은 패드가 없을 때와 같습니다.',
    next: (word) => `✗ (다음 단어는 ${word})`,
    layerOption: '층',
    headOption: '헤드',
    which: (layer, head) => `층 ${layer}, 헤드 ${head}`,
    encoderMap: (which) => `인코더 셀프 어텐션(${which})`,
    decoderMap: (which) => `디코더 셀프 어텐션(${which})`,
    crossMap: (which) => `교차 어텐션(${which})`,
    mapLabel: (title, rows, cols) => `${title}: 행은 쿼리(${rows}), 열은 키(${cols})입니다. 진할수록 ` +
      '어텐션이 크고, 회색은 마스크가 막은 칸입니다.',
    unknown: (hints, many, count, sample) => `모르는 단어: ${hints}. 모델은 학습 데이터에 있는 단어 ` +
      `${count}개만 압니다(예: ${sample}).`,
    didYouMean: (word, close) => `“${word}” (혹시 ${close}?)`,
    or: ' 또는 ',
    blocked: '차단',
  } : {
    sizes: (runtime, model) => `The first translation loads ONNX Runtime Web (${runtime}) ` +
      `and the model (${model}) from this site.`,
    sizesUnknown: 'The first translation loads ONNX Runtime Web and the model from this site.',
    translate: 'Translate',
    sentence: 'Korean sentence',
    masks: 'Masks',
    padding: ' padding mask (source <pad> keys blocked)',
    causal: ' causal mask (no looking ahead in the decoder)',
    teacherList: 'Teacher-forced predictions, one per decoder position',
    english: 'English: ',
    teacherTitle: 'Teacher-forced re-run: <bos> and the ' +
      'translation go in at once, as in training; each position predicts the next word ' +
      '(✓ where it is the word that follows):',
    layer: 'Layer ',
    head: 'Head ',
    mapsNote: 'Rows are the queries, columns the keys; white is ' +
      'weight 0, dark blue weight 1, grey a pair the mask blocks. Hover or long-press a cell ' +
      'for its weight.',
    failed: (error) => `The translation failed: ${error}`,
    outside: 'Outside the grammar the model learned: ',
    outsideTail: (problem) => `${problem}. It is translated anyway, but nothing the model learned ` +
      'covers it, so the translation below is a guess.',
    empty: 'Type a Korean sentence first, e.g. 고양이가 생선을 먹었다.',
    loading: 'Loading ONNX Runtime Web and the model…',
    loadFailed: (error) => `The runtime or the model could not be loaded: ${error}`,
    tooLong: (count, longest) => `That is ${count} tokens; the model reads at most ${longest}.`,
    done: (ms, loadSeconds) => `Translated in ${ms} ms` +
      (loadSeconds === null ? '.' : ` (loading took ${loadSeconds} s).`),
    paddingOffSame: (pads) => `Padding mask off: every query may now attend to the ${pads} <pad> ` +
      'positions too, so the memory changed (see the encoder map), yet the greedy translation did not.',
    paddingOffChanged: (pads, masked) => `Padding mask off: every query may now attend to the ${pads} ` +
      `<pad> positions too, and the translation changed. With the mask it reads “${masked}”.`,
    paddingOn: (pads) => `Your sentence ran padded with ${pads} <pad> tokens, as in a ` +
      'batch with a longer sentence; the padding mask hides them, so the translation is the ' +
      'same as without them.',
    next: (word) => `✗ (next is ${word})`,
    layerOption: 'layer',
    headOption: 'head',
    which: (layer, head) => `layer ${layer}, head ${head}`,
    encoderMap: (which) => `Encoder self-attention (${which})`,
    decoderMap: (which) => `Decoder self-attention (${which})`,
    crossMap: (which) => `Cross-attention (${which})`,
    mapLabel: (title, rows, cols) => `${title}: rows are the queries (${rows}), columns the keys ` +
      `(${cols}); darker is more attention, grey is blocked by a mask.`,
    unknown: (hints, many, count, sample) => `Unknown word${many ? 's' : ''}: ${hints}. ` +
      `The model knows only the ${count} words of its training data, such as ${sample}.`,
    didYouMean: (word, close) => `“${word}” (did you mean ${close}?)`,
    or: ' or ',
    blocked: 'blocked',
  };
  const SIZES_NOTE = script && script.dataset.runtimeBytes
    ? WORDS.sizes(megabytes(script.dataset.runtimeBytes), megabytes(script.dataset.modelBytes))
    : WORDS.sizesUnknown;
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
    const run = element('button', { id: 'live-translator-run', type: 'submit', text: WORDS.translate });
    const padding = element('input', { id: 'live-translator-padding', type: 'checkbox', checked: true });
    const causal = element('input', { id: 'live-translator-causal', type: 'checkbox', checked: true });
    const form = element('form', { class: 'lt-form', novalidate: true }, [
      element('label', { for: 'live-translator-input', text: WORDS.sentence }),
      element('div', { class: 'lt-row' }, [input, run]),
      element('p', { id: 'live-translator-note', class: 'lt-note', text: SIZES_NOTE }),
      element('fieldset', { class: 'lt-masks' }, [
        element('legend', { text: WORDS.masks }),
        element('label', {}, [padding, WORDS.padding]),
        element('label', {}, [causal, WORDS.causal]),
      ]),
    ]);
    const status = element('p', { id: 'live-translator-status', class: 'lt-status', role: 'status',
      'aria-live': 'polite' });
    // Says when the sentence lies outside the grammar the model learned; empty otherwise. Always in
    // the page (an empty live region takes no room), so that screen readers announce what appears in it.
    const grammar = element('p', { id: 'live-translator-grammar', class: 'lt-grammar', role: 'status',
      'aria-live': 'polite' });
    const output = element('output', { id: 'live-translator-output', lang: 'en',
      for: 'live-translator-input', 'aria-describedby': 'live-translator-grammar' });
    const effect = element('p', { id: 'live-translator-effect', class: 'lt-effect' });
    const teacher = element('ol', { id: 'live-translator-teacher', class: 'lt-teacher',
      'aria-label': WORDS.teacherList });
    const layer = element('select', { id: 'live-translator-layer' });
    const head = element('select', { id: 'live-translator-head' });
    const maps = element('div', { class: 'lt-maps' });
    const result = element('div', { class: 'lt-result', hidden: true }, [
      element('p', { class: 'lt-english' }, [element('span', { text: WORDS.english }), output]),
      effect,
      element('p', { class: 'lt-teacher-title', text: WORDS.teacherTitle }),
      teacher,
      element('div', { class: 'lt-selectors' }, [
        element('label', { for: 'live-translator-layer', text: WORDS.layer }), layer,
        element('label', { for: 'live-translator-head', text: WORDS.head }), head,
      ]),
      maps,
      element('p', { class: 'lt-note', text: WORDS.mapsNote }),
    ]);
    root.append(form, status, grammar, result);

    const ui = { root, input, run, padding, causal, status, grammar, output, effect, teacher, layer, head,
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
    // The checks without the model, for the tests: loadVocab() fetches and prepares vocab.json.
    window.liveTranslator = { state, ui, loadVocab, grammarProblem, unknownMessage };
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
          loadVocab(),
          ort.InferenceSession.create(new URL('encoder.onnx', MODEL_URL).href, options),
          ort.InferenceSession.create(new URL('decoder.onnx', MODEL_URL).href, options),
        ]);
        window.liveTranslator.tokenize = (text) => tokenize(vocab, text); // for the tests
        state.timings.loadMs = performance.now() - start;
        return { ort, encoder, decoder, vocab };
      })();
      state.loading.catch(() => { state.loading = null; }); // let the reader try again
    }
    return state.loading;
  }

  async function loadVocab() {
    const response = await fetch(new URL('vocab.json', MODEL_URL));
    if (!response.ok) throw new Error(`vocab.json: HTTP ${response.status}`);
    const vocab = await response.json();
    vocab.srcIndex = new Map(vocab.src_itos.map((token, id) => [token, id]));
    prepareTokenizer(vocab);
    prepareGrammar(vocab);
    return vocab;
  }

  // --------------------------------------------------------- tokenisation
  // vocab.tokenizer is the rule of transformer_edu.translation.export.tokenizer_json, as data: normalise
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
      const rule = vocab.grammarIndex ? wordHint(vocab.grammarIndex, word) : null; // 너가 → 네가, polite endings
      if (rule) return `“${word}” (${rule})`;
      const sameStart = known.filter((token) => token[0] === word[0]); // the stem comes first
      const close = (sameStart.length ? sameStart : known)
        .map((token) => [editDistance(word, token), token])
        .filter(([distance, token]) => distance <= Math.max(1, Math.floor([...token].length / 2)))
        .sort((p, q) => p[0] - q[0] || (p[1] < q[1] ? -1 : 1))
        .slice(0, 3)
        .map(([, token]) => token);
      return close.length ? WORDS.didYouMean(word, close.join(WORDS.or)) : `“${word}”`;
    });
    const sample = known.filter((token) => !unknown.includes(token)).slice(0, KNOWN_SHOWN);
    return WORDS.unknown(hints.join(', '), unknown.length > 1, known.length, sample.join(', '));
  }

  // ------------------------------------------------- the grammar the model learned
  // vocab.grammar is transformer_edu.data.grammar_spec(): the toy grammar's words, the role strings
  // a clause may have and the hint tables, as data. grammarProblem(vocab, text) follows
  // data.parse_sentence step for step, with its messages (data.grammar_problem): null when the
  // grammar's parser reads the sentence, else why not. tests/test_live_translator.py compares the two.
  class GrammarError extends Error {}

  function fail(message) {
    throw new GrammarError(message);
  }

  // Python's repr() of a string, as the parser's messages quote words with it.
  function pyRepr(text) {
    const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
    const hex = (code, digits) => code.toString(16).padStart(digits, '0');
    const escapes = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', [quote]: `\\${quote}` };
    let out = '';
    for (const ch of text) {
      const code = ch.codePointAt(0);
      if (escapes[ch]) out += escapes[ch];
      else if (ch !== ' ' && /[\p{C}\p{Z}]/u.test(ch)) { // not printable, as str.isprintable() says
        out += code < 0x100 ? `\\x${hex(code, 2)}` : code < 0x10000 ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
      } else out += ch;
    }
    return quote + out + quote;
  }

  function prepareGrammar(vocab) {
    const spec = vocab.grammar;
    if (!spec) return;
    const map = (object) => new Map(Object.entries(object));
    const forms = new Map();
    for (const [korean, verb] of Object.entries(spec.verbs)) {
      verb.korean = korean;
      for (const kind of ['present', 'past', 'connective']) forms.set(verb[kind], { verb, kind });
    }
    const times = map(spec.times);
    times.forEach((time, korean) => { time.korean = korean; });
    vocab.grammarIndex = {
      spec, forms, times,
      animates: map(spec.animates),
      things: map(spec.things),
      places: new Set(spec.places),
      particleTokens: new Set(vocab.tokenizer.particles),
      excluded: new Set(spec.excluded_pairs.map(([subject, object]) => `${subject} ${object}`)),
      misspelled: map(spec.hints.misspelled),
      polite: map(spec.hints.polite),
      roleOrder: Object.keys(spec.role_names).join(''),
    };
  }

  // data.word_hint: why a word is not the grammar's, when a rule can tell (너가, polite speech).
  function wordHint(grammar, word) {
    if (grammar.misspelled.has(word)) {
      const right = grammar.misspelled.get(word);
      return `write ${pyRepr(right)}: ${[...word][0]} with 가 is spelled ${right}`;
    }
    if (grammar.polite.has(word) || word.endsWith('요') || word.endsWith('니다')) {
      const style = word.endsWith('니다') ? '-습니다' : '-요';
      const plain = grammar.polite.has(word) ? `: write ${pyRepr(grammar.polite.get(word))}`
        : " (a verb ending in -다, such as '먹었다')";
      return `${pyRepr(word)} is polite speech (${style}); this grammar has only the plain written style, ` +
        `the register of books and newspapers${plain}`;
    }
    return null;
  }

  // data.with_particle, read from the tokenizer's table: 고양이 with 이/가 is 고양이가, 나 with it 내가.
  function withParticle(vocab, noun, pair) {
    const forms = pair.split('/');
    for (const [word, [stem, particle]] of vocab.tokenizer.table) {
      if (stem === noun && forms.includes(particle)) return word;
    }
    throw new Error(`the tokenizer's table has no ${noun} with ${pair}`);
  }

  // data._parts: each word (or noun and particle) and the role it plays.
  function grammarParts(vocab, korean) {
    const g = vocab.grammarIndex;
    const written = words(vocab, korean);
    if (!written.length) fail('the sentence is empty');
    const tokens = written.flatMap((word, i) => wordTokens(vocab, word).map((token) => [token, i]));
    const text = (first, last) => written.slice(tokens[first][1], tokens[last][1] + 1).join(' ');
    const parts = [];
    for (let k = 0; k < tokens.length; k += 1) {
      const token = tokens[k][0];
      const particle = k + 1 < tokens.length ? tokens[k + 1][0] : null;
      const nounLike = g.animates.has(token) || g.things.has(token) || g.places.has(token) ||
        g.times.has(`${token}에`);
      if (g.forms.has(token)) parts.push({ role: 'V', value: g.forms.get(token), text: text(k, k) });
      else if (token === g.spec.negation) parts.push({ role: 'N', value: null, text: text(k, k) });
      else if (g.times.has(token)) parts.push({ role: 'T', value: g.times.get(token), text: text(k, k) });
      else if (nounLike && g.particleTokens.has(particle)) {
        parts.push(nounPart(vocab, token, particle, text(k, k + 1)));
        k += 1;
      } else if (token === '그리고') {
        fail("'그리고' does not join clauses in this grammar; written Korean joins them with the verb's " +
          "-고 form: '고양이가 생선을 먹고 개가 물을 마셨다'");
      } else if (token === '그' && (g.animates.has(particle) || g.things.has(particle))) {
        fail(`${pyRepr(text(k, k + 1))}: 그 is 'he' in this grammar, and it needs a particle ('그가'); ` +
          "the determiner 그 ('that', as in 그 고양이 'that cat') is not in it");
      } else if (nounLike) {
        const options = [...vocab.tokenizer.table].filter(([, [stem]]) => stem === token)
          .map(([word]) => pyRepr(word));
        fail(`${pyRepr(text(k, k))} needs a particle, e.g. ${options.join(' or ')}`);
      } else {
        const hint = wordHint(g, text(k, k));
        fail(`${pyRepr(text(k, k))} is not a word of the toy grammar${hint ? `; ${hint}` : ''}`);
      }
    }
    return parts;
  }

  // data._noun_part: the role a particle gives its noun, and whether its form fits the noun.
  function nounPart(vocab, noun, particle, text) {
    const g = vocab.grammarIndex;
    const pair = Object.keys(g.spec.particles).find((p) => p.split('/').includes(particle));
    const role = g.spec.particles[pair];
    if (g.times.has(`${noun}에`) && particle === '에') return { role: 'T', value: g.times.get(`${noun}에`), text };
    if (role === 'S' && !g.animates.has(noun)) {
      fail(`${pyRepr(text)}: only people and animals are subjects in this grammar`);
    }
    if ((role === 'G' || role === 'P') && !g.places.has(noun)) {
      fail(`${pyRepr(text)}: ${noun} is not a place of the grammar`);
    }
    if (role === 'O' && !g.animates.has(noun) && !g.things.has(noun)) {
      fail(`${pyRepr(text)}: ${noun} is not an object of the grammar`);
    }
    const right = withParticle(vocab, noun, pair);
    if (vocab.tokenizer.table.get(right)[1] !== particle) {
      fail(`${pyRepr(text)} has the wrong form of ${pair}; ${noun} takes it as ${pyRepr(right)}`);
    }
    const value = role === 'S' ? { korean: noun, ...g.animates.get(noun) } : noun;
    return { role, value, text, particle };
  }

  // data.parse_sentence: clauses end at each verb; all but the last end in the -고 form.
  function grammarProblem(vocab, korean) {
    if (!vocab.grammarIndex) return null;
    try {
      const parts = grammarParts(vocab, korean);
      const groups = [];
      let current = [];
      for (const part of parts) {
        current.push(part);
        if (part.role === 'V') {
          groups.push(current);
          current = [];
        }
      }
      if (current.length) {
        fail(groups.length ? `the sentence must end with a verb; nothing may follow ` +
          `${pyRepr(parts[parts.length - current.length - 1].text)}, got ${pyRepr(current[0].text)}`
          : `no verb in ${pyRepr(korean)}; expected a verb such as '먹었다'`);
      }
      groups.forEach((group, i) => {
        const { value: { verb, kind }, text } = group.at(-1);
        if (i < groups.length - 1 && kind !== 'connective') {
          fail(`${pyRepr(text)} ends the sentence, but more follows; join the clauses with the -고 form ` +
            `${pyRepr(verb.connective)}`);
        }
        if (i === groups.length - 1 && kind === 'connective') {
          fail(`${pyRepr(text)} joins two clauses, so the sentence cannot end with it; end with ` +
            `${pyRepr(verb.present)} or ${pyRepr(verb.past)}`);
        }
      });
      const tense = groups.at(-1).at(-1).value.kind; // present or past
      const subjects = []; // each clause's stated subject, or null
      groups.forEach((group, i) => subjects.push(grammarClause(vocab, group, i === 0, subjects, tense)));
      return null;
    } catch (error) {
      if (error instanceof GrammarError) return error.message;
      throw error;
    }
  }

  function need(verb) {
    return verb.motion ? "a place with 에 such as '학교에'" : "an object with 을/를 such as '생선을'";
  }

  // data._clause: the order of the roles, the verb's complement, and who may do what.
  function grammarClause(vocab, group, first, previous, tense) {
    const g = vocab.grammarIndex;
    const names = g.spec.role_names;
    const roles = group.map((part) => part.role).join('');
    const allowed = first ? g.spec.clauses.first : g.spec.clauses.later;
    const where = pyRepr(group.map((part) => part.text).join(' '));
    const { verb } = group.at(-1).value;
    if (!roles.includes('O') && !roles.includes('G')) {
      fail(`in the clause ${where}, ${verb.korean} needs ${need(verb)}; real Korean ` +
        'leaves out an object the context makes clear, but this grammar always writes it');
    }
    if (first && !roles.includes('S')) {
      fail(`the clause ${where} needs a subject such as '고양이가'; real Korean leaves out a subject the ` +
        'context makes clear, but this grammar does so only in a later clause, for the subject of the ' +
        'clause before');
    }
    for (let k = 0; k < roles.length; k += 1) {
      if (!allowed.some((r) => r.startsWith(roles.slice(0, k + 1)))) {
        const expected = [...new Set(allowed.filter((r) => r.startsWith(roles.slice(0, k)) && r.length > k)
          .map((r) => r[k]))].sort((a, b) => g.roleOrder.indexOf(a) - g.roleOrder.indexOf(b));
        fail(`in the clause ${where}, ${pyRepr(group[k].text)} cannot come here; expected ` +
          expected.map((role) => names[role]).join(' or '));
      }
    }
    const get = {};
    for (const part of group) get[part.role] = part;
    const subjectPart = get.S;
    const complementPart = get.O || get.G;
    if (verb.motion !== ('G' in get)) {
      fail(`in the clause ${where}, ${verb.korean} needs ${need(verb)}, ` +
        `got ${pyRepr(complementPart.text)}`);
    }
    const complement = complementPart.value;
    if (!verb.complements.includes(complement)) {
      const known = verb.complements.filter((c) => g.things.has(c) || g.places.has(c))
        .map((c) => withParticle(vocab, c, verb.motion ? '에' : '을/를')).join("', '");
      fail(`${pyRepr(complementPart.text)} does not go with ${verb.korean} in this grammar` +
        (known ? `; it takes e.g. '${known}'` : ''));
    }
    const osv = subjectPart && get.O ? roles.indexOf('O') < roles.indexOf('S') : false;
    if (osv && ['은', '는'].includes(subjectPart.particle)) {
      fail(`after the fronted object ${pyRepr(complementPart.text)} the subject takes 이/가, ` +
        `not ${pyRepr(subjectPart.text)}`);
    }
    const before = previous.filter(Boolean).at(-1); // the subject in force after the clauses before
    const subject = subjectPart ? subjectPart.value : before;
    if (subjectPart && before && subject.korean === before.korean) {
      fail(`${pyRepr(subjectPart.text)} repeats the previous clause's subject; Korean leaves it out`);
    }
    const problem = subjectProblem(g, subject, verb, complement);
    if (problem) {
      const culprit = problem.includes('cannot be subject and object') ? complementPart : subjectPart || get.V;
      fail(`${pyRepr(culprit.text)}: ${problem}`);
    }
    const time = get.T ? get.T.value : null;
    const adverbial = get.T || get.P;
    if (verb.stative && adverbial) {
      fail(`${pyRepr(adverbial.text)}: ${verb.korean} is a state, which takes no time or place adverbial ` +
        'in this grammar');
    }
    if (get.P && get.P.value === complement) {
      fail(`${pyRepr(get.P.text)} with ${pyRepr(complementPart.text)} names the place twice; this grammar ` +
        'leaves that clause out');
    }
    if (time && !time.tenses.includes(tense)) {
      const why = time.korean === '오늘' ? "; English's simple present does not take 'today'" : '';
      fail(`${pyRepr(get.T.text)} (${time.english}) needs the ${time.tenses[0]} tense in this grammar, but ` +
        `the sentence is in the ${tense}${why}`);
    }
    return subjectPart ? subjectPart.value : null;
  }

  // data.subject_problem: who may be the subject of this verb with this complement.
  function subjectProblem(g, subject, verb, complement) {
    const forPeople = !verb.motion && g.things.has(complement) && g.things.get(complement).for_people;
    if ((verb.people_only || forPeople) && !subject.person) {
      return `only people go with ${verb.people_only ? verb.korean : complement} in this grammar, ` +
        `not ${subject.korean}`;
    }
    if (!verb.motion && g.excluded.has(`${subject.korean} ${complement}`)) {
      return `${subject.korean} and ${complement} cannot be subject and object of one clause`;
    }
    return null;
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
          setStatus(ui, WORDS.failed(error.message || error), 'error');
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
    showGrammarNote(ui, null);
  }

  function showGrammarNote(ui, problem) {
    if (!problem) {
      ui.grammar.replaceChildren();
      return;
    }
    ui.grammar.replaceChildren(element('strong', { text: WORDS.outside }), WORDS.outsideTail(problem));
  }

  async function runOnce(ui, sentence) {
    if (!sentence.trim()) {
      setStatus(ui, WORDS.empty, 'error');
      return;
    }
    const first = state.loading === null;
    if (first) setStatus(ui, WORDS.loading);
    let model;
    try {
      model = await load();
    } catch (error) {
      setStatus(ui, WORDS.loadFailed(error.message || error), 'error');
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
      setStatus(ui, WORDS.tooLong(count, longest), 'error');
      ui.root.dataset.state = 'too-long';
      return;
    }
    const problem = grammarProblem(vocab, sentence); // null when the grammar's parser reads it
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
    showGrammarNote(ui, problem);
    setStatus(ui, WORDS.done(Math.round(ms), first ? (state.timings.loadMs / 1000).toFixed(1) : null));
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
        ? WORDS.paddingOffSame(padCount)
        : WORDS.paddingOffChanged(padCount, run.maskedEnglish);
    } else {
      ui.effect.textContent = WORDS.paddingOn(padCount);
    }
    ui.teacher.replaceChildren(...run.predictions.map((word, i) => {
      const right = word === run.following[i];
      return element('li', { class: right ? 'lt-right' : 'lt-wrong',
        text: `${run.targetTokens[i]} → ${word} ${right ? '✓' : WORDS.next(run.following[i])}` });
    }));
    const { layers, heads } = slice(run.encoderAttention, 0, 0);
    fillSelect(ui.layer, layers, WORDS.layerOption);
    fillSelect(ui.head, heads, WORDS.headOption);
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
    const which = WORDS.which(layer + 1, head + 1);
    const specs = [
      ['encoder', WORDS.encoderMap(which), run.encoderAttention, srcAllowed,
        run.sourceTokens, run.sourceTokens, 'ko', 'ko'],
      ['decoder', WORDS.decoderMap(which), run.decoderAttention, tgtAllowed,
        run.targetTokens, run.targetTokens, 'en', 'en'],
      ['cross', WORDS.crossMap(which), run.crossAttention, crossAllowed,
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
      'aria-label': WORDS.mapLabel(title, rowLabels.join(' '), colLabels.join(' ')) });
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
        tip.textContent = `${rowLabels[r]} → ${colLabels[c]}: ${open ? weight.toFixed(2) : WORDS.blocked}`;
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
