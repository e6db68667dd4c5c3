"""ft.keras.initializers (being written)."""
