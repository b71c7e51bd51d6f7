"""``NsjailBackend`` at the reference's path: a face over :mod:`box_runtime.backends.nsjail`.

See :mod:`langbot_plugin.box.backend` for how the Box's own backends appear here.
"""

from __future__ import annotations

import logging

from langbot_plugin.box.backend import BuiltinSandboxBackend

__all__ = ["NsjailBackend"]


class NsjailBackend(BuiltinSandboxBackend):
    """The nsjail backend; ``nsjail_bin`` becomes ``box.nsjail.binary``.

    ``base_dir`` is accepted for the reference's signature: session directories live
    under the Box's state directory.
    """

    core_name = "nsjail"
    name = "nsjail"
    execution_scoped_mounts = True

    def __init__(
        self, logger: logging.Logger, nsjail_bin: str = "nsjail", base_dir: str | None = None
    ) -> None:
        super().__init__(logger)
        del base_dir
        if nsjail_bin != "nsjail":
            self.section["binary"] = nsjail_bin
