"""ft.keras.datasets (being written)."""
