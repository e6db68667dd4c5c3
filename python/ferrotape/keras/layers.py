"""ft.keras.layers (being written)."""
