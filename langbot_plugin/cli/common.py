"""What the author-facing commands share: the error type, exit codes and prompting.

Every command turns a :class:`CliError` into one ``lbp <command>: <message>`` line on
stderr and a non-zero exit code, so scripts can rely on ``$?``:

- ``USAGE`` (2): the command line, a name or the folder is wrong; fix the input.
- ``FAILURE`` (1): the input was fine but the work failed (network, server refusal).

This module imports only the standard library (it is loaded by ``--help`` paths).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing on --help paths
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = [
    "AUTHOR_RULE",
    "COMMAND_NAME_RULE",
    "COMPONENT_NAME_RULE",
    "FAILURE",
    "USAGE",
    "CliError",
    "Parser",
    "Prompter",
    "guarded",
    "one_name",
]

USAGE = 2
FAILURE = 1

#: Plugin author and plugin name: letters, digits, ``_`` and ``-`` (as the reference CLI).
AUTHOR_RULE = re.compile(r"^[a-zA-Z0-9_-]+$")
#: Component names: a lowercase letter, then lowercase letters, digits and ``_``.
COMPONENT_NAME_RULE = re.compile(r"^[a-z][0-9a-z_]*$")
#: A command's name may also use hyphens (``!check-in``).
COMMAND_NAME_RULE = re.compile(r"^[a-z][0-9a-z_-]*$")


class CliError(Exception):
    """A failure to report on one line; ``code`` becomes the exit status.

    ``lines`` holds several reasons (``lbp build`` lists every problem of a plugin);
    each is reported on a line of its own.
    """

    def __init__(self, message: str, code: int = USAGE, lines: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.lines = list(lines) or [message]


class Parser(argparse.ArgumentParser):
    """``argparse`` with its errors on one line, exit status ``USAGE``.

    ``lbp rt --ws-control-port 99999`` prints ``lbp rt: argument --ws-control-port:
    99999 is not a port (1-65535) (see 'lbp rt --help')`` instead of a usage block.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def one_name(positional: str | None, flag: str | None) -> str | None:
    """The name given as the positional argument or ``--name`` (both: the same one)."""
    if positional and flag and positional != flag:
        raise CliError(f"two different names given: {positional!r} and --name {flag!r}")
    return positional or flag


def guarded(prog: str, body: Callable[[], int]) -> int:
    """Run ``body``; report a :class:`CliError` (or an :class:`OSError`) on one line.

    Returns the exit status: 0 from ``body``, the error's code, or ``FAILURE``.
    """
    try:
        return body()
    except CliError as exc:
        sys.stderr.write("".join(f"{prog}: {line}\n" for line in exc.lines))
        return exc.code
    except OSError as exc:  # a file the command needed could not be read or written
        where = f": {exc.filename}" if exc.filename else ""
        sys.stderr.write(f"{prog}: {exc.strerror or exc}{where}\n")
        return FAILURE


Check = Callable[[str], str | None]  # returns an error text, or None when the answer is fine


class Prompter:
    """Asks for missing values, or refuses to when running non-interactively.

    Prompts go to stderr and answers are read from stdin one line each, so answers can
    be piped in (``printf 'me\\n...' | lbp init``). An invalid answer is explained and
    asked again; the end of stdin takes the default shown in brackets, and is an error
    naming the flag that would have avoided the question when there is none.
    """

    def __init__(self, prog: str, interactive: bool) -> None:
        self.prog = prog
        self.interactive = interactive

    def ask(
        self,
        label: str,
        flag: str,
        *,
        default: str | None = None,
        check: Check | None = None,
    ) -> str:
        if not self.interactive:
            if default is None:
                raise CliError(f"{flag} is required with --non-interactive")
            return default
        suffix = f" [{default}]" if default else ""
        while True:
            sys.stderr.write(f"{label}{suffix}: ")
            sys.stderr.flush()
            line = sys.stdin.readline()
            if not line:
                sys.stderr.write("\n")
                if default:  # the shown default is the answer, as the reference takes it
                    return default
                raise CliError(f"no answer for {label.lower()!r} (stdin closed); pass {flag}")
            answer = line.strip() or (default or "")
            if not answer:
                sys.stderr.write("  an answer is required\n")
                continue
            problem = check(answer) if check else None
            if problem is None:
                return answer
            sys.stderr.write(f"  {problem}\n")
