"""The live what-if measured where a user sees it: in Chromium, from the change of a control to
its new figures on the page -> bench/whatif.json.

Started by `make bench-whatif` inside scripts/with_services.sh (throwaway PostgreSQL and
Redis). Serves the app as production would (gunicorn, DJANGO_ENV=production, DEBUG off,
plain HTTP on loopback), computes one finished scenario per workload (Llama 3 70B training
on 16 servers, Llama 3 8B serving on 2 servers) in this process, opens each result page in
Debian's Chromium (/usr/bin/chromium, or FABRIC_CHROMIUM; never downloaded) and makes a
fixed sequence of changes to the what-if card (fabric, NIC count and speed,
oversubscription, servers, batch or request rate), one at a time.

Each change is timed in the page: from the `input`/`change` event the control fires (the
user's action) to the frame after the card shows the answer to that change (its figures
written, `data-priced` moved on), so the figure includes the page's debounce, the POST, the
engine, the JSON and the DOM update. The server's own share (`engine_ms` of the answer) is
reported beside it. The machine's load average is recorded: on a busy machine the figures
are not those of a quiet one.

Goal (issue 24): p95 of the browser figure under 300 ms.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import secrets
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
OUT = Path(os.environ.get("WHATIF_OUT", REPO / "bench" / "whatif.json"))
CHROMIUM = os.environ.get("FABRIC_CHROMIUM", "/usr/bin/chromium")
GOAL_MS = 300.0
ROUNDS = 3

TRAINING = {
    "workload": "training",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 128,
    "training": {"global_batch_sequences": 512, "total_tokens": 1e11},
}
SERVING = {
    "workload": "inference",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "gpus_per_node": 8,
}
# (control name, value) in order; each one is a change the user makes and waits for.
COMMON = [
    ("fabric", "roce"),
    ("nics_per_node", "2"),
    ("nic_gbps", "200"),
    ("oversubscription", "2"),
    ("nic_gbps", "400"),
    ("nics_per_node", "8"),
    ("oversubscription", "1"),
]
# Typed values differ from round to round: each one is a size or load the server has not
# priced before (the choices from lists come round again, as a user's would).
TYPED = {
    "training": [
        [("servers", "24"), ("global_batch_sequences", "1024"), ("servers", "16")],
        [("servers", "20"), ("global_batch_sequences", "768"), ("servers", "12")],
        [("servers", "40"), ("global_batch_sequences", "1536"), ("servers", "32")],
    ],
    "serving": [
        [("servers", "4"), ("requests_per_s", "20"), ("servers", "2")],
        [("servers", "3"), ("requests_per_s", "10"), ("servers", "6")],
        [("servers", "8"), ("requests_per_s", "40"), ("servers", "5")],
    ],
}

# In the page: the time of the user's change, and of the frame after its answer is shown.
PROBE = """() => {
  const card = document.getElementById('whatif');
  window.__whatif = {started: null, shown: []};
  const mark = () => { window.__whatif.started = performance.now(); };
  card.addEventListener('input', mark, true);
  card.addEventListener('change', mark, true);
  new MutationObserver(() => {
    const started = window.__whatif.started;
    if (started === null) { return; }
    requestAnimationFrame(() => {
      window.__whatif.shown.push({
        ms: performance.now() - started,
        fetch_ms: Number(card.dataset.elapsedMs),
        priced: Number(card.dataset.priced),
      });
    });
  }).observe(card, {attributes: true, attributeFilter: ['data-priced']});
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def production_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_ENV="production",
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="127.0.0.1,localhost",
        API_PUBLIC_BASE_URL=os.environ.get("API_PUBLIC_BASE_URL", "http://127.0.0.1"),
        SECURE_SSL_REDIRECT="false",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="advisor.settings",
    )
    return env


def finished_scenarios() -> dict[str, str]:
    """One finished scenario per workload, computed here (no worker needed): their ids."""
    import django

    django.setup()
    from advisor.scenarios.models import RunStatus
    from advisor.scenarios.services import run_execute, scenario_submit

    ids = {}
    for kind, inputs in (("training", TRAINING), ("serving", SERVING)):
        run = scenario_submit(name=f"What-if bench: {kind}", inputs=inputs)
        run_execute(run_id=run.pk)  # its broker message is never consumed: nothing runs twice
        run.refresh_from_db()
        if run.status != RunStatus.SUCCEEDED:
            raise SystemExit(f"the {kind} scenario did not succeed: {run.status} {run.error}")
        ids[kind] = str(run.scenario_id)
    return ids


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    q = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else []
    p95 = q[94] if q else ordered[0]
    return {
        "p50": round(statistics.median(ordered), 1),
        "p95": round(p95, 1),
        "max": round(ordered[-1], 1),
    }


