"""The Korean edition (한국어판) is tied to the English one by construction (tools/korean.py):

- every English notebook has a Korean copy in notebooks/ko/ whose code cells are the English ones, byte for byte,
  and whose markdown cells each record the hash of the English cell they translate, and hold Hangul;
- a change to the English marks its translation stale; a missing or Hangul-free translation is refused;
- the glossary's terms (docs/ko/glossary.md) are written the same way in every notebook, and no notebook, Korean
  page or Korean checker message writes a variant the glossary bans (prose only: code, formulas, link targets and
  English quotations left out; the case compared too);
- one register (-세요, never -십시오) in the notebooks, the pages and the checkers' Korean messages, which hold no
  semicolon; every emphasis renders under CommonMark; each notebook's H1 is its navigation label; "노트북 NN" links
  open the Korean page; every exercise section says how to get Korean messages (`%env TFM_LANG=ko`);
- the Korean executed copies (docs/course/ko/) are the English executed copies' outputs with the Korean markdown,
  built without a second execution, current, and printing no machine path;
- the exercises ask in one form (-ㅂ니까? / -습니까?), and every English quotation of the paper (a blockquote line
  or an inline "…") is the English notebook's, verbatim;
- the hand-written course index is tied to the English one as the notebooks are: it records the English page it
  translates, and a change to the English index (its run times aside) makes `tools/korean.py check` fail.

The website's Korean pages and Hangul search are checked in tests/test_site.py.
"""

import ast
import copy
import html as htmllib
import importlib.util
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import korean  # noqa: E402  (found on sys.path once tools/ is added)

_spec = importlib.util.spec_from_file_location("make_course", ROOT / "tools" / "make_course.py")
make_course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_course)

ENGLISH = korean.english_notebooks()
NAMES = [path.name for path in ENGLISH]


def pair(name):
    return korean.read(korean.ENGLISH / name), korean.read(korean.KOREAN / name)


