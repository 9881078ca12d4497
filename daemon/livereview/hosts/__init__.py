"""Host adapters: each translates one host's REST API to and from the review model."""
