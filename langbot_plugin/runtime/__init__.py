"""``lbp rt``: the plugin runtime daemon (control server, debug server, plugin links)."""