@pytest.mark.parametrize("name", NAMES)
def test_every_notebook_has_a_current_korean_copy(name):
    assert (korean.KOREAN / name).exists(), f"no notebooks/ko/{name}: python tools/korean.py worksheet {name[:2]}"
    english, translated = pair(name)
    assert korean.problems(english, translated) == []
    assert [korean.text(c) for c in english["cells"] if c["cell_type"] == "code"] == \
        [korean.text(c) for c in translated["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("name", NAMES)
def test_the_glossary_is_used_alike_in_every_notebook(name):
    english, translated = pair(name)
    assert korean.glossary_problems(english, translated) == []


def test_the_glossary_lists_each_term_once_with_hangul_or_a_kept_english_form():
    rows = korean.read_glossary()
    terms = [term.english.lower() for term in rows]
    assert len(rows) >= 60 and len(terms) == len(set(terms))
    kept_english = {"self-attention", "masked self-attention", "multi-head attention", "scaled dot-product attention",
                    "positional encoding", "residual connection", "layer normalization", "dropout", "label smoothing",
                    "warm-up", "softmax", "boolean", "transformer"}
    for term in rows:
        assert korean.HANGUL.search(" ".join(term.forms)) or term.english.lower() in kept_english, term
        # A banned variant is never one of the term's own forms (nor one that a form contains, as 층 in 레이어 is not).
        for variant, _ in term.banned:
            assert variant not in term.forms, term


# Every term the review of the Korean edition (issue 50) found written several ways, with the variants it found.
ONE_WAY = {
    "epoch": ("에폭", {"에포크", "epoch"}),
    "layer": ("레이어", {"층"}),
    "fast mode": ("빠른 모드", {"fast 모드", "Fast 모드"}),
    "full setting": ("전체 설정", {"full 설정"}),
    "section (of a notebook; the paper's are §N)": ("N절 (1절, 이 절, 앞 절)", {"섹션"}),
    "logit": ("로짓", {"logit"}),
    "Table (the paper's Table N)": ("표 N", {"Table"}),
    "Figure (the paper's Figure N)": ("그림 N", {"Figure"}),
    "corpus": ("코퍼스", {"말뭉치"}),
    "run folder": ("실행 폴더", {"run 폴더"}),
    "auto-regressive": ("자기회귀", {"auto-regressive"}),
    "Jacobian": ("야코비안", {"Jacobian"}),
    "step (training step)": ("스텝", {"학습 단계"}),
    "target (of a translation, of a loss)": ("타깃", {"목표"}),
    "machine (the computer)": ("머신", {"기계"}),
    "course (this course)": ("강의", {"코스", "수업", "이 과정"}),
    "self-attention": ("Self-Attention", {"self-attention", "셀프 어텐션"}),
    "masked self-attention": ("Masked Self-Attention", {"masked self-attention"}),
    "cross-attention": ("크로스 어텐션", {"cross-attention", "Cross-Attention"}),
    "multi-head attention": ("Multi-Head Attention", {"multi-head", "Multi-head"}),
    "positional encoding": ("Positional Encoding", {"positional encoding", "위치 인코딩"}),
}


def test_the_glossary_chooses_one_form_for_every_term_written_several_ways():
    rows = {term.english: term for term in korean.read_glossary()}
    for english, (chosen, variants) in ONE_WAY.items():
        assert english in rows, f"the glossary has no row for {english!r}"
        assert rows[english].korean == chosen, rows[english]
        assert variants <= {variant for variant, _ in rows[english].banned}, rows[english]


def test_a_banned_variant_is_found_in_prose_only_as_written_and_outside_its_exceptions():
    glossary = [korean.Term("epoch", "에폭", banned=[("에포크", ()), ("epoch", ())]),
                korean.Term("self-attention", "Self-Attention", banned=[("self-attention", ())]),
                korean.Term("layer", "레이어", banned=[("층", ())]),
                korean.Term("machine (the computer)", "머신", banned=[("기계", ("기계 번역",))])]
    found = korean.banned_variants
    assert found("세 에폭 동안 Self-Attention 레이어를 학습합니다. 은닉층과 기계 번역.", glossary) == []
    assert len(found("두 에포크 뒤", glossary)) == 1
    assert "'에포크' (epoch -> 에폭)" in found("두 에포크 뒤", glossary)[0]
    assert len(found("디코더의 self-attention", glossary)) == 1          # the case is compared too
    assert len(found("Self-Attention 층에서, 이 기계에서", glossary)) == 2
    # Code, formulas, link targets, English quotations and an English gloss after a Korean word are not its prose.
    quiet = ('`epochs=3`, $\\text{epoch}$, [에폭](runs/epoch.md), "self-attention layers are faster", '
             '자기회귀(self-attention)\n> an epoch\n')
    assert found(quiet, glossary) == []
    assert found('> "self-attention is all"\n\n디코더의 self-attention', glossary) != []
    # A quotation wrapped over two lines is still a quotation; a blank line ends the paragraph, and with it a quote.
    assert found('요지인 "self-attention layers are faster than\n  recurrent layers"는', glossary) == []
    assert found('"first.\n\n디코더의 self-attention "', glossary) != []


KOREAN_PAGES = korean.korean_pages()


@pytest.mark.parametrize("path", KOREAN_PAGES, ids=[str(p.relative_to(ROOT)) for p in KOREAN_PAGES])
def test_the_korean_pages_write_no_banned_variant(path):
    assert korean.banned_variants(path.read_text(encoding="utf-8")) == []


def _korean_messages():
    """`[(file, key, template)]`: every Korean template of tfm.exercises (the `ko=` tables of `Messages(...)`),
    read from the source, so no TensorFlow is imported."""
    found = []
    for path in sorted((ROOT / "tfm" / "exercises").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Messages":
                for keyword in node.keywords:
                    if keyword.arg == "ko" and isinstance(keyword.value, ast.Dict):
                        for key, value in zip(keyword.value.keys, keyword.value.values):
                            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                                found.append((path.name, key.value, value.value))
    return found


def _korean_markdown():
    """`[(where, text)]`: every Korean markdown cell of notebooks/ko and every Korean page, the glossary too."""
    texts = [(f"{path.name} cell {index}", korean.text(cell)) for path in sorted(korean.KOREAN.glob("*.ipynb"))
             for index, cell in enumerate(korean.read(path)["cells"]) if cell["cell_type"] == "markdown"]
    pages = [*KOREAN_PAGES, korean.GLOSSARY]
    return texts + [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) for path in pages]


def test_one_register_for_the_reader_in_the_notebooks_and_the_checkers_messages():
    """The reader is asked with -세요 everywhere (the glossary page says so), never -십시오."""
    messages = _korean_messages()
    assert len(messages) >= 100
    formal = [where for where, text in _korean_markdown() if "십시오" in korean.prose(text)]
    formal += [f"{name} {key}" for name, key, template in messages if "십시오" in template]
    assert formal == []
    assert any("세요" in template for _, _, template in messages)


def test_the_korean_checker_messages_have_no_semicolon_and_no_arrow():
    """Korean prose rarely uses a semicolon; a shape change is said in Korean word order ("…를 …로 나눕니다")."""
    wrong = [(name, key, template) for name, key, template in _korean_messages()
             if korean.HANGUL.search(template) and (";" in template or "->" in template)]
    assert wrong == []


def test_the_korean_checker_messages_write_terms_as_the_glossary_says():
    """An argument's name before its value ("logits {logits}", "y_true {y}") is code, not prose."""
    glossary = korean.read_glossary()
    wrong = [(name, key, found) for name, key, template in _korean_messages()
             for found in korean.banned_variants(re.sub(r"[A-Za-z_]+ \{\w*\}", " ", template), glossary)]
    assert wrong == []


def _rendered_text(markdown):
    """The text a CommonMark renderer shows of a markdown text, without its code (formulas set aside first)."""
    from markdown_it import MarkdownIt  # markdown-it-py, installed with keras (rich) and jupytext

    without_formulas = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", markdown, flags=re.S)
    html = MarkdownIt("commonmark").enable("table").render(without_formulas)
    html = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", " ", html, flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", " ", html))


