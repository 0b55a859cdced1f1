// The attention explorer (docs/explorer.md, docs/ko/explorer.md): every attention weight of notebook 08's trained
// model for a few test sentences. The data is window.TFM_ATTENTION_DATA, which docs/explorer/attention_data.js
// (tools/attention_explorer.py) assigns: a script, not a JSON file, so that the page works opened from the disk
// (file://) too. Plain JavaScript and SVG; no library, nothing from the network.
//
// The page holds `<div data-attention-explorer>`; this script fills it with five <select> controls named sentence,
// kind, view, layer and head, a caption naming the layer and head as the paper does (§3.2.2), a readout of the
// numbers, and two views of the same weights:
// - view "head" (one layer; bertviz's head view): lines from each query token to each key token (their opacity the
//   weight) and a matrix per head. With head "all" every head is drawn in its own colour, and a legend of buttons
//   (`button[data-head][aria-pressed]`) hides or shows each head's lines and matrix;
// - view "model" (bertviz's model view): every layer x head of the chosen kind at once, one small panel of lines
//   each (`button[data-layer][data-head]`, the values the layer and head controls take: layers from 1, heads from
//   0); choosing a panel opens that layer and head in the head view.
// Every drawn weight, line or cell, carries data-from (the query's index), data-to (the key's index), data-weight
// (the weight, 0-1) and data-head. Hovering or focusing a query token (Tab, then the arrow keys ↑ ↓) keeps only its
// row and the readout gives its largest weights; ← → then step through its keys (the weight of each head), and
// hovering a line or a cell gives that one weight and its two tokens.
//
// Speed: a redraw writes each drawing as one string of SVG markup, parsed once; each head's lines and each query's
// row are a <g>, so hiding a head or keeping a row changes a few classes, not one per weight. The drawings reset
// Material's `box-sizing: inherit` (explorer.css): an inherited value on every element keeps Chromium from sharing
// computed styles, and the longest sentence's redraw spent seconds on style alone.
(function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";
  var KINDS = ["encoder_self_attention", "decoder_self_attention", "cross_attention"];
  var VIEWS = ["head", "model"];
  // One colour per head (all heads at once); readable on the light and the dark scheme.
  var COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#393b79", "#ad494a", "#637939", "#7b4173", "#e7ba52", "#3182bd"];
  var SUB = "₀₁₂₃₄₅₆₇₈₉";
  function sub(n) { return String(n).split("").map(function (d) { return SUB[+d]; }).join(""); }
  function fixed(value) { return value.toFixed(4); }

  var WORDS = {
    en: {
      sentence: "Sentence", kind: "Attention", view: "View", layer: "Layer", head: "Head", all: "all heads",
      views: {head: "one layer (head view)", model: "every layer and head (model view)"},
      kinds: {encoder_self_attention: "encoder self-attention", decoder_self_attention: "decoder self-attention (masked)",
              cross_attention: "encoder-decoder attention"},
      headName: function (h) { return "head " + h; },
      layerName: function (l, n) { return "layer " + l + " of " + n; },
      queries: {encoder_self_attention: "query: source token", decoder_self_attention: "query: the step that writes",
                cross_attention: "query: the step that writes"},
      keys: {encoder_self_attention: "key: source token", decoder_self_attention: "key: decoder input",
             cross_attention: "key: source token"},
      lines: "Lines: each query token's weights over the keys (opacity = weight)",
      matrix: "Matrix: rows are queries, columns keys (darker = more weight)",
      model: "Model view: rows are layers, columns heads; each panel draws one head's lines, queries on the left, " +
             "keys on the right (opacity = weight)",
      toggles: "Heads drawn (press one to hide or show its lines):",
      source: "source", prepared: "as the model reads it", output: "beam search output", reference: "reference",
      why: "why this sentence", whyKey: "why",
      hint: "Hover over a query token, or reach it with Tab and move with ↑ ↓: only its row stays and its largest " +
            "weights are written here; then ← → step through its keys. Hover over a line or a cell for its weight.",
      modelHint: "Choose a panel (click, or Tab and Enter) to open that layer and head in the head view.",
      query: function (token, i) { return "“" + token + "” (query " + i + ")"; },
      weight: function (head, from, to, value) { return "head " + head + " · “" + from + "” → “" + to + "”: " + value; },
      panel: function (l, n, h) { return "Layer " + l + " of " + n + ", head " + h + ": open in the head view"; },
      caption: function (kind, layer, layers, head, heads) {
        var where = {encoder_self_attention: "Encoder " + layerName(this, layer, layers) + ", self-attention",
                     decoder_self_attention: "Decoder " + layerName(this, layer, layers) + ", masked self-attention",
                     cross_attention: "Decoder " + layerName(this, layer, layers) + ", encoder-decoder attention"}[kind];
        var which = head === "all"
          ? "all " + heads + " heads, one colour each (head" + sub(1) + " … head" + sub(heads) + " of §3.2.2)"
          : "head " + head + " of " + heads + ": head" + sub(head + 1) + " in §3.2.2's MultiHead(Q, K, V) = " +
            "Concat(head" + sub(1) + ", …, head" + sub(heads) + ")W" + "ᴼ";
        return where + ", " + which + "; " + this.from[kind] + ".";
      },
      modelCaption: function (kind, layers, heads) {
        var where = {encoder_self_attention: "Encoder self-attention", decoder_self_attention:
                     "Decoder masked self-attention", cross_attention: "Encoder-decoder attention"}[kind];
        return where + ", all " + layers + " layers × " + heads + " heads (§3.1, §3.2.2); " + this.from[kind] + ".";
      },
      from: {encoder_self_attention: "queries, keys and values all from the encoder's previous layer",
             decoder_self_attention: "queries, keys and values from the decoder's previous layer, each position " +
                                     "seeing only the positions up to its own",
             cross_attention: "queries from the decoder, keys and values from the encoder's output (§3.2.3)"},
      provenance: function (p) {
        return "Weights of the run " + p.run + (p.preset ? " (" + p.preset + ")" : "") +
          (p.epochs ? ", " + p.epochs + " epochs" : "") + (p.weights ? ", " + p.weights : "") +
          ", beam " + p.beam_size + ", α = " + p.alpha + "; written " + p.date + " by tfm " + p.tfm_version +
          " (tools/attention_explorer.py).";
      },
      missing: "The explorer's data (explorer/attention_data.js) did not load."
    },
    ko: {
      sentence: "문장", kind: "어텐션", view: "보기", layer: "레이어", head: "헤드", all: "모든 헤드",
      views: {head: "레이어 하나 (헤드 뷰)", model: "모든 레이어와 헤드 (모델 뷰)"},
      kinds: {encoder_self_attention: "인코더 Self-Attention", decoder_self_attention: "디코더 Masked Self-Attention",
              cross_attention: "인코더-디코더 어텐션 (크로스 어텐션)"},
      headName: function (h) { return "헤드 " + h; },
      layerName: function (l, n) { return n + "개 중 " + l + "번째 레이어"; },
      queries: {encoder_self_attention: "쿼리: 소스 토큰", decoder_self_attention: "쿼리: 이 토큰을 쓰는 시점",
                cross_attention: "쿼리: 이 토큰을 쓰는 시점"},
      keys: {encoder_self_attention: "키: 소스 토큰", decoder_self_attention: "키: 디코더 입력",
             cross_attention: "키: 소스 토큰"},
      lines: "선: 쿼리 토큰마다 키에 준 어텐션 가중치 (불투명도 = 가중치)",
      matrix: "행렬: 행은 쿼리, 열은 키 (진할수록 큰 가중치)",
      model: "모델 뷰: 행은 레이어, 열은 헤드입니다. 패널 하나가 헤드 하나의 선을 그립니다. 왼쪽이 쿼리, 오른쪽이 " +
             "키입니다 (불투명도 = 가중치)",
      toggles: "그리는 헤드 (누르면 그 헤드의 선을 숨기거나 다시 보여 줍니다):",
      source: "소스", prepared: "모델이 읽는 형태", output: "빔 서치 출력", reference: "정답 번역",
      why: "이 문장을 고른 이유", whyKey: "why_ko",
      hint: "쿼리 토큰 위에 마우스를 올리거나 Tab으로 가서 ↑ ↓로 움직이면 그 행만 남고, 가장 큰 가중치가 여기에 " +
            "표시됩니다. 이어서 ← →로 키를 하나씩 짚어 볼 수 있습니다. 선이나 칸 위에 마우스를 올리면 그 가중치가 " +
            "표시됩니다.",
      modelHint: "패널을 고르면(클릭, 또는 Tab과 Enter) 그 레이어와 헤드를 헤드 뷰에서 엽니다.",
      query: function (token, i) { return "“" + token + "” (쿼리 " + i + ")"; },
      weight: function (head, from, to, value) { return "헤드 " + head + " · “" + from + "” → “" + to + "”: " + value; },
      panel: function (l, n, h) { return n + "개 중 " + l + "번째 레이어, 헤드 " + h + ": 헤드 뷰에서 열기"; },
      caption: function (kind, layer, layers, head, heads) {
        var where = {encoder_self_attention: "인코더 " + layerName(this, layer, layers) + "의 Self-Attention",
                     decoder_self_attention: "디코더 " + layerName(this, layer, layers) + "의 Masked Self-Attention",
                     cross_attention: "디코더 " + layerName(this, layer, layers) + "의 인코더-디코더 어텐션"}[kind];
        var which = head === "all"
          ? "헤드 " + heads + "개 모두, 헤드마다 한 색 (§3.2.2의 head" + sub(1) + " … head" + sub(heads) + ")"
          : heads + "개 중 헤드 " + head + ": §3.2.2의 MultiHead(Q, K, V) = Concat(head" + sub(1) + ", …, head" +
            sub(heads) + ")Wᴼ에서 head" + sub(head + 1);
        return where + ", " + which + ". " + this.from[kind] + ".";
      },
      modelCaption: function (kind, layers, heads) {
        var where = {encoder_self_attention: "인코더 Self-Attention", decoder_self_attention:
                     "디코더 Masked Self-Attention", cross_attention: "인코더-디코더 어텐션"}[kind];
        return where + ", 레이어 " + layers + "개 × 헤드 " + heads + "개 모두 (§3.1, §3.2.2). " + this.from[kind] + ".";
      },
      from: {encoder_self_attention: "쿼리, 키, 값이 모두 인코더의 이전 레이어에서 옵니다",
             decoder_self_attention: "쿼리, 키, 값이 디코더의 이전 레이어에서 오고, 각 위치는 자기 위치까지만 봅니다",
             cross_attention: "쿼리는 디코더에서, 키와 값은 인코더의 출력에서 옵니다 (§3.2.3)"},
      provenance: function (p) {
        return "가중치: 실행 폴더 " + p.run + (p.preset ? " (" + p.preset + ")" : "") +
          (p.epochs ? ", " + p.epochs + " 에폭" : "") + (p.weights ? ", " + p.weights : "") +
          ", 빔 " + p.beam_size + ", α = " + p.alpha + ". " + p.date + "에 tfm " + p.tfm_version +
          "으로 기록 (tools/attention_explorer.py).";
      },
      missing: "탐색기의 데이터(explorer/attention_data.js)를 불러오지 못했습니다."
    }
  };
  function layerName(words, l, n) { return words.layerName(l, n); }

  function el(name, attrs, text) {
    var node = document.createElement(name);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function short(token) { return token.length > 14 ? token.slice(0, 13) + "…" : token; }
  function each(nodes, fn) { Array.prototype.forEach.call(nodes, fn); }

  function select(name, label) {
    var wrap = el("label", {"class": "tfm-x-control"});
    wrap.appendChild(el("span", {}, label));
    var box = el("select", {name: name});
    wrap.appendChild(box);
    return {wrap: wrap, box: box, options: null};
  }
  // Sets a control's options (rebuilt only when they change) and its value.
  function fill(control, options, value) {
    var key = JSON.stringify(options);
    if (control.options !== key) {
      control.box.textContent = "";
      options.forEach(function (option) { control.box.appendChild(el("option", {value: String(option[0])}, option[1])); });
      control.options = key;
    }
    control.box.value = String(value);
  }

  // The drawings are written as SVG markup and parsed once (thousands of elements: far faster than one DOM call each).
  function escape(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function token(attrs, text) {  // a token's label: its (shortened) text, the whole token as its tooltip
    return "<text " + attrs + ">" + escape(short(text)) + "<title>" + escape(text) + "</title></text>";
  }
  function picture(attrs, markup) {
    var box = document.createElement("div");
    box.innerHTML = "<svg xmlns=\"" + SVG_NS + "\" class=\"tfm-x-svg\" " + attrs + ">" + markup + "</svg>";
    return box.firstChild;
  }
  // A drawn weight's attributes: its opacity (rounded to 3 decimals, finer than the 256 steps a screen shows: so few
  // distinct values let Chromium share the computed styles) and the exact numbers.
  function weight(opacity, head, i, j, value) {
    return " " + opacity + "=\"" + value.toFixed(3) + "\" data-from=\"" + i + "\" data-to=\"" + j + "\" data-weight=\"" +
      value + "\" data-head=\"" + head + "\"";
  }

  function Explorer(root, data) {
    this.root = root;
    this.data = data;
    var lang = (root.closest("[lang]") || document.documentElement).getAttribute("lang") || "en";
    this.words = WORDS[lang.slice(0, 2)] || WORDS.en;
    this.state = {sentence: 0, kind: "cross_attention", view: "head", layer: 0, head: "all"};
    this.hidden = {};  // heads whose lines the legend hides (all-heads view), kept across redraws
    this.focus = {query: null, key: null};
    var w = this.words, self = this;
    root.textContent = "";
    this.controls = el("div", {"class": "tfm-x-controls"});
    this.control = {};
    [["sentence", w.sentence], ["kind", w.kind], ["view", w.view], ["layer", w.layer], ["head", w.head]]
      .forEach(function (pair) {
        self.control[pair[0]] = select(pair[0], pair[1]);
        self.controls.appendChild(self.control[pair[0]].wrap);
      });
    this.about = el("dl", {"class": "tfm-x-about"});
    this.caption = el("p", {"class": "tfm-x-caption", "data-caption": "", "aria-live": "polite"});
    this.legend = el("div", {"class": "tfm-x-legend", role: "group"});
    this.readout = el("p", {"class": "tfm-x-readout", "data-readout": "", "aria-live": "polite"});
    this.linesBox = el("figure", {"class": "tfm-x-view tfm-x-lines", "data-view": "lines"});
    this.matrixBox = el("figure", {"class": "tfm-x-view tfm-x-matrix", "data-view": "matrix"});
    this.modelBox = el("figure", {"class": "tfm-x-view tfm-x-model", "data-view": "model"});
    var provenance = el("p", {"class": "tfm-x-provenance"}, w.provenance(data.provenance || {}));
    [this.controls, this.about, this.caption, this.legend, this.readout, this.linesBox, this.matrixBox, this.modelBox,
     provenance].forEach(function (node) { root.appendChild(node); });

    root.addEventListener("change", function (event) {
      var name = event.target.name;
      if (!(name in self.state)) return;
      var value = event.target.value;
      // The layer's options are numbered from 1, as their labels and the paper (layer 5 of 6); the state from 0.
      self.state[name] = name === "kind" || name === "view" || (name === "head" && value === "all") ? value
        : parseInt(value, 10) - (name === "layer" ? 1 : 0);
      if (name === "sentence" || name === "kind") self.state.layer = Math.min(self.state.layer, self.layers() - 1);
      self.render();
    });
    root.addEventListener("click", function (event) {
      var target = event.target.closest && event.target.closest("button[data-head]");
      if (!target || !root.contains(target)) return;
      if (target.hasAttribute("data-layer")) self.open(+target.getAttribute("data-layer") - 1,
                                                       +target.getAttribute("data-head"));
      else self.toggle(+target.getAttribute("data-head"));
    });
    function closest(event, selector) { return event.target.closest && event.target.closest(selector); }
    root.addEventListener("mouseover", function (event) {
      var q = closest(event, "[data-query]"), drawn = closest(event, "[data-weight]");
      if (q) self.keep(q.getAttribute("data-query"));
      else if (drawn && !closest(event, "[data-view=model]")) self.say(self.weightText(drawn));
    });
    root.addEventListener("mouseout", function (event) {
      if (closest(event, "[data-query]")) self.keep(null);
      else if (closest(event, "[data-weight]")) self.say(self.summary());
    });
    root.addEventListener("focusin", function (event) {
      var q = closest(event, "[data-query]");
      if (q) self.keep(q.getAttribute("data-query"));
    });
    root.addEventListener("focusout", function (event) { if (closest(event, "[data-query]")) self.keep(null); });
    root.addEventListener("keydown", function (event) {
      var q = closest(event, "[data-query]");
      if (!q) return;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        var group = Array.prototype.slice.call(q.ownerSVGElement.querySelectorAll("[data-query]"));
        var next = group[group.indexOf(q) + (event.key === "ArrowDown" ? 1 : -1)];
        if (next) next.focus();
        event.preventDefault();
      } else if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
        self.step(event.key === "ArrowRight" ? 1 : -1);
        event.preventDefault();
      } else if (event.key === "Escape") {
        self.step(0);
      }
    });
    this.render();
  }

  Explorer.prototype.sentence = function () { return this.data.sentences[this.state.sentence]; };
  Explorer.prototype.layers = function () {
    return this.state.kind === "encoder_self_attention" ? this.data.layers.encoder : this.data.layers.decoder;
  };
  Explorer.prototype.tokens = function () {
    var t = this.sentence().tokens;
    return {encoder_self_attention: [t.source, t.source], decoder_self_attention: [t.output, t.decoder_input],
            cross_attention: [t.output, t.source]}[this.state.kind];
  };
  Explorer.prototype.heads = function () {
    var all = [];
    for (var h = 0; h < this.data.heads; h++) all.push(h);
    return this.state.head === "all" ? all : [this.state.head];
  };
  Explorer.prototype.shown = function () {  // the heads drawn and not hidden by the legend
    var hidden = this.state.head === "all" ? this.hidden : {};
    return this.heads().filter(function (h) { return !hidden[h]; });
  };
  Explorer.prototype.colour = function (head) {
    return this.state.head === "all" || this.state.view === "model" ? COLOURS[head % COLOURS.length] : null;
  };
  // One head's map as floats, [query][key], of layer `layer` (default: the chosen one).
  Explorer.prototype.weights = function (head, layer) {
    var scale = this.data.scale;
    return this.sentence().attention[this.state.kind][layer === undefined ? this.state.layer : layer][head]
      .map(function (row) { return row.map(function (value) { return value / scale; }); });
  };

  Explorer.prototype.render = function () {
    var w = this.words, s = this.state, data = this.data, self = this;
    var model = s.view === "model";
    this.focus = {query: null, key: null};
    this.root.classList.remove("tfm-x-focused");
    this.root.removeAttribute("data-focus");
    fill(this.control.sentence, data.sentences.map(function (item, i) { return [i, (i + 1) + ". " + item.source]; }),
         s.sentence);
    fill(this.control.kind, KINDS.map(function (k) { return [k, w.kinds[k]]; }), s.kind);
    fill(this.control.view, VIEWS.map(function (v) { return [v, w.views[v]]; }), s.view);
    var layers = [];
    for (var l = 1; l <= this.layers(); l++) layers.push([l, String(l)]);
    fill(this.control.layer, layers, s.layer + 1);
    var heads = [["all", w.all]];
    for (var h = 0; h < data.heads; h++) heads.push([h, w.headName(h)]);
    fill(this.control.head, heads, s.head);
    // The model view shows every layer and head: the two controls stay, showing what the head view will open.
    this.control.layer.box.disabled = model;
    this.control.head.box.disabled = model;

    var item = this.sentence();
    this.about.textContent = "";
    var rows = [[w.source, item.source], [w.prepared, item.prepared !== item.source ? item.prepared : null],
                [w.output, item.translation], [w.reference, item.reference], [w.why, item[w.whyKey] || item.why]];
    rows.forEach(function (row) {
      if (row[1] === null || row[1] === undefined) return;
      self.about.appendChild(el("dt", {}, row[0]));
      self.about.appendChild(el("dd", row[0] === w.output || row[0] === w.reference ? {lang: "de"} : {}, row[1]));
    });

    this.caption.textContent = model ? w.modelCaption(s.kind, this.layers(), data.heads)
      : w.caption(s.kind, s.layer + 1, this.layers(), s.head, data.heads);
    this.drawLegend();
    this.linesBox.hidden = this.matrixBox.hidden = model;
    this.modelBox.hidden = !model;
    this.linesBox.textContent = this.matrixBox.textContent = this.modelBox.textContent = "";
    if (model) {
      this.drawModel();
    } else {
      this.drawLines();
      this.drawMatrices();
    }
    this.say(this.summary());
  };

  Explorer.prototype.drawLegend = function () {
    var w = this.words, self = this;
    this.legend.textContent = "";
    this.legend.hidden = this.state.view === "model" || this.state.head !== "all";
    if (this.legend.hidden) return;
    this.legend.setAttribute("aria-label", w.toggles);
    this.legend.appendChild(el("span", {"class": "tfm-x-legend-label"}, w.toggles));
    this.heads().forEach(function (head) {
      var key = el("button", {type: "button", "class": "tfm-x-key", "data-head": head,
                              "aria-pressed": self.hidden[head] ? "false" : "true"});
      key.appendChild(el("span", {"class": "tfm-x-swatch", style: "background:" + self.colour(head)}));
      key.appendChild(document.createTextNode(w.headName(head)));
      self.legend.appendChild(key);
    });
  };

  // The legend's button for `head`: hides its lines (and its matrix) or shows them again. No redraw: one class.
  Explorer.prototype.toggle = function (head) {
    if (this.hidden[head]) delete this.hidden[head];
    else this.hidden[head] = true;
    var off = !!this.hidden[head];
    each(this.root.querySelectorAll("[data-lines-head=\"" + head + "\"], [data-panel-head=\"" + head + "\"]"),
         function (node) { node.classList.toggle("tfm-x-off", off); });
    each(this.legend.querySelectorAll("button[data-head=\"" + head + "\"]"),
         function (node) { node.setAttribute("aria-pressed", off ? "false" : "true"); });
    this.numbers();
    this.say(this.summary());
  };

  // A panel of the model view chosen: that layer and head in the head view.
  Explorer.prototype.open = function (layer, head) {
    this.state.view = "head";
    this.state.layer = layer;
    this.state.head = head;
    this.render();
    this.control.view.box.focus();
    this.caption.scrollIntoView({block: "nearest"});
  };

  Explorer.prototype.drawLines = function () {
    var w = this.words, s = this.state, self = this;
    var tokens = this.tokens(), queries = tokens[0], keys = tokens[1];
    var row = 18, top = 30, left = 128, right = 212, width = 346;
    this.numbersAt = right + 100;
    var height = top + Math.max(queries.length, keys.length) * row + 6;
    function y(i) { return top + i * row + row / 2; }
    var x1 = " x1=\"" + (left + 4) + "\" y1=\"", x2 = "\" x2=\"" + (right - 4) + "\" y2=\"";
    var markup = ["<text x=\"" + left + "\" y=\"14\" text-anchor=\"end\" class=\"tfm-x-head\">" +
                  escape(w.queries[s.kind]) + "</text>",
                  "<text x=\"" + right + "\" y=\"14\" class=\"tfm-x-head\">" + escape(w.keys[s.kind]) + "</text>",
                  "<g class=\"tfm-x-weights\">"];
    this.heads().forEach(function (head) {
      var colour = self.colour(head);
      markup.push("<g data-lines-head=\"" + head + "\"" + (self.hidden[head] && s.head === "all" ? " class=\"tfm-x-off\"" : "") +
                  (colour ? " style=\"stroke:" + colour + "\"" : "") + ">");
      self.weights(head).forEach(function (values, i) {
        markup.push("<g class=\"tfm-x-row\" data-row=\"" + i + "\">");
        values.forEach(function (value, j) {
          markup.push("<line" + x1 + y(i) + x2 + y(j) + "\"" + weight("stroke-opacity", head, i, j, value) + "/>");
        });
        markup.push("</g>");
      });
      markup.push("</g>");
    });
    markup.push("</g>");
    queries.forEach(function (text, i) {
      markup.push(token("x=\"" + left + "\" y=\"" + (y(i) + 4) + "\" text-anchor=\"end\" tabindex=\"0\" data-query=\"" + i +
                        "\" class=\"tfm-x-token tfm-x-query\"", text));
    });
    keys.forEach(function (text, j) {
      markup.push(token("x=\"" + right + "\" y=\"" + (y(j) + 4) + "\" data-key=\"" + j + "\" class=\"tfm-x-token\"", text));
    });
    markup.push("<g class=\"tfm-x-nums\"></g>");
    var drawing = picture("viewBox=\"0 0 " + width + " " + height + "\" width=\"100%\" role=\"img\" aria-label=\"" +
                          escape(w.lines) + "\" style=\"max-width:" + (width * 1.6) + "px\"", markup.join(""));
    this.linesBox.appendChild(el("figcaption", {}, w.lines));
    this.linesBox.appendChild(drawing);
    this.rowY = y;
  };

  Explorer.prototype.drawMatrices = function () {
    var w = this.words, self = this;
    var tokens = this.tokens(), queries = tokens[0], keys = tokens[1];
    var all = this.state.head === "all";
    var cell = all ? 12 : 16, left = 96, top = 76;
    var width = left + keys.length * cell + 4, height = top + queries.length * cell + 4;
    var grid = el("div", {"class": "tfm-x-grid"});
    var labels = [];
    keys.forEach(function (text, j) {
      var x = left + j * cell + cell / 2 + 3, y0 = top - 4;
      labels.push(token("x=\"" + x + "\" y=\"" + y0 + "\" transform=\"rotate(-60 " + x + " " + y0 + ")\" data-key=\"" + j +
                        "\" class=\"tfm-x-token tfm-x-small\"", text));
    });
    // Focusable by a click, not by Tab (the lines view's tokens are the keyboard's way in: one stop per token).
    queries.forEach(function (text, i) {
      labels.push(token("x=\"" + (left - 4) + "\" y=\"" + (top + i * cell + cell - 3) + "\" text-anchor=\"end\" " +
                        "tabindex=\"-1\" data-query=\"" + i + "\" class=\"tfm-x-token tfm-x-query tfm-x-small\"", text));
    });
    labels.push("<rect x=\"" + left + "\" y=\"" + top + "\" width=\"" + (keys.length * cell - 1) + "\" height=\"" +
                (queries.length * cell - 1) + "\" class=\"tfm-x-back\"/>");
    labels = labels.join("");
    var size = "\" width=\"" + (cell - 1) + "\" height=\"" + (cell - 1) + "\"";
    this.heads().forEach(function (head) {
      var colour = self.colour(head);
      var markup = [labels, "<g class=\"tfm-x-cells\"" + (colour ? " style=\"fill:" + colour + "\"" : "") + ">"];
      self.weights(head).forEach(function (values, i) {
        markup.push("<g class=\"tfm-x-row\" data-row=\"" + i + "\">");
        var y = "\" y=\"" + (top + i * cell);
        values.forEach(function (value, j) {
          markup.push("<rect x=\"" + (left + j * cell) + y + size + weight("fill-opacity", head, i, j, value) + "/>");
        });
        markup.push("</g>");
      });
      markup.push("</g>");
      var box = el("div", {"class": "tfm-x-panel" + (all && self.hidden[head] ? " tfm-x-off" : ""),
                           "data-panel-head": head});
      if (all) box.appendChild(el("p", {"class": "tfm-x-panel-title"}, w.headName(head)));
      box.appendChild(picture("viewBox=\"0 0 " + width + " " + height + "\" width=\"" + width + "\" height=\"" + height +
                              "\" role=\"img\" aria-label=\"" + escape(w.matrix + " — " + w.headName(head)) + "\"",
                              markup.join("")));
      grid.appendChild(box);
    });
    this.matrixBox.appendChild(el("figcaption", {}, w.matrix));
    this.matrixBox.appendChild(grid);
  };

  // Every layer x head of the chosen kind, one panel of lines each (bertviz's model view).
  Explorer.prototype.drawModel = function () {
    var w = this.words, self = this, layers = this.layers(), heads = this.data.heads;
    var tokens = this.tokens(), queries = tokens[0], keys = tokens[1];
    var tall = Math.max(queries.length, keys.length), height = tall * 4, width = 40;
    var yq = height / queries.length, yk = height / keys.length, y2 = keys.map(function (key, j) {
      return "\" y2=\"" + ((j + 0.5) * yk).toFixed(1) + "\"";
    });
    var grid = el("div", {"class": "tfm-x-model-grid", role: "group",
                          style: "grid-template-columns: max-content repeat(" + heads + ", minmax(3.2rem, 7rem))"});
    grid.appendChild(el("span", {}));
    for (var h = 0; h < heads; h++) grid.appendChild(el("span", {"class": "tfm-x-model-head"}, w.headName(h)));
    for (var layer = 0; layer < layers; layer++) {
      grid.appendChild(el("span", {"class": "tfm-x-model-layer"}, w.layer + " " + (layer + 1)));
      for (h = 0; h < heads; h++) {
        var markup = ["<g style=\"stroke:" + COLOURS[h % COLOURS.length] + "\">"];
        self.weights(h, layer).forEach(function (values, i) {
          var start = "<line x1=\"1\" y1=\"" + ((i + 0.5) * yq).toFixed(1) + "\" x2=\"" + (width - 1);
          values.forEach(function (value, j) {
            markup.push(start + y2[j] + weight("stroke-opacity", h, i, j, value) + "/>");
          });
        });
        markup.push("</g>");
        var panel = el("button", {type: "button", "class": "tfm-x-thumb", "data-layer": layer + 1, "data-head": h,
                                  "aria-label": w.panel(layer + 1, layers, h), title: w.panel(layer + 1, layers, h)});
        panel.appendChild(picture("viewBox=\"0 0 " + width + " " + height + "\" preserveAspectRatio=\"none\" " +
                                  "aria-hidden=\"true\" style=\"height:" + Math.max(48, Math.min(150, tall * 4)) + "px\"",
                                  markup.join("")));
        grid.appendChild(panel);
      }
    }
    this.modelBox.appendChild(el("figcaption", {}, w.model));
    var scroller = el("div", {"class": "tfm-x-scroll"});
    scroller.appendChild(grid);
    this.modelBox.appendChild(scroller);
  };

  // --- The numbers ---------------------------------------------------------------------------------------------

  Explorer.prototype.say = function (text) {
    if (this.readout.textContent !== text) this.readout.textContent = text;
  };
  Explorer.prototype.weightText = function (node) {
    var tokens = this.tokens();
    return this.words.weight(node.getAttribute("data-head"), tokens[0][+node.getAttribute("data-from")],
                             tokens[1][+node.getAttribute("data-to")], fixed(+node.getAttribute("data-weight")));
  };
  // What the readout says with nothing hovered: the kept query's largest weights (or the chosen key's weight in
  // each head), else how to get them.
  Explorer.prototype.summary = function () {
    var w = this.words, self = this;
    if (this.state.view === "model") return w.modelHint;
    var i = this.focus.query;
    if (i === null) return w.hint;
    var tokens = this.tokens(), queries = tokens[0], keys = tokens[1];
    var j = this.focus.key;
    if (j !== null) {
      return w.query(queries[i], i) + " → “" + keys[j] + "”: " + this.shown().map(function (head) {
        return w.headName(head) + " " + fixed(self.weights(head)[i][j]);
      }).join(" · ");
    }
    return w.query(queries[i], i) + ": " + this.shown().map(function (head) {
      var row = self.weights(head)[i].map(function (value, k) { return [value, k]; });
      row.sort(function (a, b) { return b[0] - a[0]; });
      return w.headName(head) + " " + row.slice(0, 3).map(function (pair) {
        return "“" + keys[pair[1]] + "” " + fixed(pair[0]);
      }).join(", ");
    }).join(" | ");
  };
  // Beside each key in the lines view, the kept query's weight, when one head is drawn.
  Explorer.prototype.numbers = function () {
    var group = this.linesBox.querySelector(".tfm-x-nums");
    if (!group) return;
    var shown = this.shown(), i = this.focus.query, x = this.numbersAt, y = this.rowY, j = this.focus.key;
    var markup = [];
    if (i !== null && shown.length === 1) {
      this.weights(shown[0])[i].forEach(function (value, k) {
        markup.push("<text x=\"" + x + "\" y=\"" + (y(k) + 4) + "\" class=\"tfm-x-num" + (k === j ? " tfm-x-kept" : "") +
                    "\">" + value.toFixed(2) + "</text>");
      });
    }
    group.innerHTML = markup.join("");
  };

  // Keeps only query `index`'s row (null: every row), in both views: one class on the root and one per row group.
  Explorer.prototype.keep = function (index) {
    if (index === this.focus.query) return;
    this.focus = {query: index, key: null};
    this.root.classList.toggle("tfm-x-focused", index !== null);
    if (index !== null) this.root.setAttribute("data-focus", index);
    else this.root.removeAttribute("data-focus");
    each(this.root.querySelectorAll(".tfm-x-kept"), function (node) { node.classList.remove("tfm-x-kept"); });
    if (index !== null) {
      each(this.root.querySelectorAll("[data-row=\"" + index + "\"], [data-query=\"" + index + "\"]"),
           function (node) { node.classList.add("tfm-x-kept"); });
    }
    this.numbers();
    this.say(this.summary());
  };

  // Moves the kept query's key cursor by `by` keys (0: clears it): the readout gives that key's weight in each head.
  Explorer.prototype.step = function (by) {
    if (this.focus.query === null) return;
    var keys = this.tokens()[1].length, j = this.focus.key;
    this.focus.key = by === 0 ? null : j === null ? (by > 0 ? 0 : keys - 1) : Math.max(0, Math.min(keys - 1, j + by));
    each(this.root.querySelectorAll("[data-key].tfm-x-kept"), function (node) { node.classList.remove("tfm-x-kept"); });
    if (this.focus.key !== null) {
      each(this.root.querySelectorAll("[data-key=\"" + this.focus.key + "\"]"),
           function (node) { node.classList.add("tfm-x-kept"); });
    }
    this.numbers();
    this.say(this.summary());
  };

  function start() {
    document.querySelectorAll("[data-attention-explorer]").forEach(function (root) {
      var data = window.TFM_ATTENTION_DATA;
      if (!data || !data.sentences || !data.sentences.length) {
        root.textContent = (WORDS[(document.documentElement.lang || "en").slice(0, 2)] || WORDS.en).missing;
        return;
      }
      root.explorer = new Explorer(root, data);
    });
    // The page around an explorer (its notes): Korean breaks between words there too (explorer.css).
    document.querySelectorAll(".md-typeset").forEach(function (page) {
      if (page.querySelector("[data-attention-explorer]")) page.classList.add("tfm-x-page");
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
