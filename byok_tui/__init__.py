"""byok-tui: a terminal chat client for LLM providers, bring your own key.

Importing this package has no side effects: no folders are created, no keys are read.
"""

__version__ = "0.1.0"
