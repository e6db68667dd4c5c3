"""ft.keras.saving (being written)."""
