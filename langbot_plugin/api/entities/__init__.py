"""Plugin-facing data models (pydantic v2), at the reference SDK's module paths."""
