"""Settlement: the identity, plan, receipts and typed failures that make a turn exactly-once."""
