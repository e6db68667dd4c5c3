"""ft.keras.utils (being written)."""
