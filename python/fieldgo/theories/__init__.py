"""Built-in theories, each written only with fieldgo's public API."""
