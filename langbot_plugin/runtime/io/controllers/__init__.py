"""Controllers: a runtime spawned over stdio (:mod:`.stdio.client`), or dialled over
WebSocket (:mod:`.ws.client`)."""
