"""ft.keras.optimizers (being written)."""
