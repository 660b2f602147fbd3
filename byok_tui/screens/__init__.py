"""Screens. They never do I/O themselves: workers call services and post messages."""
