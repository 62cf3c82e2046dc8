"""Run the ``sh`` blocks of a document as written, on this machine.

A document is split into its ``sh`` code blocks, each under the heading it follows.
``Runbook.run_section`` runs the blocks of one heading line by line in bash, with
the shell's variables, exports and working directory carried from one block to the
next (as in the terminal the document addresses). Before running, fixed strings
are replaced (``/srv/powercontext`` by the checkout under test, ...); lines that
need the real host are skipped, but only lines named in ``not_run`` with a reason,
and every one of those must exist in the document, so the list cannot rot;
``systemctl ...`` lines go to a Python handler that acts on the unit file.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HEADING = re.compile(r"^(#{2,3}) (.+)$")


@dataclass(frozen=True)
class Block:
    heading: str
    lines: tuple[str, ...]


def sh_blocks(path: Path) -> list[Block]:
    """Every ```sh block of ``path`` with its heading; continuation lines joined."""
    blocks: list[Block] = []
    heading, lines, inside = "", list[str](), False
    for line in path.read_text().splitlines():
        if inside and line == "```":
            blocks.append(Block(heading, tuple(_joined(lines))))
            inside, lines = False, []
        elif inside:
            lines.append(line)
        elif line == "```sh":
            inside = True
        elif match := HEADING.match(line):
            heading = match.group(2)
    return blocks


def _joined(lines: list[str]) -> Iterator[str]:
    pending = ""
    for line in lines:
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        yield pending + line
        pending = ""


def substitute(text: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        text = text.replace(old, new)
    return text


class Runbook:
    """The blocks of one document, run in one bash 'terminal' that persists."""

    def __init__(
        self,
        document: Path,
        *,
        workdir: Path,
        env: dict[str, str],
        replacements: dict[str, str],
        not_run: dict[str, str],
        systemctl: Callable[[list[str]], None],
    ) -> None:
        self.blocks = sh_blocks(document)
        every_line = {line for block in self.blocks for line in block.lines}
        stale = sorted(set(not_run) - every_line)
        assert not stale, f"not_run names lines {document.name} does not have: {stale}"
        self.not_run = not_run
        self.replacements = replacements
        self.env = env
        self.systemctl = systemctl
        self.state = workdir / "shell-state"
        self.cwd = workdir
        self.log: list[str] = []

    def headings(self) -> list[str]:
        return list(dict.fromkeys(block.heading for block in self.blocks))

    def run_section(self, heading: str, *, block: int | None = None) -> None:
        """Run the blocks under ``heading`` (all, or the one at index ``block``)."""
        blocks = [each for each in self.blocks if each.heading == heading]
        assert blocks, f"no sh block under the heading {heading!r}"
        for each in blocks if block is None else [blocks[block]]:
            pending: list[str] = []
            for line in each.lines:
                if line in self.not_run:
                    continue
                if line.startswith("systemctl "):
                    self._bash(pending)
                    pending = []
                    self._systemctl(line)
                else:
                    pending.append(substitute(line, self.replacements))
            self._bash(pending)

    def variable(self, name: str) -> str:
        """The value of a shell variable the blocks set."""
        out = self._bash([f'printf %s "${{{name}}}"'], record=False)
        return out

    def _systemctl(self, line: str) -> None:
        self.log.append(f"$ {line}")
        self.systemctl(shlex.split(line)[1:])

    def _bash(self, lines: list[str], *, record: bool = True) -> str:
        if not lines:
            return ""
        script = "\n".join(
            [
                "set -euo pipefail",
                "set -a",  # every assignment exported, so the next block sees it
                f"[ -f {self.state} ] && . {self.state}",
                f"cd {shlex.quote(str(self.cwd))}",
                *lines,
                f"export -p > {self.state}.new && mv {self.state}.new {self.state}",
                f"pwd > {self.state}.cwd",
            ]
        )
        completed = subprocess.run(
            ["/bin/bash", "-c", script],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if record:
            self.log.extend(f"$ {line}" for line in lines)
            self.log.append(completed.stdout + completed.stderr)
        if completed.returncode != 0:
            pytest.fail(
                f"these lines failed ({completed.returncode}):\n"
                + "\n".join(lines)
                + f"\n--- stdout\n{completed.stdout}\n--- stderr\n{completed.stderr}"
            )
        self.cwd = Path((Path(f"{self.state}.cwd")).read_text().strip())
        return completed.stdout
