"""ft.keras.activations (being written)."""
