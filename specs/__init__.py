"""refconv.specs (placeholder, replaced by the spec layer)."""
