"""The reference's source distribution, pinned by version and SHA-256, unpacked.

``reference_tests()`` returns the directory of the unpacked PowerContext 1.4.1
sdist (its ``tests/`` are what the runner selects from). The archive is cached
under ``var/reference-sdist/``: downloaded once with ``pip download --no-binary
:all: --no-deps``, and refused - deleted, never unpacked - unless its SHA-256 is the
pinned one. Run as a script (``make .venv-ref-tests/.installed`` does) to fetch it.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

VERSION = "1.4.1"
SHA256 = "df7d462020bfc782d3fd60e704dc4176ec642c3d2d267b214eba414b671a18b9"
ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / "var" / "reference-sdist"
ARCHIVE = CACHE / f"powercontext-{VERSION}.tar.gz"
UNPACKED = CACHE / f"powercontext-{VERSION}"


class SdistMismatch(Exception):
    pass


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as archive:
        for block in iter(lambda: archive.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download() -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-binary",
            ":all:",
            "--no-deps",
            f"powercontext=={VERSION}",
            "--dest",
            str(CACHE),
        ],
        check=True,
    )


def reference_tests() -> Path:
    """The unpacked sdist's directory; downloads and unpacks it when missing."""
    marker = UNPACKED / ".verified"
    if marker.exists():
        return UNPACKED
    if not ARCHIVE.exists():
        _download()
    if (found := _sha256(ARCHIVE)) != SHA256:
        ARCHIVE.unlink()
        raise SdistMismatch(f"{ARCHIVE.name} has SHA-256 {found}, expected {SHA256}")
    shutil.rmtree(UNPACKED, ignore_errors=True)
    with tarfile.open(ARCHIVE) as archive:
        archive.extractall(CACHE, filter="data")
    marker.write_text(SHA256 + "\n")
    return UNPACKED


if __name__ == "__main__":
    print(reference_tests())
