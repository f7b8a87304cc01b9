"""Application services: web_search, web_fetch and engine_status as plain async functions.

The protocol adapters depend on these services only (REQ-MAIN-002).
"""
