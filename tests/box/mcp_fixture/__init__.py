"""Programs the Box tests run inside sandboxes (mounted read-only at /opt/fixture)."""
