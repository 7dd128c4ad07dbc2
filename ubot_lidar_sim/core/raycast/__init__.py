"""raycast."""
