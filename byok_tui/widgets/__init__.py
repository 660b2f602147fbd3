"""Reusable widgets. They render what they are given and post messages; they do no I/O."""
