"""Decisions: agent scope, the seven quota states, the around layers and the should-run packet."""