def test_every_emphasis_in_the_korean_markdown_renders():
    """CommonMark closes `**…**` before Hangul only when the closing `**` follows no punctuation: "**선형화**(…)하고",
    not "**선형화(…)**하고". A `*` left in the rendered text is an emphasis that did not render."""
    assert "*" in _rendered_text("**선형화(linearize)**하고") and "*" not in _rendered_text("**선형화**(linearize)하고")
    literal = [(where, text[max(0, i - 30):i + 30]) for where, markdown in _korean_markdown()
               for text in [_rendered_text(markdown)] for i in [text.find("*")] if i >= 0]
    assert literal == []


def _korean_nav():
    """`{notebook file: label}` from the Korean section of mkdocs.yml's nav ("- 04 Multi-Head Attention: …")."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    return {match["file"]: match["label"] for match in
            re.finditer(r"^\s*- \d\d (?P<label>.+): course/ko/(?P<file>\d\d_\w+\.ipynb)\s*$", nav, re.M)}


@pytest.mark.parametrize("name", NAMES)
def test_the_h1_of_each_korean_notebook_is_its_navigation_label(name):
    """`# NN · <label>`, optionally followed by ": …" or ", …" (a subtitle); the course index's row says the same."""
    label = _korean_nav()[name]
    h1 = korean.text(korean.read(korean.KOREAN / name)["cells"][0]).splitlines()[0]
    prefix = f"# {name[:2]} · {label}"
    assert h1 == prefix or h1.startswith((prefix + ": ", prefix + ", ")), (h1, label)
    index = (ROOT / "docs" / "course" / "ko" / "index.md").read_text(encoding="utf-8")
    assert f"[{h1.split(' · ', 1)[1]}]({name})" in index, f"course/ko/index.md's row for {name} is not its H1"