def measure(base_url: str, scenario_id: str, kind: str) -> list[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    samples: list[dict[str, Any]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page()
        page.goto(f"{base_url}/s/{scenario_id}/")
        page.wait_for_function("() => Number(document.getElementById('whatif').dataset.priced) > 0")
        page.evaluate(PROBE)
        for typed in TYPED[kind][:ROUNDS]:
            for name, value in [*COMMON, *typed]:
                before = int(page.evaluate("window.__whatif.shown.length"))
                selector = f"#whatif-form [name={name}]"
                picked = page.eval_on_selector(selector, "el => el.tagName") == "SELECT"
                if picked:
                    page.select_option(selector, value)
                else:
                    page.fill(selector, value)
                page.wait_for_function(f"() => window.__whatif.shown.length > {before}")
                # the debounce may have folded nothing else in: one change, one answer
                shown = page.evaluate("window.__whatif.shown[window.__whatif.shown.length - 1]")
                engine_ms = page.evaluate(
                    "() => { const m = /\\(([0-9.]+) ms in the engine\\)/"
                    ".exec(document.getElementById('whatif-status').textContent);"
                    " return m ? Number(m[1]) : null; }"
                )
                error = page.evaluate(
                    "() => Array.from(document.querySelectorAll('[data-error-for]'))"
                    ".map(e => e.textContent).join('')"
                )
                samples.append(
                    {
                        "control": name,
                        "how": "picked" if picked else "typed",
                        "value": value,
                        "browser_ms": round(shown["ms"], 1),
                        "fetch_ms": shown["fetch_ms"],
                        "engine_ms": engine_ms,
                        "error": error,
                    }
                )
        browser.close()
    return samples


def main() -> None:
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"Chromium not found at {CHROMIUM}: apt-get install chromium")
    env = production_env()
    os.environ.update(env)
    py = str(REPO / ".venv" / "bin" / "python")
    subprocess.run([py, "manage.py", "migrate", "--noinput", "-v", "0"], check=True, env=env)
    subprocess.run([py, "manage.py", "collectstatic", "--noinput", "-v", "0"], check=True, env=env)
    ids = finished_scenarios()

    port = free_port()
    workers = os.environ.get("WHATIF_GUNICORN_WORKERS", "2")
    server = subprocess.Popen(
        [
            str(REPO / ".venv" / "bin" / "gunicorn"),
            "advisor.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            workers,
            "--threads",
            "4",
            "--worker-class",
            "gthread",
            "--log-level",
            "warning",
        ],
        env=env,
        cwd=REPO,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{base_url}/healthz", timeout=2).ok:
                    break
            time.sleep(0.2)
        load_before = os.getloadavg()
        by_kind = {kind: measure(base_url, ids[kind], kind) for kind in ids}
        load_after = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=30)

    samples = [s for kind in by_kind.values() for s in kind]
    errors = [s for s in samples if s["error"]]
    browser = percentiles([s["browser_ms"] for s in samples])
    report = {
        "what": (
            "make bench-whatif: a what-if change on the result page, from the control's event "
            "to the frame after its figures are shown, in Chromium against gunicorn "
            f"({workers} workers x 4 threads, DJANGO_ENV=production) on loopback"
        ),
        "changes": len(samples),
        "rounds": ROUNDS,
        "browser_ms": browser,
        "fetch_ms": percentiles([float(s["fetch_ms"]) for s in samples]),
        "engine_ms": percentiles([float(s["engine_ms"] or 0.0) for s in samples]),
        "by_workload": {
            kind: percentiles([s["browser_ms"] for s in rows]) for kind, rows in by_kind.items()
        },
        "by_control": {
            how: percentiles([s["browser_ms"] for s in samples if s["how"] == how])
            for how in ("picked", "typed")
        },
        "note": (
            "typed: a number typed in a field, priced once typing pauses for the page's "
            "80 ms debounce (included); picked: a choice from a list, priced at once"
        ),
        "errors": len(errors),
        "goal": {"browser_p95_under_300_ms": browser["p95"] < GOAL_MS and not errors},
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1m_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        },
        "samples": samples,
    }
    OUT.write_text(json.dumps(report, indent=2) + "\n")
    print(
        json.dumps(
            {k: report[k] for k in ("browser_ms", "fetch_ms", "engine_ms", "goal", "machine")},
            indent=2,
        )
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
