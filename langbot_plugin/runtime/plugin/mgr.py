"""Where an installed plugin came from (the host stores it with the plugin's settings)."""

from __future__ import annotations

import enum

__all__ = ["PluginInstallSource"]


class PluginInstallSource(enum.Enum):
    """The ``install_source`` of ``install_plugin`` and of a plugin's settings."""

    LOCAL = "local"
    GITHUB = "github"
    MARKETPLACE = "marketplace"
    DEBUG = "debug"