def test_notebook_links_in_the_korean_edition_point_to_korean_pages():
    """A link that says "노트북 NN" opens the Korean page of notebook NN."""
    links = 0
    for where, markdown in _korean_markdown():
        base = (ROOT / "docs" / "course" / "ko") if ".ipynb cell" in where else (ROOT / where).parent
        for match in re.finditer(r"\[노트북 (\d\d)\]\(([^)#]+)", markdown):
            target = (base / match[2]).resolve()
            assert target.parent == (ROOT / "docs" / "course" / "ko").resolve() and target.name[:2] == match[1] \
                and target.exists(), (where, match[0])
            links += 1
    assert links >= 2


@pytest.mark.parametrize("name", NAMES)
def test_the_exercises_say_how_to_get_korean_messages(name):
    """The code cells are the English ones, so the markdown says how to switch the checkers: `%env TFM_LANG=ko`."""
    notebook = korean.read(korean.KOREAN / name)
    cells = [korean.text(cell) for cell in notebook["cells"] if cell["cell_type"] == "markdown"]
    exercises = [text for text in cells if text.startswith("## 연습 문제")]
    assert len(exercises) == 1 and "`%env TFM_LANG=ko`" in exercises[0]


def _exercises(name):
    notebook = korean.read(korean.KOREAN / name)
    return [korean.text(cell) for cell in notebook["cells"]
            if cell["cell_type"] == "markdown" and korean.text(cell).startswith("## 연습 문제")]


@pytest.mark.parametrize("name", NAMES)
def test_the_exercises_ask_in_one_form(name):
    """Every question of the exercises, titles included, asks in 합니다체 (-ㅂ니까? / -습니까?), as the prose around
    it is written: not -나요?, -까요?, -가요? or a question that ends in a period."""
    asked, other = 0, []
    for text in _exercises(name):
        words = korean.own_prose(text)
        for match in re.finditer(r"([가-힣]+)\?", words):
            asked += 1
            if not match[1].endswith("니까"):
                other.append(words[max(0, match.start() - 30):match.end()])
        other += [match[0] for match in re.finditer(r"[가-힣]*(?:까요|나요|가요)\.", words)]
    assert other == [], other
    assert asked >= 1


def test_the_exercises_asked_in_two_forms_before_review_6():
    """The counts the issue gives (42 -습니까?, 15 -나요?) were the exercises' before this edition's review: the check
    above tells the two apart."""
    words = "어느 것입니까? 그 변화는 왜 방향으로 읽지 않나요? 무엇이 필요할까요."
    assert [m[1][-2:] for m in re.finditer(r"([가-힣]+)\?", words)] == ["니까", "나요"]
    assert re.findall(r"[가-힣]*(?:까요|나요|가요)\.", words) == ["필요할까요."]


def _normal(text):
    return " ".join(korean.prose(text).split())


@pytest.mark.parametrize("name", NAMES)
def test_every_english_quotation_is_the_english_notebooks_verbatim(name):
    """A quotation of the paper stays in English, word for word as the English cell has it (line breaks aside): each
    English blockquote line, and each inline "…" of 20 characters or more without Hangul."""
    english, translated = pair(name)
    altered = []
    for en, ko in zip(english["cells"], translated["cells"]):
        if ko["cell_type"] != "markdown":
            continue
        source, text = _normal(korean.text(en)), korean.text(ko)
        quotes = [line.lstrip(">") for line in text.splitlines()
                  if line.startswith(">") and line.strip("> ") and not korean.HANGUL.search(line)]
        quotes += [match[1] for match in re.finditer(r'"((?:[^"가-힣\n]|\n(?![ \t]*\n))*)"', korean.prose(text))
                   if len(match[1]) >= 20]  # outside code: a string in backticks is code, not a quotation
        altered += [quote.strip() for quote in quotes if _normal(quote) not in source]
    assert altered == []


