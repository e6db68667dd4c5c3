"""ft.keras.metrics (being written)."""
