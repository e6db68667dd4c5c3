"""ft.keras.losses (being written)."""
