"""Static files shipped with the package (a host looks here for the plugin-page SDK script)."""
