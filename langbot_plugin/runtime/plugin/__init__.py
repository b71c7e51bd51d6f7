"""Plugin management names the host imports (:mod:`.mgr`)."""
