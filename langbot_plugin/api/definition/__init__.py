"""What plugin authors subclass: the plugin class and its component kinds."""
