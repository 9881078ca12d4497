"""The reply workflow: ack, context, LLM, post."""
