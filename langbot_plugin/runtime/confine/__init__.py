"""Plugin workers confined and limited (docs/security.md, "Confined plugin workers").

:mod:`.options` what the operator sets; :mod:`.confinement` the mode chosen at start and
each worker's launch; :mod:`.jail` the nsjail command line; :mod:`.cgroups` a worker's
cgroup; :mod:`.data_folders` its data folder and user id.
"""

from langbot_plugin.runtime.confine.confinement import (
    Confinement,
    ConfinementUnavailableError,
    Decision,
    Launch,
    ResourceExhaustedError,
    WorkerLaunch,
)
from langbot_plugin.runtime.confine.options import ConfinementOptions, WorkerLimits

__all__ = [
    "Confinement",
    "ConfinementOptions",
    "ConfinementUnavailableError",
    "Decision",
    "Launch",
    "ResourceExhaustedError",
    "WorkerLaunch",
    "WorkerLimits",
]
