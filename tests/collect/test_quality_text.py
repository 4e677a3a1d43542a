"""Quality checks of the text annotators write: paraphrase copies (PINC against the source), the paraphrase
export's source sentence, and the [quality] table's errors."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest

from collect.collect_studies import write_study
from ngrameval.collect import export, quality
from ngrameval.collect.store import Store
from ngrameval.collect.study import StudyError, load_study
from ngrameval.corpus.msvd import read_corpus

SOURCES = {
    "s1": "The committee postponed the vote until next week.",
    "s2": "A man is slicing a tomato on a wooden board.",
    "s3": "The children played football in the park after school.",
}
HONEST = {
    "s1": "The vote was put off by the committee for a week.",
    "s2": "Someone cuts a tomato into slices on a chopping board.",
    "s3": "After classes the kids had a game of soccer in the park.",
}


def _checks(by_annotator: dict[str, dict[str, str]]) -> dict[str, quality.AnnotatorCheck]:
    by_stim: dict[str, list[tuple[str, str]]] = {k: [] for k in SOURCES}
    who: list[tuple[str, str, int]] = []
    for a, texts in by_annotator.items():
        for k, text in texts.items():
            who.append((a, k, len(by_stim[k])))
            by_stim[k].append((text, "English"))
    checks = quality.description_checks(by_stim, "English", SOURCES)
    per: dict[str, list[quality.DescriptionCheck]] = {a: [] for a in by_annotator}
    for a, k, i in who:
        per[a].append(checks[k, i])
    return quality.annotator_checks(per)


def test_a_worker_who_pastes_the_source_is_flagged() -> None:
    """Issue 27: a worker who pasted the source three times went unflagged."""
    shouted = {k: v.upper() for k, v in SOURCES.items()}  # a copy in capitals is still a copy
    ann = _checks({"copier": dict(SOURCES), "shouter": shouted, "honest": HONEST})
    assert ann["copier"].copies == 3 and "copy" in ann["copier"].flags and ann["copier"].mean_pinc == 0.0
    assert ann["shouter"].copies == 3 and "copy" in ann["shouter"].flags
    assert ann["honest"].copies == 0 and "copy" not in ann["honest"].flags
    assert ann["honest"].mean_pinc is not None and ann["honest"].mean_pinc > 0.5


def test_copy_threshold_and_describe_studies() -> None:
    src = "a man is slicing a tomato"
    by = {"s": [(src + " .", "English"), ("a man slices a red tomato", "English")]}
    loose = quality.description_checks(by, "English", {"s": src}, quality.Rules(copy_pinc=0.3))
    strict = quality.description_checks(by, "English", {"s": src}, quality.Rules(copy_pinc=0.0))
    assert loose["s", 0].pinc is not None and 0 < loose["s", 0].pinc < 0.3 and loose["s", 0].copy
    assert not strict["s", 0].copy and not loose["s", 1].copy  # copy_pinc = 0 turns the check off
    plain = quality.description_checks(by, "English")  # a describe study has no source: no PINC, no copy
    assert plain["s", 0].pinc is None and not plain["s", 0].copy
    assert quality.source_pinc([("", src), (src, src)]) == [None, 0.0]  # nothing written: no score


def _paraphrase_store(tmp_path: Path, quality_table: str = "") -> Store:
    path = write_study(tmp_path)
    path.write_text(path.read_text().replace('kind = "describe"', 'kind = "paraphrase"') + quality_table)
    rows = "".join(f"{k},text,,,,{v}\n" for k, v in SOURCES.items())
    (tmp_path / "stimuli.csv").write_text("id,kind,src,start,end,text\n" + rows)
    store = Store(load_study(path))
    store.init()
    return store


def test_paraphrase_export_carries_the_source(tmp_path: Path) -> None:
    store = _paraphrase_store(tmp_path)
    aid = store.annotator_for("prolific", "P1")
    while (got := store.lease_stimulus(aid)) is not None:
        stim, lease = got
        assert store.submit_description(aid, lease.token, HONEST[stim.key], "English", "").outcome == "stored"
    text = export.descriptions_csv(store)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["VideoID"], r["Description"], r["SourceSentence"]) for r in rows] == [
        (k, HONEST[k], SOURCES[k]) for k in SOURCES
    ]
    path = tmp_path / "descriptions.csv"
    path.write_text(text)
    assert [(d.clip, d.text) for d in read_corpus(path)] == [(f"{k}_0_0", HONEST[k]) for k in SOURCES]  # MSVD


def test_quality_table_errors(tmp_path: Path) -> None:
    assert _paraphrase_store(tmp_path / "a", "[quality]\ncopy_pinc = 0.2\n").study.quality.copy_pinc == 0.2
    for table, message in [
        ("[quality]\ncopy_pinc = 1.5\n", "[quality]: key 'copy_pinc' must be in [0, 1], got 1.5"),
        ('[quality]\ncopy_pinc = "low"\n', "[quality]: key 'copy_pinc' must be int or float"),
        ("[quality]\ncopy = 1\n", "[quality]: unknown key(s) copy"),
    ]:
        with pytest.raises(StudyError) as err:
            _paraphrase_store(tmp_path / "b", table)
        assert message in str(err.value)


def test_a_german_description_declared_english_is_flagged() -> None:
    """Issue 27: only the declared language was checked; the text itself is now identified (py3langid)."""
    detect = quality.language_detector()
    by = {
        "s": [
            ("Ein Mann schneidet eine Tomate.", "English"),
            ("A man is slicing a tomato.", "English"),
            ("Ein Mann", "English"),  # under language_min_words: never flagged
        ]
    }
    checks = quality.description_checks(by, "English", detect=detect)
    german, english, short = checks["s", 0], checks["s", 1], checks["s", 2]
    assert german.detected == "de" and german.detected_p is not None and german.detected_p >= 0.7
    assert german.wrong_language and not german.other_language  # declared English, written German
    assert not english.wrong_language and not short.wrong_language
    ann = quality.annotator_checks({"g": [german], "e": [english]})
    assert ann["g"].wrong_language == 1 and "detected-language" in ann["g"].flags
    assert "detected-language" not in ann["e"].flags
    assert quality.description_checks(by, "English")["s", 0].detected is None  # no detector: not checked


def test_language_check_is_conservative_on_short_english() -> None:
    """Crowd descriptions that py3langid, answering among all its 97 languages, took for Afrikaans, Nigerian
    Pidgin or Tagalog with probability >= 0.7 (MSVD); the default candidate languages leave them English."""
    texts = ["a woman makeup her face", "a hindi movie scene", "A dog is drinking water", "man making pancakes"]
    texts += ["Twin baby moose in sprinkler", "A Man Preparing carrot for side dish", "A couple dances."]
    checks = quality.description_checks(
        {"s": [(t, "English") for t in texts]}, "English", detect=quality.language_detector()
    )
    assert [k for k, c in checks.items() if c.wrong_language] == []
    everything = quality.language_detector(("af", "en", "pcm", "tl"))
    assert everything("a woman makeup her face")[0] == "pcm"  # what the restriction avoids


def test_language_detector_needs_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from ngrameval.errors import MissingDependencyError

    quality.language_detector.cache_clear()
    monkeypatch.setitem(sys.modules, "py3langid.langid", None)
    try:
        with pytest.raises(MissingDependencyError, match=r"pip install 'ngrameval\[langid\]'"):
            quality.language_detector()
    finally:
        quality.language_detector.cache_clear()


def test_language_rules_in_the_study(tmp_path: Path) -> None:
    rules = _paraphrase_store(tmp_path / "a").study.quality
    assert rules.language_check and rules.language_code == "en" and rules.language_confidence == 0.7
    custom = '[quality]\nlanguage_code = "de"\nlanguages = ["en", "fr"]\nlanguage_confidence = 0.9\n'
    rules = _paraphrase_store(tmp_path / "b", custom).study.quality
    assert (rules.language_code, rules.languages, rules.language_confidence) == ("de", ("en", "fr", "de"), 0.9)
    for table, message in [
        ('[quality]\nlanguage_code = "klingon"\n', "key 'language_code' is needed for the language check"),
        ('[quality]\nlanguages = ["English"]\n', "key 'languages' takes ISO 639-1 codes"),
        ("[quality]\nlanguage_min_words = 0\n", "key 'language_min_words' must be at least 1"),
        ("[quality]\nlanguage_check = 1\n", "key 'language_check' must be bool"),
    ]:
        with pytest.raises(StudyError) as err:
            _paraphrase_store(tmp_path / "c", table)
        assert message in str(err.value) and "[quality]" in str(err.value)
    path = write_study(tmp_path / "d")
    path.write_text(path.read_text().replace("[instructions]", 'language = "Klingon"\n[instructions]'))
    with pytest.raises(StudyError, match="ISO 639-1 code of 'Klingon'"):
        load_study(path)
    path.write_text(path.read_text() + "[quality]\nlanguage_check = false\n")
    assert not load_study(path).quality.language_check


def test_control_scores() -> None:
    gold = ["a cat is playing the piano", "a kitten plays a keyboard"]
    assert quality.control_score("a cat is playing the piano", gold, "bleu") == pytest.approx(1.0)
    assert quality.control_score("nice video", gold, "bleu") < 0.1 < quality.control_score("a cat plays", gold, "bleu")
    assert quality.control_score("", gold, "bleu") == 0.0
    keys = ["cat", "piano", "grand piano"]
    assert quality.control_score("A CAT plays the piano.", keys, "keywords") == pytest.approx(2 / 3)
    assert quality.control_score("a category of pianos", keys, "keywords") == 0.0  # whole words only
    with pytest.raises(ValueError, match="control metric must be one of bleu, keywords"):
        quality.control_score("x", gold, "meteor")


def test_attention_checks_and_qualification(tmp_path: Path) -> None:
    path = write_study(tmp_path)
    path.write_text(path.read_text() + '[quality]\ncontrol_metric = "keywords"\npass_mark = 0.5\nmin_controls = 3\n')
    (tmp_path / "stimuli.csv").write_text(
        "id,kind,src,start,end,text,control\n"
        "c1,text,,,,A cat is playing the piano.,cat | piano\n"
        "c2,text,,,,A man is slicing a tomato.,tomato|slicing|knife\n"
        "c3,text,,,,A dog runs on a beach.,dog|beach\n"
        "s1,text,,,,Two men are fighting.,\n"
    )
    st = load_study(path)
    assert st.controls_gold == {"c1": ("cat", "piano"), "c2": ("tomato", "slicing", "knife"), "c3": ("dog", "beach")}
    answers = {
        "careful": [("c1", "a cat plays piano"), ("c2", "someone is slicing a tomato"), ("s1", "men fight")],
        "careless": [("c1", "a video"), ("c2", "nice"), ("c3", "a dog on a beach")],
        "new": [("c1", "a cat on a piano")],
        "sloppy": [("c1", "music"), ("c2", "food")],
    }
    checks = quality.control_checks(answers, st.controls_gold, st.quality)
    assert checks["careful"] == quality.ControlCheck(2, 2, pytest.approx((1 + 2 / 3) / 2))  # s1 is no control
    assert (checks["careless"].controls, checks["careless"].passed) == (3, 1)
    decide = {a: quality.qualification(c, st.quality) for a, c in checks.items()}
    assert decide == {"careful": "undecided", "careless": "failed", "new": "undecided", "sloppy": "failed"}
    done = quality.ControlCheck(3, 2, 0.7)  # 2 of 3 >= pass_rate 0.66
    assert quality.qualification(done, st.quality) == "passed"
    strict = quality.Rules(min_controls=4, pass_rate=1.0)
    assert quality.qualification(quality.ControlCheck(1, 0, 0.0), strict) == "failed"  # can no longer pass
    assert quality.qualification(quality.ControlCheck(3, 3, 1.0), strict) == "undecided"
    assert quality.qualification(quality.ControlCheck(4, 4, 1.0), strict) == "passed"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[quality]\ncontrol_metric = "rouge"\n', "key 'control_metric' must be one of bleu, keywords"),
        ("[quality]\nmin_controls = 0\n", "key 'min_controls' must be at least 1"),
        ("[quality]\npass_rate = 2\n", "key 'pass_rate' must be in [0, 1]"),
        ("[quality]\npass_mark = -0.1\n", "key 'pass_mark' must be in [0, 1]"),
    ],
)
def test_control_rules_errors(tmp_path: Path, table: str, message: str) -> None:
    with pytest.raises(StudyError) as err:
        _paraphrase_store(tmp_path, table)
    assert message in str(err.value)


def test_control_column_errors(tmp_path: Path) -> None:
    path = write_study(tmp_path)
    (tmp_path / "stimuli.csv").write_text("id,kind,src,start,end,text,control\nc1,text,,,,A cat.,cat||piano\n")
    with pytest.raises(StudyError, match=r"stimuli\.csv:2: column 'control' has an empty answer"):
        load_study(path)
