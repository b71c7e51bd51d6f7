"""Host-side data of the action link (the released host imports ``entities.io``).

Not the plugin API's entities (those are :mod:`langbot_plugin.api.entities`): these are
the envelope scopes, the action-name enums and the call errors a host uses when it
talks to ``lbp rt`` and ``lbp box`` through :mod:`langbot_plugin.runtime.io`.
"""
