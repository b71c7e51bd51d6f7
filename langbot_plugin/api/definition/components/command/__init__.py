from langbot_plugin.api.definition.components.command.command import Command, Subcommand

__all__ = ["Command", "Subcommand"]
