"""What plugin authors import: entities, host proxies and component base classes.

The public module paths follow the reference 0.5 plugin API so existing plugins run
unchanged. This package imports nothing on its own; import the submodule you need
(``langbot_plugin.api.entities.builtin.agent_runner``, ``langbot_plugin.api.proxies``, ...).
"""
