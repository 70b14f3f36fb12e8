"""Detector profiles and the pure screen classifier."""
