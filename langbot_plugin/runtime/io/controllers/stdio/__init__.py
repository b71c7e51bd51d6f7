"""Spawn a runtime and talk to it over its stdin/stdout (:mod:`.client`)."""
