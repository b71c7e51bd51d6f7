"""Dial a runtime's WebSocket (:mod:`.client`)."""
