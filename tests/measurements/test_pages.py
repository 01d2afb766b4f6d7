"""The measurement pages, the results page's calibration box and acceptance downloads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from advisor.measurements.models import Measurement, RunCalibration
from advisor.scenarios.models import RunStatus, Scenario
from advisor.scenarios.services import scenario_submit
from tests.frontend.pdfread import pdf_text

DATA = Path(__file__).resolve().parent.parent / "data" / "nccl"
H100_2 = (DATA / "nvidia_h100_2x8_all_reduce_gcp_a3mega.txt").read_bytes()

TRAINING = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 32,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
}


def signed_in(db: Any, name: str = "ella.engineer") -> tuple[User, Client]:
    user = User.objects.create_user(name, password="correct-horse-battery")
    client = Client()
    client.force_login(user)
    return user, client


def finished_scenario(owner: User, run_tasks: Callable[[], Any]) -> Scenario:
    with run_tasks():
        run = scenario_submit(name="32 GPUs", inputs=TRAINING, owner=owner)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    return run.scenario


def test_upload_a_file_and_see_the_fit_chart(db: Any):
    _user, client = signed_in(db)
    response = client.post(
        "/measurements/",
        {
            "name": "A3 Mega pair",
            "customer": "Acme",
            "fabric": "roce",
            "file": SimpleUploadedFile("allreduce.txt", H100_2, content_type="text/plain"),
        },
    )
    m = Measurement.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/measurements/{m.pk}/"
    page = client.get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="fit-chart"' in html and 'id="fit-figure"' in html
    assert "measured: all_reduce, 16 GPUs" in html
    assert "<script>" not in html  # strict CSP: data only, drawn by static app.js
    assert 'id="fit-terms"' in html


def test_pasted_garbage_shows_the_line_it_could_not_read(db: Any):
    _user, client = signed_in(db)
    response = client.post("/measurements/", {"name": "oops", "text": "not a log\n"})
    assert response.status_code == 400
    assert "line 1:" in response.content.decode()
    assert Measurement.objects.count() == 0


def test_measurements_need_a_sign_in(client: Client):
    response = client.get("/measurements/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_stranger_cannot_open_a_measurement(db: Any):
    _owner, owner_client = signed_in(db, "olga.owner")
    owner_client.post("/measurements/", {"name": "mine", "text": H100_2.decode()})
    _stranger, stranger_client = signed_in(db, "stan.stranger")
    m = Measurement.objects.get()
    assert stranger_client.get(f"/measurements/{m.pk}/").status_code == 404


def test_results_page_calibrates_and_links_the_acceptance_plan(
    db: Any, run_tasks: Callable[[], Any]
):
    user, client = signed_in(db)
    client.post("/measurements/", {"name": "A3 pair", "text": H100_2.decode(), "fabric": "roce"})
    scenario = finished_scenario(user, run_tasks)
    page = client.get(f"/s/{scenario.pk}/").content.decode()
    assert 'id="calibrate-form"' in page
    assert (
        f'/s/{scenario.pk}/acceptance.md"' in page and f'/s/{scenario.pk}/acceptance.pdf"' in page
    )

    m = Measurement.objects.get()
    quoted_pdf = pdf_text(client.get(f"/s/{scenario.pk}/report.pdf").content)
    quoted_csv = client.get(f"/s/{scenario.pk}/bom.csv").content.decode()
    assert "Network model Default model (not calibrated with a measurement)" in quoted_pdf
    with run_tasks():
        response = client.post(f"/s/{scenario.pk}/calibrate", {"measurement": str(m.pk)})
    assert response.status_code == 302
    link = RunCalibration.objects.get(measurement=m)
    assert response["Location"] == f"/s/{scenario.pk}/?run={link.run_id}"
    # The calibrated run is its own, labelled run ...
    page = client.get(response["Location"]).content.decode()
    assert 'id="calibration-compare"' in page
    assert "Your measurement (" in page
    assert 'id="acceptance-graded"' in page
    assert "Calibrated with “A3 pair”" in page
    assert f'report.pdf?run={link.run_id}"' in page
    # ... and the scenario's quoted answer, its PDF and its CSV, do not change.
    page = client.get(f"/s/{scenario.pk}/").content.decode()
    assert 'id="calibration-compare"' not in page
    assert "Default model (not calibrated with a measurement)." in page
    assert pdf_text(client.get(f"/s/{scenario.pk}/report.pdf").content) == quoted_pdf
    assert client.get(f"/s/{scenario.pk}/bom.csv").content.decode() == quoted_csv
    side_pdf = pdf_text(client.get(f"/s/{scenario.pk}/report.pdf?run={link.run_id}").content)
    assert "Network model Calibrated with “A3 pair” (measured" in side_pdf

    # Chosen, the calibrated run is the quote, and every face says so; unchosen, it is not.
    chosen = client.post(f"/s/{scenario.pk}/quote-run", {"run": str(link.run_id), "choose": "1"})
    assert chosen.status_code == 302
    assert 'id="calibration-compare"' in client.get(f"/s/{scenario.pk}/").content.decode()
    quoted_now = pdf_text(client.get(f"/s/{scenario.pk}/report.pdf").content)
    assert "Network model Calibrated with “A3 pair”" in quoted_now
    csv_now = client.get(f"/s/{scenario.pk}/bom.csv").content.decode()
    assert "Calibrated with “A3 pair”" in csv_now.splitlines()[-1]
    client.post(f"/s/{scenario.pk}/quote-run", {"run": str(link.run_id), "choose": "0"})
    assert pdf_text(client.get(f"/s/{scenario.pk}/report.pdf").content) == quoted_pdf

    md = client.get(f"/s/{scenario.pk}/acceptance.md")
    assert md.status_code == 200 and md["Content-Type"].startswith("text/markdown")
    assert md.content.decode().startswith("# Acceptance test plan: 32 x NVIDIA H100")
    graded = client.get(f"/s/{scenario.pk}/acceptance.md?measurement={m.pk}").content.decode()
    assert "**Result:" in graded
    pdf = client.get(f"/s/{scenario.pk}/acceptance.pdf?measurement={m.pk}")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")


def test_calibrating_with_someone_elses_measurement_changes_nothing(
    db: Any, run_tasks: Callable[[], Any]
):
    _owner, owner_client = signed_in(db, "olga.owner")
    owner_client.post("/measurements/", {"name": "mine", "text": H100_2.decode()})
    user, client = signed_in(db, "cora.customer")
    scenario = finished_scenario(user, run_tasks)
    runs_before = scenario.runs.count()
    m = Measurement.objects.get()
    response = client.post(f"/s/{scenario.pk}/calibrate", {"measurement": str(m.pk)})
    assert response.status_code == 302
    assert scenario.runs.count() == runs_before
    assert RunCalibration.objects.count() == 0
