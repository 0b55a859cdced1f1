// The attention explorer (docs/explorer.md, docs/ko/explorer.md): every attention weight of notebook 08's trained
// model for a few test sentences, drawn two ways. The data is window.TFM_ATTENTION_DATA, which
// docs/explorer/attention_data.js (tools/attention_explorer.py) assigns: a script, not a JSON file, so that the page
// works opened from the disk (file://) too. Plain JavaScript and SVG; no library, nothing from the network.
//
// The page holds `<div data-attention-explorer>`; this script fills it with four <select> controls named sentence,
// kind, layer and head ("all" = every head, each its own colour, as bertviz's head view), a caption naming the
// layer and head as the paper does (§3.2.2), and two views of the same numbers: lines from each query token to
// each key token (their opacity the weight) and a matrix (one per head). Every drawn weight, line or cell,
// carries data-from (the query's index), data-to (the key's index), data-weight (the weight, 0-1) and data-head.
// Hovering or focusing a query token (Tab, then the arrow keys) keeps only its row: what it attends to.
(function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";
  var KINDS = ["encoder_self_attention", "decoder_self_attention", "cross_attention"];
  // One colour per head (all heads at once); readable on the light and the dark scheme.
  var COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#393b79", "#ad494a", "#637939", "#7b4173", "#e7ba52", "#3182bd"];
  var SUB = "₀₁₂₃₄₅₆₇₈₉";
  function sub(n) { return String(n).split("").map(function (d) { return SUB[+d]; }).join(""); }

  var WORDS = {
    en: {
      sentence: "Sentence", kind: "Attention", layer: "Layer", head: "Head", all: "all heads",
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
      source: "source", prepared: "as the model reads it", output: "beam search output", reference: "reference",
      why: "why this sentence", whyKey: "why",
      caption: function (kind, layer, layers, head, heads) {
        var where = {encoder_self_attention: "Encoder " + layerName(this, layer, layers) + ", self-attention",
                     decoder_self_attention: "Decoder " + layerName(this, layer, layers) + ", masked self-attention",
                     cross_attention: "Decoder " + layerName(this, layer, layers) + ", encoder-decoder attention"}[kind];
        var from = {encoder_self_attention: "queries, keys and values all from the encoder's previous layer",
                    decoder_self_attention: "queries, keys and values from the decoder's previous layer, each " +
                                            "position seeing only the positions up to its own",
                    cross_attention: "queries from the decoder, keys and values from the encoder's output (§3.2.3)"}[kind];
        var which = head === "all"
          ? "all " + heads + " heads, one colour each (head" + sub(1) + " … head" + sub(heads) + " of §3.2.2)"
          : "head " + head + " of " + heads + ": head" + sub(head + 1) + " in §3.2.2's MultiHead(Q, K, V) = " +
            "Concat(head" + sub(1) + ", …, head" + sub(heads) + ")W" + "ᴼ";
        return where + ", " + which + "; " + from + ".";
      },
      provenance: function (p) {
        return "Weights of the run " + p.run + (p.preset ? " (" + p.preset + ")" : "") +
          (p.epochs ? ", " + p.epochs + " epochs" : "") + (p.weights ? ", " + p.weights : "") +
          ", beam " + p.beam_size + ", α = " + p.alpha + "; written " + p.date + " by tfm " + p.tfm_version +
          " (tools/attention_explorer.py).";
      },
      missing: "The explorer's data (explorer/attention_data.js) did not load."
    },
    ko: {
      sentence: "문장", kind: "어텐션", layer: "레이어", head: "헤드", all: "모든 헤드",
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
      source: "소스", prepared: "모델이 읽는 형태", output: "빔 서치 출력", reference: "정답 번역",
      why: "이 문장을 고른 이유", whyKey: "why_ko",
      caption: function (kind, layer, layers, head, heads) {
        var where = {encoder_self_attention: "인코더 " + layerName(this, layer, layers) + "의 Self-Attention",
                     decoder_self_attention: "디코더 " + layerName(this, layer, layers) + "의 Masked Self-Attention",
                     cross_attention: "디코더 " + layerName(this, layer, layers) + "의 인코더-디코더 어텐션"}[kind];
        var from = {encoder_self_attention: "쿼리, 키, 값이 모두 인코더의 이전 레이어에서 옵니다",
                    decoder_self_attention: "쿼리, 키, 값이 디코더의 이전 레이어에서 오고, 각 위치는 자기 위치까지만 봅니다",
                    cross_attention: "쿼리는 디코더에서, 키와 값은 인코더의 출력에서 옵니다 (§3.2.3)"}[kind];
        var which = head === "all"
          ? "헤드 " + heads + "개 모두, 헤드마다 한 색 (§3.2.2의 head" + sub(1) + " … head" + sub(heads) + ")"
          : heads + "개 중 헤드 " + head + ": §3.2.2의 MultiHead(Q, K, V) = Concat(head" + sub(1) + ", …, head" +
            sub(heads) + ")Wᴼ에서 head" + sub(head + 1);
        return where + ", " + which + ". " + from + ".";
      },
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

  function select(name, label, options, value) {
    var wrap = el("label", {"class": "tfm-x-control"});
    wrap.appendChild(el("span", {}, label));
    var box = el("select", {name: name});
    options.forEach(function (option) {
      var item = el("option", {value: String(option[0])}, option[1]);
      if (String(option[0]) === String(value)) item.selected = true;
      box.appendChild(item);
    });
    wrap.appendChild(box);
    return wrap;
  }

  function Explorer(root, data) {
    this.root = root;
    this.data = data;
    var lang = (root.closest("[lang]") || document.documentElement).getAttribute("lang") || "en";
    this.words = WORDS[lang.slice(0, 2)] || WORDS.en;
    this.state = {sentence: 0, kind: "cross_attention", layer: 0, head: "all"};
    this.focus = null;
    root.textContent = "";
    this.controls = el("div", {"class": "tfm-x-controls"});
    this.about = el("dl", {"class": "tfm-x-about"});
    this.caption = el("p", {"class": "tfm-x-caption", "data-caption": "", "aria-live": "polite"});
    this.legend = el("p", {"class": "tfm-x-legend"});
    this.linesBox = el("figure", {"class": "tfm-x-view tfm-x-lines", "data-view": "lines"});
    this.matrixBox = el("figure", {"class": "tfm-x-view tfm-x-matrix", "data-view": "matrix"});
    var provenance = el("p", {"class": "tfm-x-provenance"}, this.words.provenance(data.provenance || {}));
    [this.controls, this.about, this.caption, this.legend, this.linesBox, this.matrixBox, provenance]
      .forEach(function (node) { root.appendChild(node); });
    var self = this;
    root.addEventListener("change", function (event) {
      var name = event.target.name;
      if (!(name in self.state)) return;
      var value = event.target.value;
      // The layer's options are numbered from 1, as their labels and the paper (layer 5 of 6); the state from 0.
      self.state[name] = name === "kind" || (name === "head" && value === "all") ? value
        : parseInt(value, 10) - (name === "layer" ? 1 : 0);
      if (name === "sentence" || name === "kind") self.state.layer = Math.min(self.state.layer, self.layers() - 1);
      self.render();
    });
    function query(event) { return event.target.closest && event.target.closest("[data-query]"); }
    root.addEventListener("mouseover", function (event) { var q = query(event); if (q) self.keep(q); });
    root.addEventListener("mouseout", function (event) { if (query(event)) self.keep(null); });
    root.addEventListener("focusin", function (event) { var q = query(event); if (q) self.keep(q); });
    root.addEventListener("focusout", function (event) { if (query(event)) self.keep(null); });
    root.addEventListener("keydown", function (event) {
      var q = query(event);
      if (!q || (event.key !== "ArrowDown" && event.key !== "ArrowUp")) return;
      var group = Array.prototype.slice.call(q.ownerSVGElement.querySelectorAll("[data-query]"));
      var next = group[group.indexOf(q) + (event.key === "ArrowDown" ? 1 : -1)];
      if (next) { next.focus(); event.preventDefault(); }
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
  Explorer.prototype.colour = function (head) {
    return this.state.head === "all" ? COLOURS[head % COLOURS.length] : null;
  };
  // One head's map as floats: [query][key].
  Explorer.prototype.weights = function (head) {
    var scale = this.data.scale;
    return this.sentence().attention[this.state.kind][this.state.layer][head].map(function (row) {
      return row.map(function (value) { return value / scale; });
    });
  };

  Explorer.prototype.render = function () {
    var w = this.words, s = this.state, data = this.data, self = this;
    this.focus = null;
    this.controls.textContent = "";
    this.controls.appendChild(select("sentence", w.sentence, data.sentences.map(function (item, i) {
      return [i, (i + 1) + ". " + item.source];
    }), s.sentence));
    this.controls.appendChild(select("kind", w.kind, KINDS.map(function (k) { return [k, w.kinds[k]]; }), s.kind));
    var layers = [];
    for (var l = 1; l <= this.layers(); l++) layers.push([l, String(l)]);
    this.controls.appendChild(select("layer", w.layer, layers, s.layer + 1));
    var heads = [["all", w.all]];
    for (var h = 0; h < data.heads; h++) heads.push([h, w.headName(h)]);
    this.controls.appendChild(select("head", w.head, heads, s.head));

    var item = this.sentence();
    this.about.textContent = "";
    var rows = [[w.source, item.source], [w.prepared, item.prepared !== item.source ? item.prepared : null],
                [w.output, item.translation], [w.reference, item.reference], [w.why, item[w.whyKey] || item.why]];
    rows.forEach(function (row) {
      if (row[1] === null || row[1] === undefined) return;
      self.about.appendChild(el("dt", {}, row[0]));
      self.about.appendChild(el("dd", row[0] === w.output || row[0] === w.reference ? {lang: "de"} : {}, row[1]));
    });

    this.caption.textContent = w.caption(s.kind, s.layer + 1, this.layers(), s.head, data.heads);
    this.legend.textContent = "";
    if (s.head === "all") {
      this.heads().forEach(function (head) {
        var key = el("span", {"class": "tfm-x-key"});
        key.appendChild(el("span", {"class": "tfm-x-swatch", style: "background:" + self.colour(head)}));
        key.appendChild(document.createTextNode(w.headName(head)));
        self.legend.appendChild(key);
      });
    }
    this.drawLines();
    this.drawMatrices();
  };

  // The drawings are written as SVG markup and parsed once (thousands of elements: far faster than one DOM call each).
  function escape(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function token(attrs, text) {  // a token's label: its (shortened) text, the whole token as its tooltip
    return "<text " + attrs + ">" + escape(short(text)) + "<title>" + escape(text) + "</title></text>";
  }
  function picture(attrs, markup) {
    var box = document.createElement("div");
    box.innerHTML = "<svg xmlns=\"" + SVG_NS + "\" role=\"img\" class=\"tfm-x-svg\" " + attrs + ">" + markup + "</svg>";
    return box.firstChild;
  }
  function weight(head, i, j, value) {
    return " data-from=\"" + i + "\" data-to=\"" + j + "\" data-weight=\"" + value + "\" data-head=\"" + head + "\"";
  }

  Explorer.prototype.drawLines = function () {
    var w = this.words, s = this.state, self = this;
    var tokens = this.tokens(), queries = tokens[0], keys = tokens[1];
    var row = 18, top = 30, width = 340, left = 128, right = 212;
    var height = top + Math.max(queries.length, keys.length) * row + 6;
    function y(i) { return top + i * row + row / 2; }
    var markup = ["<text x=\"" + left + "\" y=\"14\" text-anchor=\"end\" class=\"tfm-x-head\">" +
                  escape(w.queries[s.kind]) + "</text>",
                  "<text x=\"" + right + "\" y=\"14\" class=\"tfm-x-head\">" + escape(w.keys[s.kind]) + "</text>",
                  "<g class=\"tfm-x-weights\">"];
    this.heads().forEach(function (head) {
      var colour = self.colour(head), style = colour ? " style=\"stroke:" + colour + "\"" : "";
      self.weights(head).forEach(function (values, i) {
        values.forEach(function (value, j) {
          markup.push("<line x1=\"" + (left + 4) + "\" y1=\"" + y(i) + "\" x2=\"" + (right - 4) + "\" y2=\"" + y(j) +
                      "\" stroke-opacity=\"" + value + "\" class=\"tfm-x-weight\"" + style + weight(head, i, j, value) + "/>");
        });
      });
    });
    markup.push("</g>");
    queries.forEach(function (text, i) {
      markup.push(token("x=\"" + left + "\" y=\"" + (y(i) + 4) + "\" text-anchor=\"end\" tabindex=\"0\" data-query=\"" + i +
                        "\" class=\"tfm-x-token tfm-x-query\"", text));
    });
    keys.forEach(function (text, j) {
      markup.push(token("x=\"" + right + "\" y=\"" + (y(j) + 4) + "\" data-key=\"" + j + "\" class=\"tfm-x-token\"", text));
    });
    var drawing = picture("viewBox=\"0 0 " + width + " " + height + "\" width=\"100%\" aria-label=\"" + escape(w.lines) +
                          "\" style=\"max-width:" + (width * 1.6) + "px\"", markup.join(""));
    this.linesBox.textContent = "";
    this.linesBox.appendChild(el("figcaption", {}, w.lines));
    this.linesBox.appendChild(drawing);
  };

  Explorer.prototype.drawMatrices = function () {
    var w = this.words, self = this;
    var tokens = this.tokens(), queries = tokens[0], keys = tokens[1];
    var all = this.state.head === "all";
    var cell = all ? 12 : 16, left = 96, top = 76;
    var width = left + keys.length * cell + 4, height = top + queries.length * cell + 4;
    var grid = el("div", {"class": "tfm-x-grid"});
    this.heads().forEach(function (head) {
      var colour = self.colour(head), style = colour ? " style=\"fill:" + colour + "\"" : "";
      var markup = [];
      keys.forEach(function (text, j) {
        var x = left + j * cell + cell / 2 + 3, y0 = top - 4;
        markup.push(token("x=\"" + x + "\" y=\"" + y0 + "\" transform=\"rotate(-60 " + x + " " + y0 + ")\" data-key=\"" + j +
                          "\" class=\"tfm-x-token tfm-x-small\"", text));
      });
      markup.push("<rect x=\"" + left + "\" y=\"" + top + "\" width=\"" + (keys.length * cell - 1) + "\" height=\"" +
                  (queries.length * cell - 1) + "\" class=\"tfm-x-back\"/>");
      self.weights(head).forEach(function (values, i) {
        // Focusable by a click, not by Tab (the lines view's tokens are the keyboard's way in: one stop per token).
        markup.push(token("x=\"" + (left - 4) + "\" y=\"" + (top + i * cell + cell - 3) + "\" text-anchor=\"end\" " +
                          "tabindex=\"-1\" data-query=\"" + i + "\" class=\"tfm-x-token tfm-x-query tfm-x-small\"", queries[i]));
        values.forEach(function (value, j) {
          markup.push("<rect x=\"" + (left + j * cell) + "\" y=\"" + (top + i * cell) + "\" width=\"" + (cell - 1) +
                      "\" height=\"" + (cell - 1) + "\" fill-opacity=\"" + value + "\" class=\"tfm-x-weight tfm-x-cell\"" +
                      style + weight(head, i, j, value) + "><title>" + escape(queries[i] + " → " + keys[j] + ": " +
                      value.toFixed(3)) + "</title></rect>");
        });
      });
      var box = el("div", {"class": "tfm-x-panel"});
      if (all) box.appendChild(el("p", {"class": "tfm-x-panel-title"}, w.headName(head)));
      box.appendChild(picture("viewBox=\"0 0 " + width + " " + height + "\" width=\"" + width + "\" height=\"" + height +
                              "\" aria-label=\"" + escape(w.matrix + " — " + w.headName(head)) + "\"", markup.join("")));
      grid.appendChild(box);
    });
    this.matrixBox.textContent = "";
    this.matrixBox.appendChild(el("figcaption", {}, w.matrix));
    this.matrixBox.appendChild(grid);
  };

  // Keeps only query `label`'s row (null: every row), in both views.
  Explorer.prototype.keep = function (label) {
    var index = label ? label.getAttribute("data-query") : null;
    if (index === this.focus) return;
    this.focus = index;
    this.root.toggleAttribute("data-focus", index !== null);
    if (index !== null) this.root.setAttribute("data-focus", index);
    Array.prototype.forEach.call(this.root.querySelectorAll("[data-from]"), function (node) {
      node.classList.toggle("tfm-x-other", index !== null && node.getAttribute("data-from") !== index);
    });
    Array.prototype.forEach.call(this.root.querySelectorAll("[data-query]"), function (node) {
      node.classList.toggle("tfm-x-kept", index !== null && node.getAttribute("data-query") === index);
    });
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
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
