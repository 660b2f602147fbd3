"""Reusable widgets. They render what they are given and post messages; they do no I/O.

May import `core/` and the domain packages' plain functions and records (prices, fallbacks);
never `storage/`, `keys/`, the app services or a screen.
"""
