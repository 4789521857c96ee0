"""The effect lens: read existing packets as request -> interpretation -> observation -> next."""
