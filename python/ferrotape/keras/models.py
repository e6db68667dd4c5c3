"""ft.keras.models (being written)."""
