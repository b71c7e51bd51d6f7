"""Action names as enums, built from the action catalogue (:mod:`.enums`)."""
