"""LangBot plugin SDK, plugin runtime and tooling."""

__version__ = "0.8.0.dev0"
