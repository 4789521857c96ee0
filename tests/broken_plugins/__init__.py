"""Deliberately broken host plugins: each breaks one conformance rule (`toy` is the correct one)."""
