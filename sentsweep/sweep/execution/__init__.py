"""The run itself: the sweep and its stages on Ray Tune, their watches, interruptions, endings and kept models."""
