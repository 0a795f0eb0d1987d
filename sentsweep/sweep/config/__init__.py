"""What a sweep is before it runs: its definition and protocol, its typed options, their help groups and checks."""
