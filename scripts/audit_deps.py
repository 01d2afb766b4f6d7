"""`make audit-deps`: pip-audit over the hashed lock file, saying plainly what was audited.

pip-audit prints "No known vulnerabilities found" even when it could reach no vulnerability
database and skipped every package. This wrapper asks PyPI's JSON API first and OSV second,
counts the packages actually checked, and exits:
  0  every locked package was checked and none has a known vulnerability;
  1  known vulnerabilities (listed);
  2  no vulnerability database was reachable: nothing was audited (said in so many words);
  3  some packages could not be checked (listed), none of the others is vulnerable.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements-dev.lock"  # runtime and dev: everything make installs
PIP_AUDIT = Path(sys.executable).parent / "pip-audit"


def audit(service: str) -> tuple[list[dict[str, object]] | None, str]:
    """(dependencies as pip-audit reports them, or None if it failed; its messages)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        result = subprocess.run(
            [
                str(PIP_AUDIT),
                "--requirement",
                str(LOCK),
                "--require-hashes",
                "--disable-pip",
                "--vulnerability-service",
                service,
                "--progress-spinner",
                "off",
                "--format",
                "json",
                "--output",
                out.name,
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        try:
            report = json.loads(Path(out.name).read_text() or "{}")
        except json.JSONDecodeError:
            report = {}
    dependencies = report.get("dependencies")
    messages = (result.stdout + result.stderr).strip()
    if not isinstance(dependencies, list):
        return None, messages
    return dependencies, messages


def main() -> int:
    attempts: list[str] = []
    for service in ("pypi", "osv"):
        dependencies, messages = audit(service)
        if dependencies is None:
            attempts.append(f"{service}: pip-audit failed: {messages.splitlines()[-1:]}")
            continue
        checked = [d for d in dependencies if "skip_reason" not in d]
        skipped = [d for d in dependencies if "skip_reason" in d]
        if not checked:
            attempts.append(
                f"{service}: 0 of {len(dependencies)} locked packages could be looked up"
            )
            continue
        vulnerable = [d for d in checked if d.get("vulns")]
        print(
            f"pip-audit ({service}): {len(checked)} of {len(dependencies)} locked packages audited."
        )
        for dep in vulnerable:
            for vuln in dep["vulns"]:  # type: ignore[attr-defined]
                fixes = ", ".join(vuln.get("fix_versions") or []) or "no fix yet"
                print(
                    f"  VULNERABLE {dep['name']} {dep['version']}: {vuln['id']} (fixed in {fixes})"
                )
        for dep in skipped:
            print(f"  NOT AUDITED {dep['name']}: {dep['skip_reason']}")
        if vulnerable:
            return 1
        if skipped:
            return 3
        print("No known vulnerabilities in the locked dependencies.")
        return 0
    print("NO VULNERABILITY DATABASE REACHABLE: the dependencies were NOT audited.")
    for line in attempts:
        print(f"  {line}")
    print("  pip-audit needs PyPI's JSON API or api.osv.dev: run `make audit-deps` where one is.")
    return 2


if __name__ == "__main__":
    sys.exit(main())
