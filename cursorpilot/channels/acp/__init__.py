"""The ACP channel: agents driven over the Agent Client Protocol (JSON-RPC over stdio)."""
