"""Platform adapter bases: :mod:`.adapter` and :mod:`.event_logger`."""
