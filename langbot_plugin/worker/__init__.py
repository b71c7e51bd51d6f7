"""The plugin side: load a plugin folder and serve the runtime's calls into it."""
