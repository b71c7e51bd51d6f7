"""Where the official LangBot runner plugins can be found on this machine.

Their public repositories (langbot-app/langbot-agent-runner and
langbot-app/langbot-local-agent) are read from bare git mirrors; set
``LBP_OFFICIAL_PLUGIN_MIRRORS`` to a folder holding ``<owner>+<name>/repo`` mirrors.
Tests that need them skip, naming what is missing, where they are absent.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

MIRRORS = Path(os.environ.get("LBP_OFFICIAL_PLUGIN_MIRRORS", "/work/.mirror"))
RUNNERS_REPO = MIRRORS / "langbot-app+langbot-agent-runner" / "repo"
LOCAL_AGENT_REPO = MIRRORS / "langbot-app+langbot-local-agent" / "repo"


def materialize(repo: Path, subdir: str, into: Path) -> Path:
    """Check out ``subdir`` of the mirror's HEAD into ``into`` (unmodified files)."""
    command = ["git", "-C", str(repo), "archive", "--format=tar", "HEAD"]
    if subdir:
        command.append(subdir)
    archive = subprocess.run(command, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / subdir if subdir else into
