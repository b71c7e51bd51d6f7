from langbot_plugin.api.definition.plugin import BasePlugin


class SkillBox(BasePlugin):
    """Nothing to set up: the runner works through the run's model, tools and Box."""
