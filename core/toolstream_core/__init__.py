"""toolstream core placeholder."""
