"""The Korean edition (한국어판) is tied to the English one by construction (tools/korean.py):

- every English notebook has a Korean copy in notebooks/ko/ whose code cells are the English ones, byte for byte,
  and whose markdown cells each record the hash of the English cell they translate, and hold Hangul;
- a change to the English marks its translation stale; a missing or Hangul-free translation is refused;
- the glossary's terms (docs/ko/glossary.md) are written the same way in every notebook;
- the Korean executed copies (docs/course/ko/) are the English executed copies' outputs with the Korean markdown,
  built without a second execution, current, and printing no machine path.

The website's Korean pages and Hangul search are checked in tests/test_site.py.
"""

import copy
import importlib.util
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import korean  # noqa: E402

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
    terms = [english.lower() for english, _ in rows]
    assert len(rows) >= 40 and len(terms) == len(set(terms))
    kept_english = {"self-attention", "multi-head attention", "scaled dot-product attention", "positional encoding",
                    "residual connection", "layer normalization", "dropout", "label smoothing", "warm-up",
                    "softmax", "transformer"}
    for english, forms in rows:
        assert korean.HANGUL.search(" ".join(forms)) or english.lower() in kept_english, english


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
    glossary = [("encoder", ("인코더",)), ("decoder", ("디코더",)), ("beam search", ("빔 서치",))]
    assert korean.glossary_problems(english, translated, glossary) == []
    translated["cells"][2]["source"] = ["해독기가 읽습니다."]
    assert korean.glossary_problems(english, translated, glossary) == ["cell m1: 'decoder' -> one of ['디코더']"]
    # Code and formulas are not prose: `decoder` in backticks asks for nothing.
    english["cells"][2]["source"] = ["`decoder(x)` reads it."]
    assert korean.glossary_problems(english, translated, glossary) == []


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
