"""ft.keras.regularizers (being written)."""
