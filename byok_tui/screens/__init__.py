"""Screens. They never do I/O themselves: workers call the app services (`app_data`) and
post messages; handlers touch widgets.

May import widgets, the app services' `app_data` and `chat_state`, and the domain packages'
plain functions and records; never `storage/`, `keys/` or `app_services.services`.
"""