def _tiny():
    return {"cells": [
        {"cell_type": "markdown", "id": "m0", "metadata": {}, "source": ["# 01 · The encoder\n", "An encoder."]},
        {"cell_type": "code", "id": "c0", "metadata": {}, "source": ["x = 1"], "outputs": [], "execution_count": 3},
        {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["A decoder reads it."]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_a_worksheet_round_trip_writes_hashes_and_copies_code():
    english = _tiny()
    sheet = korean.worksheet(english)
    assert sheet.count("<<<cell ") == 2 and "<<<ko>>>\n\n<<<end>>>" in sheet
    filled = sheet.replace("An encoder.\n<<<ko>>>\n", "An encoder.\n<<<ko>>>\n# 01 · 인코더\n인코더입니다.", 1)
    filled = filled.replace("A decoder reads it.\n<<<ko>>>\n", "A decoder reads it.\n<<<ko>>>\n디코더가 읽습니다.", 1)
    translated = korean.apply(english, korean.parse_worksheet(filled))
    assert korean.problems(english, translated) == []
    assert translated["cells"][1]["source"] == ["x = 1"] and translated["cells"][1]["execution_count"] is None
    assert translated["cells"][0]["metadata"]["tfm_ko"]["en_sha256"] == korean.digest(english["cells"][0])
    assert "STALE" not in korean.worksheet(english, translated)
    assert "디코더가 읽습니다." in korean.worksheet(english, translated)


def test_a_changed_english_cell_makes_its_translation_stale_and_a_changed_code_cell_is_drift():
    english = _tiny()
    translated = korean.apply(english, {"m0": "# 01 · 인코더", "m1": "디코더가 읽습니다."})
    edited = copy.deepcopy(english)
    edited["cells"][2]["source"] = ["A decoder reads the encoder's output."]
    assert any("m1" in p and "stale" in p for p in korean.problems(edited, translated))
    assert "<<<cell m1 STALE>>>" in korean.worksheet(edited, translated)
    edited = copy.deepcopy(english)
    edited["cells"][1]["source"] = ["x = 2"]
    assert korean.problems(edited, translated) == ["code cell 1 differs from the English"]
    edited["cells"].append({"cell_type": "markdown", "id": "m2", "metadata": {}, "source": ["More."]})
    assert "added, removed or moved" in korean.problems(edited, translated)[0]


def test_a_missing_or_untranslated_cell_is_refused():
    english = _tiny()
    with pytest.raises(ValueError, match=r"without a translation: \['m1'\]"):
        korean.apply(english, {"m0": "# 01 · 인코더"})
    with pytest.raises(ValueError, match=r"without Hangul: \['m1'\]"):
        korean.apply(english, {"m0": "# 01 · 인코더", "m1": "A decoder reads it."})


def test_the_glossary_check_names_the_cell_and_the_expected_forms():
    english = _tiny()
    translated = korean.apply(english, {"m0": "# 01 · 인코더", "m1": "디코더가 읽습니다."})
    glossary = [korean.Term("encoder", "인코더"), korean.Term("decoder", "디코더"),
                korean.Term("beam search", "빔 서치")]
    assert korean.glossary_problems(english, translated, glossary) == []
    translated["cells"][2]["source"] = ["해독기가 읽습니다."]
    assert korean.glossary_problems(english, translated, glossary) == ["cell m1: 'decoder' -> one of ['디코더']"]
    # The English term itself (a gloss) also counts; a banned variant is reported with its cell.
    translated["cells"][2]["source"] = ["decoder가 읽습니다."]
    assert korean.glossary_problems(english, translated, glossary) == []
    glossary.append(korean.Term("decoder (again)", "디코더", banned=[("decoder", ())]))
    assert korean.glossary_problems(english, translated, glossary)[0].startswith("cell m1: 'decoder' (decoder (again)")
    glossary.pop()
    # Code and formulas are not prose: `decoder` in backticks asks for nothing.
    english["cells"][2]["source"] = ["`decoder(x)` reads it."]
    assert korean.glossary_problems(english, translated, glossary) == []


def test_a_rename_in_backticks_is_carried_over_and_a_changed_sentence_is_not():
    old, new = "Use `tfm.decoding.evaluation.score` here.", "Use `tfm.decoding.bleu.score` here."
    korean_text = "여기서는 `tfm.decoding.evaluation.score`를 씁니다."
    assert korean.carry_renames(old, new, korean_text) == "여기서는 `tfm.decoding.bleu.score`를 씁니다."
    assert korean.carry_renames(old, "Use `tfm.decoding.bleu.score` twice.", korean_text) is None  # prose changed
    assert korean.carry_renames(old, new, "여기서는 점수를 셉니다.") is None  # the Korean does not name it


COPIES = sorted((ROOT / "docs" / "course" / "ko").glob("[0-9][0-9]_*.ipynb"))


def test_every_english_executed_copy_has_a_korean_one():
    english = sorted(p.name for p in (ROOT / "docs" / "course").glob("[0-9][0-9]_*.ipynb"))
    assert [p.name for p in COPIES] == english


@pytest.mark.parametrize("path", COPIES, ids=[p.name for p in COPIES])
def test_the_korean_executed_copy_is_built_from_the_english_one_and_current(path):
    executed = korean.read(ROOT / "docs" / "course" / path.name)
    built = korean.read(path)
    assert built == korean.build_copy(executed, korean.read(korean.KOREAN / path.name)), \
        "stale: python tools/korean.py build"
    for cell, original in zip(built["cells"], executed["cells"]):
        if cell["cell_type"] == "code":
            assert cell["source"] == original["source"] and cell["outputs"] == original["outputs"]
        else:
            assert korean.HANGUL.search(korean.text(cell)), f"an English cell left in {path.name}"
    assert not make_course.output_noise(built), make_course.output_noise(built)[:3]


def test_the_korean_course_pages_are_in_the_site_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for path in COPIES:
        assert f"course/ko/{path.name}" in nav
    for page in ("ko/index.md", "ko/glossary.md", "course/ko/index.md"):
        assert page in nav and (ROOT / "docs" / page).exists()
    assert "- 한국어:" in nav and "lang: ko" in nav  # the section and the header's language switch


def test_the_korean_course_index_lists_every_copy_with_the_english_run_time():
    spec = importlib.util.spec_from_file_location("docs_site", ROOT / "tools" / "docs_site.py")
    docs_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(docs_site)
    index = (ROOT / "docs" / "course" / "ko" / "index.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in index.splitlines() if line.startswith("| ")}
    for path in COPIES:
        seconds = docs_site.record(korean.read(ROOT / "docs" / "course" / path.name))["seconds"]
        row = rows.get(path.name[:2], "")
        assert f"]({path.name})" in row, f"course/ko/index.md has no row for {path.name}"
        english = docs_site.run_time(seconds)  # "26 min", "9.1 min", "16 s" -> "26분", "9.1분", "16초"
        assert english.replace(" min", "분").replace(" s", "초") in row, (path.name, english, row)
    # The total, as the English index gives it ("2 h 46 min in all" -> "합쳐 2시간 46분"); both are written by
    # `tools/docs_site.py --course-index`.
    total = re.search(r"(\d+) h (\d+) min in all", (ROOT / "docs" / "course" / "index.md").read_text(encoding="utf-8"))
    assert f"합쳐 {int(total.group(1))}시간 {int(total.group(2))}분" in index, total.group(0)


# --- The course index, tied to the English one -----------------------------------------------------------------------

def test_the_korean_course_index_translates_the_english_one_as_it_is():
    assert set(korean.TIED_PAGES) == {ROOT / "docs" / "course" / "ko" / "index.md"}
    assert korean.page_staleness() == {}, "translate docs/course/index.md's change, then tools/korean.py record-page"


def test_a_change_to_the_english_course_index_alone_makes_the_check_fail(tmp_path, monkeypatch, capsys):
    """As for a notebook's cells: the Korean index records the English index it translates; an English edit marks it
    stale and `tools/korean.py check` fails, even with every notebook current, until it is translated and recorded.
    The run times, which tools/docs_site.py rewrites in both pages from the copies' records, are not an edit."""
    english, translated = tmp_path / "index.md", tmp_path / "ko" / "index.md"
    translated.parent.mkdir()
    english.write_text((ROOT / "docs" / "course" / "index.md").read_text(encoding="utf-8"), encoding="utf-8")
    translated.write_text((ROOT / "docs" / "course" / "ko" / "index.md").read_text(encoding="utf-8"), encoding="utf-8")
    pages = {translated: english}
    monkeypatch.setattr(korean, "TIED_PAGES", pages)
    assert list(korean.page_staleness()) == [str(translated)]  # it records the real English page, not this one
    korean.record_page(translated)
    assert korean.page_staleness() == {} and korean.main(["check"]) == 0
    assert "every Korean notebook is current" in capsys.readouterr().out

    text = english.read_text(encoding="utf-8")
    row = re.search(r"^\| 06 \|.*\| (?P<time>[^|]+) \|$", text, re.M)
    rerun = text.replace(row[0], row[0].replace(row["time"], "59 min"))
    rerun = re.sub(r"\d+ h \d+ min in all", "9 h 59 min in all", rerun)
    assert rerun != text
    english.write_text(rerun, encoding="utf-8")
    assert korean.page_staleness() == {}

    english.write_text(rerun.replace("Thirteen notebooks, meant to be read in order",
                                     "Thirteen notebooks, to be read in order"), encoding="utf-8")
    problems = korean.page_staleness()
    assert list(problems) == [str(translated)] and "stale" in problems[str(translated)][0], problems
    assert korean.check_all() == {}  # every notebook current: the index alone fails the check
    assert korean.main(["check"]) == 1
    out = capsys.readouterr().out
    assert "stale" in out and "record-page" in out and "1 notebook(s) or page(s) to fix" in out
    korean.record_page(translated)
    assert korean.page_staleness() == {} and translated.read_text(encoding="utf-8").count("<!-- tfm_ko:") == 1


def test_a_stale_index_names_the_commit_it_was_translated_from():
    """`check` says which English version the Korean index translates, so `git diff` shows what to translate."""
    text = (ROOT / "docs" / "course" / "index.md").read_text(encoding="utf-8")
    recorded = korean.page_record((ROOT / "docs" / "course" / "ko" / "index.md").read_text(encoding="utf-8"))
    assert recorded == ("docs/course/index.md", korean.page_digest(text))
    committed = korean.translated_from(ROOT / "docs" / "course" / "index.md", recorded[1])
    assert committed is None or re.fullmatch(r"[0-9a-f]{7,}", committed)


def test_build_names_what_it_wrote_outside_the_repository(tmp_path, capsys):
    """`tools/korean.py build --output DIR` with DIR outside the checkout prints the absolute paths it wrote (it
    crashed on `relative_to`)."""
    if korean.check_all():
        pytest.skip("a Korean notebook is stale: tools/korean.py check")
    korean.main(["build", "--output", str(tmp_path)])
    wrote = [line.removeprefix("wrote ") for line in capsys.readouterr().out.splitlines() if line.startswith("wrote ")]
    assert wrote and all(pathlib.Path(p).parent == tmp_path.resolve() and pathlib.Path(p).exists() for p in wrote)
