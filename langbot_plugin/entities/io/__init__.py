"""Envelope scopes (:mod:`.context`), action names (:mod:`.actions.enums`) and call
errors (:mod:`.errors`) of the host-side library."""
