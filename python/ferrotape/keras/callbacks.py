"""ft.keras.callbacks (being written)."""
