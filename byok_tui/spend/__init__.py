"""What keys cost and may still spend: prices (`pricing`, from genai-prices), budgets and
free-tier quotas (`budgets`), the estimate before a send (`estimate`), usage reports
(`usage_report`), the request log (`request_log`) and a key's limits and balance as the user
reads them (`key_report`).

May import `core/`, `providers/` and `storage/`; never `chat/`, the app services or the UI.
"""
