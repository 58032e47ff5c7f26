"""The demo lakehouse's own Python: its landing-data generator (`python -m demo.generate`)
and `make run`'s steps in one process (`python -m demo.run`). Not part of the engine's
wheel: an adopter's project never needs it."""
