"""The MCP adapter: the only package that imports the MCP SDK (REQ-ARCH-005)."""
