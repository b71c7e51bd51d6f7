"""Built-in entity families: platform, provider, command, agent_runner, rag, ..."""
