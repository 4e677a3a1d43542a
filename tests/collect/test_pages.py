"""What a crowd sees on the task pages (issue 27, item 7), through the test client: the server's answer to an
empty submit leads back to the task, the rate page names what it shows (``source_label``), DA has default
instructions, and an MTurk worker whose turkSubmitTo is missing or foreign is told what to do with their code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collect.collect_studies import write_study
from collect.test_app import TestClient, _field
from ngrameval.collect.app import create_app
from ngrameval.collect.store import Store
from ngrameval.collect.study import StudyError, load_study


def _client(path: Path, db_url: str | None = None) -> tuple[TestClient, Store]:
    store = Store(load_study(path), db_url)
    store.init()
    return TestClient(create_app(store), follow_redirects=True), store


def test_empty_submit_leads_back_to_the_task(tmp_path: Path, db_url: str) -> None:
    client, store = _client(write_study(tmp_path), db_url)
    page = client.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    assert re.search(r'<textarea id="description"[^>]* required', page)  # the page checks first
    form = {f: _field(page, f) for f in ("csrf", "token", "stimulus")}
    for text in ("", "   \n\t "):
        r = client.post("/task", data={**form, "description": text})
        assert r.status_code == 400 and "please write a description" in r.text  # the server checks too
        assert re.search(r'<a href="/task" id="back">', r.text)
    assert store.counts()["descriptions"] == 0
    r = client.get("/task")
    assert r.status_code == 200 and _field(r.text, "stimulus")


def test_rate_page_names_the_source(tmp_path: Path) -> None:
    path = write_study(tmp_path, "rate")
    client, _ = _client(path)
    page = client.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    assert "<strong>Reference:</strong>" in page and "Source:" not in page  # the default: a reference
    assert 'id="keys-hint"' in page and page.count('<fieldset class="likert" aria-describedby="keys-hint">') == 2
    path.write_text(
        path.read_text().replace('manifest = "items.csv"', 'manifest = "items.csv"\nsource_label = "Source"')
    )
    client, _ = _client(path)
    assert "<strong>Source:</strong>" in client.get("/start?PROLIFIC_PID=P2&STUDY_ID=S&SESSION_ID=X").text
    path.write_text(path.read_text().replace('source_label = "Source"', 'source_label = "  "'))
    with pytest.raises(StudyError, match=r"\[study\]: key 'source_label' must be 1\.\.64 characters"):
        load_study(path)


def test_paraphrase_page_says_what_to_paraphrase(tmp_path: Path) -> None:
    path = write_study(tmp_path)
    path.write_text(path.read_text().replace('kind = "describe"', 'kind = "paraphrase"'))
    (tmp_path / "stimuli.csv").write_text("id,kind,src,start,end,text\ns1,text,,,,The committee postponed it.\n")
    client, _ = _client(path)
    page = client.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    assert "Sentence to paraphrase:" in page and "Please write your paraphrase first" in page


def test_da_default_instructions_and_slider_value(tmp_path: Path) -> None:
    client, store = _client(write_study(tmp_path, "da"))
    assert not store.study.instructions
    page = client.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    assert 'id="default-instructions"' in page and "the left end (0) means not at all" in page
    assert '<output for="c_adequacy" id="value-adequacy">not moved yet</output>' in page
    assert "<strong>Reference:</strong>" in page
    home = client.get("/").text  # the MTurk preview and the home page show them too
    assert 'id="default-instructions"' in home


@pytest.mark.parametrize("submit_to", ["", "&turkSubmitTo=https://evil.example", "&turkSubmitTo=javascript:alert(1)"])
def test_mturk_worker_without_a_valid_submit_address_is_told(tmp_path: Path, submit_to: str) -> None:
    client, _ = _client(write_study(tmp_path))
    page = client.get(f"/start?workerId=W1&assignmentId=A1&hitId=H1{submit_to}").text
    while "completion code" not in page:
        form = {f: _field(page, f) for f in ("csrf", "token", "stimulus")}
        page = client.post("/task", data={**form, "description": "a man slices a tomato"}).text
    assert 'id="no-submit"' in page and "NGE-OK" in page and "Contact this Requester" in page
    assert "externalSubmit" not in page and "evil.example" not in page and "javascript:" not in page
    good = TestClient(client.app, follow_redirects=True)
    page = good.get("/start?workerId=W2&assignmentId=A2&hitId=H2&turkSubmitTo=https://workersandbox.mturk.com").text
    while "completion code" not in page:
        form = {f: _field(page, f) for f in ("csrf", "token", "stimulus")}
        page = good.post("/task", data={**form, "description": "a man slices a tomato"}).text
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in page and 'id="no-submit"' not in page
