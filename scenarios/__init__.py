"""Built-in scenarios (TOML files), installed as the package ``universal.scenarios``."""
